"""The README's two screenshots, docs/report.png and docs/replay.png, and how they are made.

Regenerate them (after a change to the report or the replay page) with::

    .venv/bin/python tests/readme_screenshots.py

It plays the demo tournament seeded throughout (the config's seed, a fixed deal secret, seeded
bots, one game at a time, so the same games every time), opens its report.html and one replay
from ``file://`` in the tests' headless Chromium (tests/browser_support.py) at a fixed
viewport, and writes the PNGs into docs/.  The regular test run never writes there:
tests/test_readme_screenshots.py checks that the README shows files that exist, have this
viewport's size, and that the pages still hold what the pictures frame.

``python tests/readme_screenshots.py --play-only FOLDER`` only plays the seeded demo into
FOLDER (the test does that in a process of its own: Playwright's sync API and the
tournament's ``asyncio.run`` do not share a process well).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tacocat_arena.report.outputs import write_outputs
from tacocat_arena.tournament.config import load_config
from tacocat_arena.tournament.games_log import GAMES_FILE, GamesLog
from tacocat_arena.tournament.runner import run_tournament
from tacocat_arena.tournament.storage import TournamentStore

if TYPE_CHECKING:
    from playwright.sync_api import Browser

DOCS = Path(__file__).resolve().parents[1] / "docs"

#: Every screenshot is one viewport of this size: wide enough for the standings table and the
#: replay's board, and small enough files (about 150 KB each) for a repository.
VIEWPORT = {"width": 1200, "height": 900}

#: The demo's bots (demo.toml), each seeded; one game at a time, so that each bot process sees
#: its games in the plan's order and draws the same random numbers.
SEEDED_BOTS = (
    "random=builtin:random?seed=2026",
    "greedy=builtin:greedy?seed=2026",
    "search=builtin:search?seed=2026",
)
#: The deal secret (drawn at random for a real tournament: see tournament/storage.py).
DEAL_SECRET = "readme-screenshots-2026"
#: The game whose replay is shown, and how far into its events.
REPLAY_GAME = "search-greedy-d0"
REPLAY_FRACTION = 0.4


@dataclass(frozen=True)
class Shot:
    """One screenshot: its file in docs/, the page of the demo's output folder it shows, the
    element scrolled to the top of the viewport, and the elements the picture must hold whole
    (a page that grows above them moves them out of the frame: the shot then fails)."""

    file: str
    page: str
    top: str
    shows: tuple[str, ...]

    @property
    def path(self) -> Path:
        return DOCS / self.file


REPORT = Shot("report.png", "report.html", "#standings", ("#standings-table", "#elo-plot"))
REPLAY = Shot(
    "replay.png",
    f"replays/{REPLAY_GAME}.html",
    "h1",
    (".controls", "#board", "#event-text", "#seat-0", "#seat-1", "#discards"),
)
SHOTS = (REPORT, REPLAY)


def play_seeded_demo(folder: Path) -> Path:
    """Play the seeded demo into ``folder``/tacocat-results; return that output folder."""
    out = folder / "tacocat-results"
    config = load_config(None, {"out": out, "concurrency": 1}, SEEDED_BOTS)
    store = TournamentStore(config.out)
    try:
        store.claim(config.fingerprint(), resume=False)
        store.adopt_secret(DEAL_SECRET)
        store.on_commit.append(GamesLog(config.out / GAMES_FILE, store).add)
        outcome = asyncio.run(run_tournament(config, store))
        write_outputs(config, store, complete=True, planned=outcome.planned)
    finally:
        store.close()
    return out


def take_shots(browser: Browser, out: Path, into: Path) -> dict[Shot, Path]:
    """Screenshot each of SHOTS from the output folder ``out``; the PNGs go into ``into``."""
    from browser_support import file_url, watch_page

    taken: dict[Shot, Path] = {}
    context = browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
    try:
        for shot in SHOTS:
            watch = watch_page(context.new_page())
            page = watch.page
            page.goto(file_url(out / shot.page))
            if shot is REPLAY:
                page.wait_for_selector("#step[data-index='0']")
                steps = page.eval_on_selector("#log", "log => log.children.length")
                target = int(steps * REPLAY_FRACTION)
                for _ in range(target):
                    page.keyboard.press("ArrowRight")
                page.wait_for_selector(f"#step[data-index='{target}']")
            page.eval_on_selector(shot.top, "e => e.scrollIntoView({block: 'start'})")
            page.evaluate("window.scrollBy(0, -16)")  # a margin above the heading
            for element in shot.shows:
                box = page.locator(element).bounding_box()
                if box is None or box["y"] < 0 or box["y"] + box["height"] > VIEWPORT["height"]:
                    raise AssertionError(f"{shot.file}: {element} is not inside the picture")
            watch.assert_clean()
            taken[shot] = watch.screenshot(into / shot.file, full_page=False)
            page.close()
    finally:
        context.close()
    return taken


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--play-only", type=Path, metavar="FOLDER", help="only play the demo")
    args = parser.parse_args(argv)
    if args.play_only is not None:
        print(play_seeded_demo(args.play_only))
        return
    from browser_support import browser_skip_reason, launch_browser

    reason = browser_skip_reason()
    if reason is not None:
        sys.exit(f"cannot take the screenshots: {reason}")
    with tempfile.TemporaryDirectory() as folder:
        out = play_seeded_demo(Path(folder))
        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            browser = launch_browser(playwright)
            try:
                for path in take_shots(browser, out, DOCS).values():
                    print(f"{path}: {path.stat().st_size:,} bytes")
            finally:
                browser.close()


if __name__ == "__main__":
    main(sys.argv[1:])
