"""The arena's pages in a real browser (Playwright over the system Chromium), against a real
``tacocat-arena serve`` and real bots over loopback: a live game drawn on the replay
viewer's board, then its replay; the leaderboard, a player's page and the organizer's desk
at a phone's width and a projector's; no console error, no external request.

Screenshots go to ``$TACOCAT_SCREENSHOTS`` when it is set (else the test's tmp folder).
"""

from __future__ import annotations

import os
import signal
import urllib.error
from pathlib import Path

import pytest
from arena_support import ArenaProcess, BotProc, add_players, start_arena, start_bot, wait_until
from browser_support import PageWatch, browser, browser_page  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow

WIDTHS = (375, 1280)


@pytest.fixture
def cleanup() -> object:
    """Processes registered here are killed at the end of the test, whatever happened."""
    started: list[BotProc | ArenaProcess] = []
    yield started
    for item in reversed(started):
        if isinstance(item, BotProc):
            item.kill()
        else:
            item.stop(signal.SIGKILL, timeout=10)


def shots_dir(tmp_path: Path) -> Path:
    """Where this test's screenshots go."""
    folder = Path(os.environ.get("TACOCAT_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_a_live_game_is_drawn_updates_without_a_reload_and_becomes_its_replay(
    tmp_path: Path,
    cleanup: list,
    browser_page: PageWatch,  # noqa: F811 (the fixture)
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "ben")
    arena = start_arena(folder, "--concurrency", "1", "--per-bot", "1", "--move-timeout", "5")
    cleanup.append(arena)
    cleanup.extend(start_bot(n, tokens[n], arena.address, tmp_path, delay=0.2) for n in tokens)

    def a_game_just_begun() -> str | None:
        for game in arena.json("/api/games"):
            if game["live"]:
                try:
                    state = arena.json(f"/api/games/{game['id']}")
                except urllib.error.HTTPError:  # it ended meanwhile (and is held)
                    continue
                if state.get("started") and len(state.get("events", [])) < 8:
                    return str(game["id"])
        return None

    game_id = wait_until(a_game_just_begun, 60, "a live game at its start")
    page = browser_page.page
    page.goto(f"{arena.web}/games/{game_id}")
    page.wait_for_selector("#board", timeout=20_000)
    page.evaluate("window.__loadedOnce = 'yes'")  # gone if the page reloads
    seen = []
    for _ in range(2):  # the board moves on twice, drawn from the stream
        before = int(page.locator("#step").get_attribute("data-index") or "0")
        page.wait_for_function(
            f"() => Number(document.getElementById('step').dataset.index) > {before}",
            timeout=30_000,
        )
        seen.append(int(page.locator("#step").get_attribute("data-index") or "0"))
        # Live: the hands are face down, only their sizes shown.
        assert page.locator("body.live").count() == 1
        assert page.locator("#hand-0").get_attribute("data-cards") == ""
    assert seen[0] < seen[1]
    shots = shots_dir(tmp_path)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        browser_page.screenshot(shots / f"live-{width}.png")
    # The game ends: the same page becomes the replay, hands shown, without a reload.
    page.wait_for_selector("body.ended", timeout=120_000)
    assert page.evaluate("window.__loadedOnce") == "yes"
    assert page.locator("#hand-0").get_attribute("data-cards") != ""
    assert (
        " won by " in page.locator("#outcome").inner_text()
        or "draw" in page.locator("#outcome").inner_text()
    )
    page.keyboard.press("Home")
    assert page.locator("#step").get_attribute("data-index") == "0"
    assert len(page.locator("#hand-0").get_attribute("data-cards").split()) >= 5
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        browser_page.screenshot(shots / f"replay-{width}.png")
    assert page.locator("nav a").inner_text() == "← back to the arena's leaderboard"
    browser_page.assert_clean()
