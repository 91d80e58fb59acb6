"""The arena's pages as spectators and organizers use them, in a real browser (Playwright over
the system Chromium) against a real ``tacocat-arena serve`` and real bots over loopback:

- a live game's board says whose decision is pending, with its seat and its clock counting
  down, from the referee's own request (its deadline comes with the stream's state);
- the page stays where the reader put it: ten live updates, or ten steps of a replay at a
  phone's width, move neither the window's scroll nor the board;
- bots go by their public names: while a hosted version's twin instance (``alice@v1~B``)
  plays, no page's text or title names it, and the leaderboard has one row per ladder entry;
- at 375 px the leaderboard's and the desk's priority columns are on screen, the rest behind
  a toggle; Revoke asks first; what the organizer types in "Add a player" survives the
  desk's refreshes.

Screenshots go to ``$TACOCAT_SCREENSHOTS`` when it is set (else the test's tmp folder); the
live board's at 1280 and 375 px are docs/arena-live-1280.png and docs/arena-live-375.png.
"""

from __future__ import annotations

import os
import signal
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from arena_support import (
    ArenaProcess,
    BotProc,
    add_players,
    start_arena,
    start_bot,
    start_bots,
    submitted,
    wait_until,
)
from browser_support import PageWatch, browser, browser_page  # noqa: F401 (fixtures)

from tacocat_arena.arena.hosted import HOSTED_DIR
from tacocat_arena.launch.sandbox import bwrap_path

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
GREEDY = REPO / "example_bots" / "packages" / "python-greedy"
RANDOM = REPO / "example_bots" / "packages" / "python-random"
#: Live updates the scroll test sits through.
UPDATES = 10


@pytest.fixture
def cleanup() -> object:
    """Processes registered here are stopped at the end of the test, whatever happened."""
    started: list[BotProc | ArenaProcess] = []
    yield started
    for item in reversed(started):
        if isinstance(item, BotProc):
            item.kill()
        else:
            item.stop(signal.SIGTERM, timeout=20)


