"""The README shows docs/report.png and docs/replay.png, and they are what
tests/readme_screenshots.py makes of the seeded demo today.

The files are checked as they are committed (PNG, the script's viewport, small); the pages are
checked by taking the same screenshots of a freshly played seeded demo into the test's tmp
folder (never docs/: regenerating is ``.venv/bin/python tests/readme_screenshots.py``).
"""

from __future__ import annotations

import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from browser_support import browser, file_url  # noqa: F401 (the fixture)
from readme_screenshots import REPLAY, REPLAY_GAME, SHOTS, VIEWPORT, Shot, take_shots

README = Path(__file__).resolve().parents[1] / "README.md"
SCRIPT = Path(__file__).parent / "readme_screenshots.py"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MAX_BYTES = 300_000


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk, which the format puts first."""
    head = path.read_bytes()[:24]
    assert head[:8] == PNG_MAGIC, f"{path.name} is not a PNG"
    assert head[12:16] == b"IHDR", f"{path.name}: no IHDR chunk first"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


@pytest.mark.parametrize("shot", SHOTS, ids=[s.file for s in SHOTS])
def test_the_readme_shows_each_screenshot_and_it_is_a_small_png_of_the_viewport(
    shot: Shot,
) -> None:
    images = re.findall(r"!\[[^\]]+\]\(([^)]+)\)", README.read_text(encoding="utf-8"))
    assert f"docs/{shot.file}" in images, images
    assert shot.path.is_file(), f"{shot.path} is missing: run tests/readme_screenshots.py"
    assert png_size(shot.path) == (VIEWPORT["width"], VIEWPORT["height"])
    assert 20_000 < shot.path.stat().st_size < MAX_BYTES  # a picture, not a blank page


@pytest.fixture(scope="module")
def seeded_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output folder of the seeded demo, played by the script in a process of its own."""
    folder = tmp_path_factory.mktemp("demo")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--play-only", str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return Path(done.stdout.strip())


@pytest.mark.slow
def test_the_screenshots_of_todays_pages_frame_what_the_committed_ones_do(
    browser,  # noqa: F811 (the fixture)
    seeded_demo: Path,
    tmp_path: Path,
) -> None:
    assert (seeded_demo / REPLAY.page).is_file(), f"no replay of {REPLAY_GAME}"
    # Each page clean, and what each picture frames (Shot.shows) whole inside it.
    taken = take_shots(browser, seeded_demo, tmp_path)
    for shot, path in taken.items():
        assert path.parent == tmp_path
        assert png_size(path) == png_size(shot.path), f"{shot.file}: regenerate it"
        assert path.stat().st_size < MAX_BYTES

    # The report's standings are the demo's three bots, and the replay is of a game they played.
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(file_url(seeded_demo / "report.html"))
        bots = page.eval_on_selector_all(
            "#standings-table tbody tr", "rows => rows.map(r => r.cells[1].textContent)"
        )
        assert sorted(bots) == ["greedy", "random", "search"]
        links = page.eval_on_selector_all(
            "#games-table a", "a => a.map(x => x.getAttribute('href'))"
        )
        assert REPLAY.page in links
    finally:
        context.close()
