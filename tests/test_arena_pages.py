"""The arena's pages in a real browser (Playwright over the system Chromium), against a real
``tacocat-arena serve`` and real bots over loopback: a live game drawn on the replay
viewer's board, then its replay; the leaderboard, a player's page and the organizer's desk
at a phone's width and a projector's; no console error, no external request.

Screenshots go to ``$TACOCAT_SCREENSHOTS`` when it is set (else the test's tmp folder).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from arena_support import (
    ArenaProcess,
    BotProc,
    add_players,
    games_of,
    start_arena,
    start_bot,
    wait_until,
)
from a11y_support import serious_violations
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


def look(watch: PageWatch, shots: Path, name: str, axe: str) -> None:
    """At each width: a screenshot, and the accessibility audit with no serious violation."""
    for width in WIDTHS:
        watch.page.set_viewport_size({"width": width, "height": 900})
        watch.screenshot(shots / f"{name}-{width}.png")
        found = serious_violations(watch.page, axe)
        assert not found, f"{name} at {width} px:\n" + "\n".join(found)


def test_a_live_game_is_drawn_updates_without_a_reload_and_becomes_its_replay(
    tmp_path: Path,
    cleanup: list,
    browser_page: PageWatch,  # noqa: F811 (the fixture)
    axe_source: str,
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
                # (an ended game's spectator state has no board and no events left)
                if state.get("board") and len(state.get("events", [])) < 8:
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
    look(browser_page, shots, "live", axe_source)
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
    look(browser_page, shots, "replay", axe_source)
    assert page.locator("nav a").inner_text() == "← back to the arena's leaderboard"
    browser_page.assert_clean()


def _post(arena: ArenaProcess, path: str, token: str, body: dict | None = None) -> int:
    request = urllib.request.Request(
        arena.web + path,
        data=json.dumps(body or {}).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return int(response.status)


def _stored_games(folder: Path) -> int:
    with sqlite3.connect(folder / "arena.sqlite") as db:
        return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])


def test_the_leaderboard_counts_add_up_shows_each_status_and_sorts(
    tmp_path: Path,
    cleanup: list,
    browser_page: PageWatch,  # noqa: F811 (the fixture)
    axe_source: str,
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "ben", "cat", "dan")  # dan never connects
    arena = start_arena(folder, "--concurrency", "2")
    cleanup.append(arena)
    organizer = (folder / "organizer.token").read_text().strip()
    cleanup.extend(start_bot(n, tokens[n], arena.address, tmp_path) for n in ("ann", "ben", "cat"))
    wait_until(lambda: games_of(arena).get("cat", 0) >= 4, 60, "cat's games")
    assert _post(arena, "/api/players/cat/revoke", organizer) == 200
    assert _post(arena, "/api/pause", organizer) == 200
    wait_until(lambda: arena.json("/api/status")["live"] == 0, 60, "the games in flight to end")
    page = browser_page.page

    def header_games() -> int:
        page.goto(arena.web + "/")
        return int(page.locator("#leaderboard .counts").get_attribute("data-games") or "-1")

    # Once the standings are refitted the header, the rows and the store agree.
    wait_until(lambda: header_games() == _stored_games(folder), 30, "the refit")
    rows = arena.json("/api/leaderboard")
    header = header_games()
    assert header == sum(row["games"] for row in rows) // 2 == _stored_games(folder) > 0
    shown = {
        tr.get_attribute("data-bot"): int(tr.locator("td.games").inner_text())
        for tr in page.locator("#leaderboard tbody tr").all()
    }
    assert sum(shown.values()) == 2 * header
    for row in rows:
        assert row["wins"] + row["losses"] + row["draws"] == row["games"], row
    status = {r["bot"]: r["status"] for r in rows}
    assert status == {"ann": "connected", "ben": "connected", "cat": "revoked", "dan": "away"}
    assert page.locator("tr[data-bot='cat'] .badge").inner_text() == "revoked"
    # Sorting: by games, most first, then by name (A to Z), from the keyboard too.
    page.locator("#leaderboard th:has-text('Games') button").click()
    order = [tr.get_attribute("data-bot") for tr in page.locator("#leaderboard tbody tr").all()]
    assert [shown[b] for b in order] == sorted(shown.values(), reverse=True)
    page.locator("#leaderboard th:has-text('Bot') button").focus()
    page.keyboard.press("Enter")
    order = [tr.get_attribute("data-bot") for tr in page.locator("#leaderboard tbody tr").all()]
    assert order == sorted(order)
    assert page.locator("#leaderboard tr[data-bot='ann'] td.bar svg line").count() == 1
    look(browser_page, shots_dir(tmp_path), "leaderboard", axe_source)
    browser_page.assert_clean()