def shots_dir(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("TACOCAT_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def a_game_just_begun(arena: ArenaProcess, most_events: int = 8) -> str | None:
    """A live game with a board and at most ``most_events`` events so far."""
    for game in arena.json("/api/games"):
        if game["live"]:
            try:
                state = arena.json(f"/api/games/{game['id']}")
            except urllib.error.HTTPError:  # it ended meanwhile (and is held)
                continue
            if state.get("board") and len(state.get("events", [])) <= most_events:
                return str(game["id"])
    return None


def where(page: Any) -> tuple[float, float]:
    """The window's scroll and the board's top on the screen."""
    return page.evaluate(
        "() => [window.scrollY, document.getElementById('board').getBoundingClientRect().top]"
    )


def test_the_live_board_says_whose_decision_is_pending_and_stays_where_the_reader_put_it(
    tmp_path: Path,
    cleanup: list,
    browser_page: PageWatch,  # noqa: F811 (the fixture)
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "ben")
    arena = start_arena(folder, "--concurrency", "1", "--per-bot", "1", "--move-timeout", "5")
    cleanup.append(arena)
    cleanup.extend(start_bots(tokens, arena.address, tmp_path, delay=0.25))
    # The stream's state carries the pending decision and its deadline (server data).
    game_id = wait_until(lambda: a_game_just_begun(arena), 60, "a live game at its start")

    def pending_now() -> list[dict[str, Any]] | None:
        try:
            return arena.json(f"/api/games/{game_id}").get("pending") or None
        except urllib.error.HTTPError:
            return None

    pending = wait_until(pending_now, 30, "a pending decision in the game's state")
    for decision in pending:
        assert decision["seat"] in (0, 1)
        assert decision["bot"] in ("ann", "ben")
        assert decision["kind"] in ("replace", "duel", "attack", "defend")
        assert decision["allowance_ms"] == 5000
        assert decision["deadline_at"] > decision["asked_at"]

    page = browser_page.page
    page.set_viewport_size({"width": 375, "height": 640})
    game_id = wait_until(lambda: a_game_just_begun(arena), 60, "a live game at its start")
    page.goto(f"{arena.web}/games/{game_id}")
    page.wait_for_selector("#board")
    # Whose decision: its bot, its seat and a clock, in the line above the board and in the
    # seat's box.
    page.wait_for_function("() => document.getElementById('pending').dataset.seats !== ''")
    # One reading, in one turn of the page's loop: the game moves on between two reads.
    seats, text, waiting, clocks, first = page.evaluate(
        "() => { const pending = document.getElementById('pending');"
        " return [pending.dataset.seats, pending.innerText,"
        " [0, 1].map(s => document.querySelector(`#seat-${s}.waiting`) !== null),"
        " [0, 1].map(s => document.getElementById(`clock-${s}`).innerText),"
        " document.querySelector('#seat-0 h2').innerText]; }"
    )
    seat = int(seats.split()[0])
    names = ("ann", "ben") if first.startswith("ann") else ("ben", "ann")
    assert f"{names[seat]} (seat {seat}, " in text, text
    assert " s left" in text, text
    assert waiting[seat], waiting
    assert " s left" in clocks[seat], clocks
    # The reader puts the board at the top of the screen; ten updates later it is still
    # there and the window has not scrolled.
    page.evaluate(
        "() => window.scrollTo(0, document.getElementById('board').getBoundingClientRect().top"
        " + window.scrollY - 8)"
    )
    before = where(page)
    assert before[0] > 0, "the page is not scrolled: the test would prove nothing"
    start = int(page.locator("body").get_attribute("data-updates") or "0")
    for n in range(1, UPDATES + 1):
        page.wait_for_function(
            f"() => Number(document.body.dataset.updates || 0) >= {start + n}"
            " || document.body.classList.contains('ended')",
            timeout=30_000,
        )
        assert where(page) == before, f"after update {n}"
    assert int(page.locator("body").get_attribute("data-updates") or "0") >= start + UPDATES, (
        "the game ended before ten updates"
    )
    # The event list followed the game inside itself.
    assert page.evaluate(
        "() => { const log = document.getElementById('log');"
        " return log.scrollTop + log.clientHeight >= log.scrollHeight - 2; }"
    )
    shots = shots_dir(tmp_path)
    for width, height in ((1280, 800), (375, 800)):
        page.set_viewport_size({"width": width, "height": height})
        page.evaluate("() => window.scrollTo(0, 0)")
        page.wait_for_function("() => document.getElementById('pending').dataset.seats !== ''")
        browser_page.screenshot(shots / f"arena-live-{width}.png", full_page=False)
    # The replay at a phone's width: stepping through it moves neither window nor board.
    page.set_viewport_size({"width": 375, "height": 640})
    page.wait_for_selector("body.ended", timeout=120_000)
    page.keyboard.press("Home")
    page.evaluate(
        "() => window.scrollTo(0, document.getElementById('board').getBoundingClientRect().top"
        " + window.scrollY - 8)"
    )
    before = where(page)
    for _ in range(UPDATES):
        page.keyboard.press("ArrowRight")
        assert where(page) == before
    assert page.locator("#step").get_attribute("data-index") == str(UPDATES)
    assert page.locator("#pending").inner_text() == ""
    browser_page.assert_clean()


def _right_edges(page: Any, selector: str, texts: tuple[str, ...]) -> dict[str, float | None]:
    """The right edge in px of the first element matching ``selector`` that holds each text
    (None: none, or not displayed), all read at one moment of the page."""
    edges: dict[str, float | None] = page.evaluate(
        """([selector, texts]) => Object.fromEntries(texts.map(text => {
            const found = [...document.querySelectorAll(selector)]
                .find(element => element.textContent.includes(text));
            const box = found && found.getBoundingClientRect();
            return [text, box && box.width > 0 ? box.right : null];
        }))""",
        [selector, list(texts)],
    )
    return edges


def _page_text(page: Any) -> str:
    """Everything a reader sees of the page, its title included."""
    return page.title() + "\n" + page.locator("body").inner_text()


@pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap (bwrap) cannot sandbox here")
def test_public_names_one_row_per_entry_phone_columns_and_the_desk(
    tmp_path: Path,
    cleanup: list,
    browser_page: PageWatch,  # noqa: F811 (the fixture)
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "alice", "ben")
    arena = start_arena(folder, "--workers", "1", "--move-timeout", "5")
    cleanup.append(arena)
    author = tmp_path / "author"
    author.mkdir()
    assert "alice v1: active" in submitted(GREEDY, arena, tokens["alice"], author)
    cleanup.append(start_bot("ben", tokens["ben"], arena.address, tmp_path, delay=0.1))
    page = browser_page.page

    def twin_playing() -> str | None:
        """A live second game of alice@v1 against ben: its twin instance is at the table."""
        for game in arena.json("/api/games"):
            if game["live"] and game["id"].endswith("b") and "alice@v1" in game["seats"]:
                return str(game["id"])
        return None

    game_id = wait_until(twin_playing, 120, "a hosted twin's game")
    assert (folder / HOSTED_DIR / "logs" / "alice@v1~B.log").exists()  # the twin's process
    assert all("~" not in name for name in arena.json(f"/api/games/{game_id}")["seats"])
    for path in (f"/games/{game_id}", "/", "/players/alice", "/bots/ben"):
        response = page.goto(arena.web + path)
        assert response is not None and response.status == 200, path
        if path.startswith("/games/"):
            page.wait_for_selector("#board")
        text = _page_text(page)
        assert "~B" not in text, f"{path}: {text}"
    connections = arena.json("/api/connections")["connected"]
    assert all("~" not in c["bot"] for c in connections), connections
    # The finished twin game's replay and the desk name no twin either.
    wait_until(lambda: arena.status(f"/games/{game_id}") == 200 and not any(
        g["id"] == game_id for g in arena.json("/api/games") if g["live"]), 120,
        "the twin game's record")  # fmt: skip
    page.goto(f"{arena.web}/games/{game_id}")
    assert "~B" not in _page_text(page)
    assert page.locator("nav a").inner_text() == "← back to the arena's leaderboard"
    assert page.locator("nav a").get_attribute("href") == "/"
    wait_until(lambda: arena.status("/bots/alice@v1") == 200, 30, "alice@v1's row")
    page.goto(arena.web + "/bots/alice@v1")
    assert "~B" not in _page_text(page)

    # One leaderboard row per ladder entry: alice plays only through her version.
    page.goto(arena.web + "/")
    bots = [tr.get_attribute("data-bot") for tr in page.locator("#leaderboard tbody tr").all()]
    assert sorted(bots) == ["alice@v1", "ben"], bots
    # At a phone's width the priority columns are on screen, the rest behind the toggle.
    page.set_viewport_size({"width": 375, "height": 800})
    table = page.locator("#leaderboard-table")
    # Measured in one evaluate: a live update swaps the section in, and a heading found by one
    # call could be gone by the next (its box then None: "Games", in a loaded run).
    right = _right_edges(page, "#leaderboard-table th", ("Bot", "Games", "Score", "Rating"))
    assert all(edge is not None and edge <= 375 for edge in right.values()), right
    assert not table.locator("th:has-text('W-L-D')").is_visible()
    page.locator("button.columns-toggle[aria-controls='leaderboard-table']").click()
    assert table.locator("th:has-text('W-L-D')").is_visible()
    # The choice survives the section's live updates.
    page.wait_for_function(
        "() => document.querySelector('#leaderboard-table').classList.contains('all-columns')"
        " && document.querySelector('#leaderboard .counts') !== null"
    )
    browser_page.screenshot(shots_dir(tmp_path) / "leaderboard-375-all.png")

    # The desk: what is typed in "Add a player" survives its refreshes.
    organizer = (folder / "organizer.token").read_text().strip()
    page.goto(arena.web + "/admin")
    page.fill("#token", organizer)
    page.press("#token", "Enter")
    page.wait_for_selector("#desk:not([hidden]) #players")
    assert "~B" not in _page_text(page)
    revoke = page.locator("button[data-action='revoke'][data-name='ben']")
    right = _right_edges(page, "button[data-action='revoke'][data-name='ben']", ("Revoke",))
    assert all(edge is not None and edge <= 375 for edge in right.values()), right
    page.fill("#new-name", "carol")
    refreshes = int(page.locator("#desk").get_attribute("data-refreshes") or "0")
    # The event, a refresh of the desk after the typing, not a few seconds that may hold none.
    page.wait_for_function(
        f"() => Number(document.getElementById('desk').dataset.refreshes || 0) > {refreshes}"
    )
    assert page.locator("#new-name").input_value() == "carol"
    assert page.evaluate("() => document.activeElement.id") == "new-name"
    # Revoke asks first: refused, nothing happens; accepted, ben is revoked.
    asked: list[str] = []

    def answer(dialog: Any, accept: bool) -> None:
        asked.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    page.once("dialog", lambda dialog: answer(dialog, False))
    revoke.click()
    page.wait_for_function("() => document.getElementById('desk-message').textContent !== ''")
    assert "Nothing revoked" in page.locator("#desk-message").inner_text()
    assert asked and "Revoke ben?" in asked[0]
    assert page.locator("#players tr[data-player='ben'] .badge").inner_text() != "revoked"
    page.once("dialog", lambda dialog: answer(dialog, True))
    page.locator("button[data-action='revoke'][data-name='ben']").click()
    page.wait_for_selector("#players tr[data-player='ben'] .badge.revoked")
    assert page.locator("#new-name").input_value() == "carol"
    page.press("#new-name", "Enter")
    page.wait_for_selector("#token-shown")
    assert page.locator("#new-name").input_value() == ""
    page.wait_for_selector("#players tr[data-player='carol']")
    # A hosted version (ben revoked, it has no one left to play: its status holds still):
    # reinstated if the ladder's health check suspended it, suspended with a reason (the
    # desk asks for it), reinstated.
    row = "#versions tr[data-version='alice@v1']"
    if page.locator(f"{row} .badge.suspended").count():
        page.locator("button[data-action='reinstate'][data-name='alice@v1']").click()
        page.wait_for_selector(f"{row} .badge.active")
    page.once("dialog", lambda dialog: (asked.append(dialog.message),
                                        dialog.accept("plays too slowly")))  # fmt: skip
    page.locator("button[data-action='suspend'][data-name='alice@v1']").click()
    page.wait_for_selector(f"{row} .badge.suspended")
    assert "Suspend alice@v1?" in asked[-1]
    assert "alice@v1 is now suspended" in page.locator("#desk-message").inner_text()
    browser_page.screenshot(shots_dir(tmp_path) / "desk-375.png")
    shown = {v["bot"]: v for v in arena.json("/api/submissions")}
    assert "plays too slowly" in shown["alice@v1"]["reason"], shown
    page.locator("button[data-action='reinstate'][data-name='alice@v1']").click()
    page.wait_for_selector(f"{row} .badge.active")
    # Games per bot.
    assert int(page.locator("#bots tr[data-bot='alice@v1'] td.games").inner_text()) > 0
    # The player rolls back from its page, with its own token.
    assert "alice v2: probation" in submitted(RANDOM, arena, tokens["alice"], author)
    page.goto(arena.web + "/players/alice")
    page.locator("button[data-activate='2']").click()
    assert "token" in page.locator("#upload-result").inner_text()  # asked for first
    page.fill("#upload-token", tokens["alice"])
    page.locator("button[data-activate='2']").click()
    page.wait_for_selector("#v2 .badge.active", timeout=20_000)
    assert page.locator("#v1 .badge").inner_text() == "retired"
    page.fill("#upload-token", tokens["alice"])
    page.locator("button[data-activate='1']").click()
    page.wait_for_selector("#v1 .badge.active", timeout=20_000)
    assert page.locator("#v2 .badge").inner_text() == "retired"
    console = [e for e in browser_page.problems() if "401" not in e]
    assert not console, console
