"""A knockout run end to end (real bot processes over loopback), and its bracket in
report.html as a browser shows it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from browser_support import file_url
from notify_support import endpoint
from verify_support import assert_verifies

pytestmark = pytest.mark.slow

#: Where the docs' screenshot comes from (TACOCAT_DOCS_SCREENSHOTS=1 writes it).
DOCS_PNG = Path(__file__).resolve().parents[1] / "docs" / "knockout.png"


def test_a_knockouts_bracket_renders_in_the_report(browser_page, tmp_path: Path) -> None:
    bots = {
        "random": "builtin:random?seed=3",
        "greedy": "builtin:greedy",
        "search": "builtin:search?budget=20&seed=1",
        "greedy-eps": "builtin:greedy?epsilon=0.5&seed=2",
        "random-2": "builtin:random?seed=4",
    }
    lines = ['name = "Knockout cup"', "games = 2", "seed = 77", 'format = "knockout"']
    lines += ["extra_pairs = 2", 'out = "out"', "move_timeout = 10.0"]
    for name, command in bots.items():
        lines += ["", "[[bots]]", f'name = "{name}"', f'command = "{command}"']
    (tmp_path / "cup.toml").write_text("\n".join(lines) + "\n")
    with endpoint([500]) as hook:  # --notify: told once it is over, the first POST refused
        command = [sys.executable, "-m", "tacocat_arena.cli", "run", str(tmp_path / "cup.toml")]
        done = subprocess.run(
            [*command, "-q", "--notify", hook.url],
            cwd=tmp_path,
            env=dict(os.environ, COLUMNS="300"),
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "out"
    bracket = json.loads((out / "results.json").read_text())["knockout"]
    assert f"Champion: {bracket['champion']}" in done.stdout
    assert len(hook.bodies) == 2 and "attempt 1 of 3 failed (HTTP 500)" in done.stdout
    told = hook.bodies[-1]
    assert told["champion"] == bracket["champion"] and told["format"] == "knockout"
    assert told["complete"] and told["results"] == str((out / "results.json").resolve())
    assert [len(matches) for matches in bracket["rounds"]] == [4, 2, 1]
    assert_verifies(out)  # the bracket re-derived from the games

    page = browser_page.page
    page.goto(file_url(out / "report.html"))
    names = page.eval_on_selector_all(".bracket-round h3", "hs => hs.map(h => h.textContent)")
    assert names == ["Quarter-finals", "Semi-finals", "Final", "Champion"]
    shown = page.eval_on_selector_all(
        "table.bracket-match",
        "ms => ms.map(m => [m.dataset.round, m.dataset.slot,"
        " m.querySelector('strong')?.textContent])",
    )
    expected = [
        [str(number), str(slot), match["winner"]]
        for number, matches in enumerate(bracket["rounds"], start=1)
        for slot, match in enumerate(matches)
    ]
    assert shown == expected
    assert page.text_content("#champion") == bracket["champion"]
    byes = [m for m in bracket["rounds"][0] if m["low"] is None]
    assert len(byes) == 3 and page.locator("table.bracket-match em", has_text="bye").count() == 3
    # The bracket's rounds sit side by side, left to right.
    boxes = [page.locator(".bracket-round").nth(i).bounding_box() for i in range(4)]
    assert all(a["x"] < b["x"] for a, b in zip(boxes, boxes[1:], strict=False))
    shot = browser_page.screenshot(tmp_path / "knockout.png", full_page=False)
    page.locator("#bracket").scroll_into_view_if_needed()
    page.locator("#bracket-rounds").screenshot(path=str(shot))
    if os.environ.get("TACOCAT_DOCS_SCREENSHOTS"):
        shutil.copy(shot, DOCS_PNG)
    browser_page.assert_clean()
