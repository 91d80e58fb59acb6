"""The arena server end to end: ``tacocat-arena serve`` and its bots as separate processes,
over real loopback gRPC and HTTP (see tests/arena_support.py)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from arena_support import (
    ArenaProcess,
    BotProc,
    add_players,
    connected_sessions,
    games_of,
    hidden_strings,
    start_arena,
    start_bot,
    start_bots,
    wait_until,
)
from browser_support import PageWatch, browser, browser_page  # noqa: F401 (fixtures)

from tacocat_arena.cli.run import verify_any
from tacocat_arena.engine import replay

pytestmark = pytest.mark.slow


def test_bots_join_at_different_times_leave_restart_and_a_wrong_token_is_shown(
    tmp_path: Path, cleanup: list
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "ben", "cat", "dan")
    arena = start_arena(folder, "--move-timeout", "3")
    cleanup.append(arena)

    def bot(name: str, **kw: float) -> BotProc:
        proc = start_bot(name, tokens[name], arena.address, tmp_path, **kw)
        cleanup.append(proc)
        return proc

    bot("ann")
    bot("ben")
    wait_until(lambda: min(games_of(arena).values() or [0]) == 0 and
               games_of(arena)["ann"] >= 2, 30, "ann and ben's first games")  # fmt: skip
    # A newcomer gets its first games (it has met no one: it is paired first, as
    # test_arena_units.py's test_a_newcomer_is_paired_before_any_rematch checks in process).
    cat = bot("cat", delay=0.02)
    wait_until(lambda: games_of(arena)["cat"] >= 2, 30, "cat's first games")
    bot("dan")
    wait_until(lambda: games_of(arena)["dan"] >= 2, 30, "dan's first games")
    assert all(n >= 2 for n in games_of(arena).values()), games_of(arena)

    # A wrong token is refused and shown to the organizer (page and JSON), naming the bot.
    intruder = start_bot("ann", "tca_not-the-token", arena.address, tmp_path)
    cleanup.append(intruder)
    assert intruder.process.wait(30) != 0
    failures = arena.json("/api/connections")["failures"]
    assert any(f["bot"] == "ann" and "wrong token" in f["reason"] for f in failures), failures
    assert b"wrong token" in arena.get("/")
    assert "ann" in connected_sessions(arena)  # the real ann is still connected

    # A restarted bot replaces its old session; the old process is told and ends cleanly.
    old_ben = next(p for p in cleanup if isinstance(p, BotProc) and p.name == "ben")
    old_session = connected_sessions(arena)["ben"]
    bot("ben", seed=2)
    wait_until(lambda: connected_sessions(arena).get("ben") not in (None, old_session), 30,
               "ben's new session")  # fmt: skip
    assert old_ben.process.wait(30) == 0, old_ben.output()
    ben_before = games_of(arena)["ben"]
    wait_until(lambda: games_of(arena)["ben"] >= ben_before + 2, 30, "ben's new session's games")

    # cat leaves mid-game (killed): only its games in flight are forfeited, the ladder goes on.
    in_flight = wait_until(
        lambda: [g["id"] for g in arena.json("/api/games?bot=cat") if g["live"]], 30,
        "a game of cat in flight",
    )  # fmt: skip
    cat.kill()
    wait_until(lambda: "cat" not in connected_sessions(arena), 30, "cat's disconnection")
    wait_until(lambda: not any(g["live"] for g in arena.json("/api/games?bot=cat")), 30,
               "cat's games in flight to be forfeited")  # fmt: skip
    others = {b: n for b, n in games_of(arena).items() if b != "cat"}

    def cat_games() -> int:
        return sum(not g["live"] for g in arena.json("/api/games?bot=cat&limit=1000"))

    cat_before = cat_games()
    wait_until(lambda: all(games_of(arena)[b] >= n + 2 for b, n in others.items()), 60,
               "more games for ann, ben and dan")  # fmt: skip
    assert cat_games() == cat_before  # not paired while away
    for game_id in in_flight:
        game = arena.json(f"/api/games/{game_id}")
        assert game["live"] is False
        if game["reason"] == "disconnect":
            assert game["winner"] != "cat"
    leaderboard = {row["bot"]: row for row in arena.json("/api/leaderboard")}
    assert leaderboard["cat"]["connected"] is False and leaderboard["ann"]["connected"] is True
    assert {"bot", "games", "score", "rating", "rating_err", "connected"} <= set(leaderboard["ann"])
    # A clean stop: SIGTERM ends the server with status 0 and the bots are told.
    out = arena.stop(signal.SIGTERM)
    assert arena.process.returncode == 0, out
    assert "stopped:" in out


def test_kill_9_then_restart_loses_no_finished_game_and_the_ladder_goes_on(
    tmp_path: Path, cleanup: list
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "ben")
    arena = start_arena(folder)
    cleanup.append(arena)
    # Reconnecting off (test_sdk_sessions.py has bots that outlive a restart).
    bots = start_bots(tokens, arena.address, tmp_path, reconnect=False)
    cleanup.extend(bots)
    wait_until(lambda: len(arena.json("/api/games?limit=1000")) >= 10, 60, "10 games")
    seen = {g["id"] for g in arena.json("/api/games?limit=1000") if not g["live"]}
    arena.process.send_signal(signal.SIGKILL)
    arena.process.wait(10)
    for proc in bots:
        proc.process.wait(30)  # their stream broke: the SDK gives up and exits

    again = start_arena(folder)
    cleanup.append(again)
    stored = {g["id"] for g in again.json("/api/games?limit=1000")}
    assert seen <= stored, sorted(seen - stored)
    for game_id in sorted(seen)[:5]:  # each stored record is complete and re-verifies
        replay(again.json(f"/api/games/{game_id}")["record"])
    cleanup.extend(start_bots(tokens, again.address, tmp_path))
    wait_until(lambda: len(again.json("/api/games?limit=1000")) >= len(stored) + 4, 60,
               "games after the restart")  # fmt: skip
    after = {g["id"] for g in again.json("/api/games?limit=1000")}
    assert stored <= after
    total = sum(row["games"] for row in again.json("/api/leaderboard")) // 2
    assert total >= len(stored)


def test_a_live_game_page_and_its_event_stream_never_show_a_hidden_card(
    tmp_path: Path, cleanup: list
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "ben")
    arena = start_arena(folder, "--concurrency", "1", "--per-bot", "1", "--move-timeout", "5")
    cleanup.append(arena)
    cleanup.extend(start_bots(tokens, arena.address, tmp_path, delay=0.03))
    game_id = wait_until(
        lambda: next((g["id"] for g in arena.json("/api/games") if g["live"]), None), 30,
        "a live game",
    )  # fmt: skip
    served: list[bytes] = []
    stream_events: list[str] = []

    def read_stream() -> None:
        url = f"{arena.web}/games/{game_id}/events"
        with urllib.request.urlopen(url, timeout=60) as response:
            for line in response:
                served.append(line)
                if line.startswith(b"event: "):
                    stream_events.append(line[7:].strip().decode())
                if line.startswith(b"event: end"):
                    return

    reader = threading.Thread(target=read_stream, daemon=True)
    reader.start()
    live_answers = 0
    while reader.is_alive():
        try:
            state = arena.get(f"/api/games/{game_id}")
        except urllib.error.HTTPError as error:  # over, held until its duplicate twin ends
            assert error.code == 404, error
            state = b"{}"
        if json.loads(state).get("live"):
            live_answers += 1
            served.append(state)
            try:
                page = arena.get(f"/games/{game_id}")
            except urllib.error.HTTPError as error:  # it ended meanwhile, held for its twin
                assert error.code == 404, error
                page = b""
            if b"live</span>" in page:  # else it ended meanwhile: its full record is public
                served.append(page)
            for path in ("/", "/api/games", "/api/leaderboard"):
                served.append(arena.get(path))
        time.sleep(0.05)
        reader.join(0.01)
    reader.join(5)
    assert live_answers >= 3 and stream_events.count("state") >= 3, (live_answers, stream_events)
    assert stream_events[-1] == "end"
    # Its record is public once its duplicate twin has ended too.
    wait_until(lambda: arena.status(f"/api/games/{game_id}") == 200, 60, "the pair's end")
    record = arena.json(f"/api/games/{game_id}")["record"]
    blob = b"".join(served)
    # ("NAME is dealt CARDS" is a deal told in words; "a new round is dealt" is public.)
    for key in (
        b'"hands"',
        b'"drawn"',
        b'"draw_pile"',
        b'"hand":',
        b"ann is dealt",
        b"ben is dealt",
    ):
        assert key not in blob, key
    leaks = [text for text in hidden_strings(record) if text.encode() in blob]
    assert not leaks, leaks
    # ... and once it is over the whole record is public, hands included.
    assert b"is dealt" in arena.get(f"/games/{game_id}?account")
    assert b"<svg" in arena.get(f"/games/{game_id}")  # the replay viewer


def test_bots_connect_over_tls(tmp_path: Path, cleanup: list) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl to make a test certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
         "-out", str(cert), "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "ben")
    arena = start_arena(folder, "--tls-cert", str(cert), "--tls-key", str(key))
    cleanup.append(arena)
    assert "(TLS)" in "\n".join(arena.lines)
    os.environ["TACOCAT_ARENA_TLS_CA"] = str(cert)
    try:
        cleanup.extend(start_bots(tokens, arena.address, tmp_path))
    finally:
        del os.environ["TACOCAT_ARENA_TLS_CA"]
    wait_until(lambda: games_of(arena).get("ann", 0) >= 2, 60, "games over TLS")
    # A plain-text client cannot talk to it (had it connected, it would replace ann's session).
    session = connected_sessions(arena)["ann"]
    plain = start_bot("ann", tokens["ann"], arena.address, tmp_path)
    cleanup.append(plain)
    time.sleep(3)
    plain.kill()
    assert connected_sessions(arena)["ann"] == session


def test_the_leaderboard_in_a_browser_updates_when_a_game_finishes_without_a_reload(
    tmp_path: Path,
    cleanup: list,
    browser_page: PageWatch,  # noqa: F811 (the fixture)
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "ben")
    arena = start_arena(folder, "--concurrency", "1", "--per-bot", "1")
    cleanup.append(arena)
    watch = browser_page
    page = watch.page
    page.goto(arena.web + "/")
    page.evaluate("window.__loadedOnce = 'yes'")  # gone if the page reloads
    assert page.locator("#leaderboard tr[data-bot='ann'] td.games").inner_text() == "0"
    cleanup.extend(start_bots(tokens, arena.address, tmp_path, delay=0.01))
    page.wait_for_function(
        "() => Number(document.querySelector(\"tr[data-bot='ann'] td.games\").textContent) >= 1",
        timeout=60_000,
    )
    first = int(page.locator("#leaderboard tr[data-bot='ann'] td.games").inner_text())
    page.wait_for_function(
        f"() => Number(document.querySelector(\"tr[data-bot='ann'] td.games\").textContent)"
        f" > {first}",
        timeout=60_000,
    )
    assert page.evaluate("window.__loadedOnce") == "yes"
    assert "connected" in page.locator("#leaderboard tr[data-bot='ben']").inner_text()
    watch.screenshot(tmp_path / "leaderboard.png")
    watch.assert_clean()


def _post(arena: ArenaProcess, path: str, token: str | None, body: dict | None = None) -> tuple:
    request = urllib.request.Request(
        arena.web + path,
        data=json.dumps(body or {}).encode(),
        method="POST",
        headers={"Content-Type": "application/json"}
        | ({"Authorization": f"Bearer {token}"} if token else {}),
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_organizer_actions_need_the_organizer_token_and_take_effect_at_once(
    tmp_path: Path, cleanup: list
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann")
    arena = start_arena(folder)
    cleanup.append(arena)
    organizer = (folder / "organizer.token").read_text().strip()
    assert _post(arena, "/api/players", None, {"name": "ben"})[0] == 401
    assert _post(arena, "/api/players", "tca_wrong", {"name": "ben"})[0] == 401
    assert _post(arena, "/api/pause", None)[0] == 401
    status, added = _post(arena, "/api/players", organizer, {"name": "ben"})
    assert status == 201 and added["token"].startswith("tca_")
    cleanup.append(start_bot("ann", tokens["ann"], arena.address, tmp_path))
    ben = start_bot("ben", added["token"], arena.address, tmp_path)
    cleanup.append(ben)
    wait_until(lambda: games_of(arena).get("ben", 0) >= 2, 30, "ben's games")
    # Pause: no new games start; resume: they do again.
    assert _post(arena, "/api/pause", organizer) == (200, {"paused": True})
    wait_until(lambda: arena.json("/api/status")["live"] == 0, 30, "the games in flight to end")
    paused_at = arena.json("/api/status")["games"]
    time.sleep(1.0)
    assert arena.json("/api/status")["games"] == paused_at
    assert _post(arena, "/api/resume", organizer) == (200, {"paused": False})
    wait_until(lambda: arena.json("/api/status")["games"] > paused_at, 30, "games after resume")
    # Revoke: ben's session ends and its token no longer works; its games stay listed.
    assert _post(arena, "/api/players/ben/revoke", organizer)[0] == 200
    assert ben.process.wait(30) == 0
    assert "ben" not in connected_sessions(arena)
    assert any(row["bot"] == "ben" and row["games"] >= 2 for row in arena.json("/api/leaderboard"))
    again = start_bot("ben", added["token"], arena.address, tmp_path)
    cleanup.append(again)
    assert again.process.wait(30) != 0
    # The bot's page: its games, its rating over time.
    page = arena.get("/bots/ann").decode()
    assert "Rating over time" in page and "<polyline" in page and "Recent games" in page
    assert arena.status("/bots/nobody") == 404 and arena.status("/api/games/nothing") == 404


def test_a_bot_whose_code_fails_shows_its_errors_on_its_page(tmp_path: Path, cleanup: list) -> None:
    """tests/bots/raising_bot.py raises in every attack: its SDK plays a default attack and
    says so (Action.fallback); the bot's page and the leaderboard count those errors."""
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "raiser")
    arena = start_arena(folder)
    cleanup.append(arena)
    cleanup.append(start_bot("ann", tokens["ann"], arena.address, tmp_path))
    raising = Path(__file__).resolve().parent / "bots" / "raising_bot.py"
    cleanup.append(start_bot("raiser", tokens["raiser"], arena.address, tmp_path, script=raising))

    def errors() -> dict[str, int]:
        return {row["bot"]: row["errors"] for row in arena.json("/api/leaderboard")}

    # Only a duel's winner attacks: the raiser duels high, but it may still lose a game's duels.
    wait_until(lambda: errors().get("raiser", 0) > 0, 90, "the raiser's first attack")
    assert errors()["ann"] == 0
    errors = re.search(r'id="errors"[^>]*>(\d+) errors<', arena.get("/bots/raiser").decode())
    assert errors is not None and int(errors.group(1)) > 0
    assert ">0 errors<" in arena.get("/bots/ann").decode()


