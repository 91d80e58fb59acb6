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
from a11y_support import serious_violations
from arena_support import (
    ArenaProcess,
    BotProc,
    add_players,
    games_of,
    start_arena,
    start_bot,
    start_bots,
    submitted,
    wait_until,
)
from browser_support import PageWatch, browser, browser_page  # noqa: F401 (fixtures)

from tacocat_arena.launch.sandbox import bwrap_path

pytestmark = pytest.mark.slow

WIDTHS = (375, 1280)


@pytest.fixture
def cleanup() -> object:
    """Processes registered here are stopped at the end of the test, whatever happened (an
    arena by SIGTERM: a SIGKILL would leave its hosted workers holding its output open)."""
    started: list[BotProc | ArenaProcess] = []
    yield started
    for item in reversed(started):
        if isinstance(item, BotProc):
            item.kill()
        else:
            item.stop(signal.SIGTERM, timeout=20)


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
    cleanup.extend(start_bots(tokens, arena.address, tmp_path, delay=0.2))

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
    # It opens on the newest step, and follows the game from there.
    # Both read in one turn of the page's loop: the stream may draw a step between two reads.
    total, index = page.evaluate(
        "() => [document.querySelectorAll('#log li').length,"
        " document.getElementById('step').dataset.index]"
    )
    assert index == str(total - 1)
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
    cleanup.extend(start_bots(tokens, arena.address, tmp_path, names=("ann", "ben", "cat")))
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
    # The bot page, and the page of a game that does not exist, pass the same audit.
    page.goto(arena.web + "/bots/ann")
    look(browser_page, shots_dir(tmp_path), "bot", axe_source)
    browser_page.assert_clean()
    page.goto(arena.web + "/games/no-such-game")
    look(browser_page, shots_dir(tmp_path), "missing", axe_source)
    # Its only console line is the browser's own note of the 404 status.
    assert all("404" in line for line in browser_page.console_errors), browser_page.problems()


REPO = Path(__file__).resolve().parent.parent
GREEDY = REPO / "example_bots" / "packages" / "python-greedy"
RANDOM = REPO / "example_bots" / "packages" / "python-random"


def _games(arena: ArenaProcess, bot: str) -> int:
    """The bot's games in the standings (refitted at most once a second, after the games
    themselves are counted): the charts of the player page come from them."""
    return next((r["games"] for r in arena.json("/api/leaderboard") if r["bot"] == bot), 0)


@pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap (bwrap) cannot sandbox here")
def test_the_desk_and_a_player_page_with_two_versions(
    tmp_path: Path,
    cleanup: list,
    browser_page: PageWatch,  # noqa: F811 (the fixture)
    axe_source: str,
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "alice", "bob")
    arena = start_arena(folder, "--workers", "1", "--probation", "0")
    cleanup.append(arena)
    # A refused connection, then a restart: the desk still lists it (it is in the store).
    intruder = start_bot("alice", "tca_not-the-token", arena.address, tmp_path)
    cleanup.append(intruder)
    wait_until(lambda: arena.json("/api/connections")["failures"], 30, "the refusal")
    intruder.kill()
    arena.stop(signal.SIGTERM)
    arena = start_arena(folder, "--workers", "1", "--probation", "0")
    cleanup.append(arena)
    organizer = (folder / "organizer.token").read_text().strip()
    desk = urllib.request.Request(
        arena.web + "/api/admin", headers={"Authorization": f"Bearer {organizer}"}
    )
    with urllib.request.urlopen(desk, timeout=10) as response:
        refused = json.loads(response.read())["failures"]
    assert [f["bot"] for f in refused] == ["alice"], refused
    assert arena.status("/api/admin") == 401
    # Two versions of alice's bot (and one of bob's to play them); a rejected upload.
    author = tmp_path / "author"
    author.mkdir()
    assert "alice v1: active" in submitted(GREEDY, arena, tokens["alice"], author)
    assert "bob v1: active" in submitted(RANDOM, arena, tokens["bob"], author)
    wait_until(lambda: _games(arena, "alice@v1") >= 2, 90, "alice v1's games")
    assert "alice v2: active" in submitted(RANDOM, arena, tokens["alice"], author)
    wait_until(lambda: _games(arena, "alice@v2") >= 2, 90, "alice v2's games")
    broken = urllib.request.Request(
        arena.web + "/api/submissions", data=b"not an archive", method="POST",
        headers={"Authorization": f"Bearer {tokens['bob']}"},
    )  # fmt: skip
    with pytest.raises(urllib.error.HTTPError) as refusal:
        urllib.request.urlopen(broken, timeout=30)
    assert refusal.value.code == 422
    shots = shots_dir(tmp_path)
    page = browser_page.page

    page.goto(arena.web + "/players/alice")
    rows = page.locator("#versions-table tbody tr")
    assert rows.count() == 2
    assert page.locator("#v1 .badge").inner_text() == "retired"
    assert page.locator("#v2 .badge").inner_text() == "active"
    for number in (1, 2):
        chart = page.locator(f"#v{number} svg.chart")
        assert chart.count() == 1
        titles = chart.locator("text.title").all_text_contents()
        assert titles == [f"games played by alice@v{number}", "rating (Elo, band: 95% interval)"]
    # The gate's log is its owner's (issue 34.8): the page says where to read it.
    assert page.locator("#v2 pre").count() == 0
    assert "shown to the player alone" in page.locator("#v2").inner_text()
    look(browser_page, shots, "player", axe_source)

    page.goto(arena.web + "/admin")
    page.fill("#token", "tca_wrong")
    page.press("#token", "Enter")
    page.wait_for_function("() => document.getElementById('desk-message').textContent !== ''")
    assert "not the organizer's token" in page.locator("#desk-message").inner_text()
    # Chromium notes the refused request (401) in the console; that one is expected.
    assert all("401" in e for e in browser_page.console_errors), browser_page.console_errors
    browser_page.console_errors.clear()
    page.fill("#token", organizer)
    page.press("#token", "Enter")
    page.wait_for_selector("#desk:not([hidden]) #players")
    assert page.locator("#players tr[data-player='alice']").count() == 1
    assert "rejected" in page.locator("#submissions").inner_text()
    assert "alice" in page.locator("#refused").inner_text()
    page.fill("#new-name", "carol")
    page.press("#new-name", "Enter")
    page.wait_for_selector("#token-shown")
    assert page.locator("#token-shown").inner_text().startswith("tca_")
    page.wait_for_selector("#players tr[data-player='carol']")
    page.once("dialog", lambda dialog: dialog.accept())  # Revoke asks first
    page.locator("button[data-action='revoke'][data-name='carol']").click()
    page.wait_for_selector("#players tr[data-player='carol'] .badge.revoked")
    page.locator("button[data-action='pause']").click()
    page.wait_for_selector("button[data-action='resume']")
    assert arena.json("/api/status")["paused"] is True
    look(browser_page, shots, "desk", axe_source)
    page.locator("button[data-action='resume']").click()
    page.wait_for_selector("button[data-action='pause']")
    browser_page.assert_clean()