def test_a_round_robin_event_takes_late_joiners_and_does_not_wait_for_ever_on_absent_bots(
    tmp_path: Path, cleanup: list
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "ben", "cat", "dan")
    arena = start_arena(
        folder, "--round-robin", "--games", "2", "--start-after", "120", "--start-with", "3",
        "--wait", "3", "--move-timeout", "5",
    )  # fmt: skip
    cleanup.append(arena)
    cleanup.extend(
        start_bots(tokens, arena.address, tmp_path, names=("ann", "ben", "cat"), delay=0.02)
    )
    wait_until(lambda: arena.json("/api/status")["live"] > 0, 30, "the event's first games")
    cat = next(p for p in cleanup if isinstance(p, BotProc) and p.name == "cat")
    cleanup.append(start_bot("dan", tokens["dan"], arena.address, tmp_path, delay=0.02))
    wait_until(lambda: any("dan" in g["seats"] for g in arena.json("/api/games")), 30,
               "dan's first event game")  # fmt: skip
    cat.kill()  # cat leaves for good in the middle of the event
    out = arena.wait(120)
    assert arena.process.returncode == 0, out
    assert "dan joins" in out and "is over: 12 games" in out, out
    assert "its deal secret committed as" in out, out
    verified = verify_any(folder)  # the event's games, deals and commitment (issue 38)
    assert verified.ok and verified.games + verified.unplayed == 12, verified.problems
    with sqlite3.connect(folder / "arena.sqlite") as db:
        rows = db.execute("SELECT seat0, seat1, reason, detail FROM games").fetchall()
    assert len(rows) == 12  # every pair of the four, twice (one duplicate deal each)
    pairs = {frozenset(r[:2]) for r in rows}
    assert len(pairs) == 6
    cat_rows = [r for r in rows if "cat" in r[:2]]
    assert any(r[2] == "disconnect" for r in cat_rows), cat_rows
