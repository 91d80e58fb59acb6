"""Governing the arena as real processes on loopback: ``serve``, SDK bots, HTTP and the CLI.

One test per feature (the rules themselves: test_arena_governance.py, in process):
a connected bot that remembers deals predicts none of them (independent deals), and one
that asked for one game at a time plays one; the organizer's and the player's actions over
HTTP and the command line, a revoked player's hosted version stopped at once.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import arena_support
import pytest
from arena_support import ArenaProcess, add_players, start_bot, wait_until

from tacocat_arena.launch.sandbox import bwrap_path

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
REMEMBERING = REPO / "tests" / "bots" / "remembering_bot.py"
PACKAGE = REPO / "example_bots" / "packages" / "python-random"
#: Deal pairs a hosted batch plays (``serve --pairs-per-batch``): 2 games each.
PAIRS = 2


def _predictions(arena: ArenaProcess, log: Path) -> tuple[int, int]:
    """``(games predicted, hands guessed right)`` of a remembering bot's log, each checked
    against the published record of the game (the opponent's dealt hand of round 1)."""
    tried = right = 0
    for line in log.read_text().splitlines():
        entry = json.loads(line)
        if entry["predicted"] is None:
            continue
        try:
            game = arena.json(f"/api/games/{entry['game']}")
        except urllib.error.HTTPError:
            continue  # not published yet (a duplicate pair's first game while its twin plays)
        record = game["record"]
        seat = game["seats"].index("ann" if "ann" in log.name else "ben")
        deal = next(e for e in record["events"] if e["type"] == "deal" and e["round"] == 1)
        tried += 1
        right += deal["hands"][1 - seat] == entry["predicted"]
    return tried, right


@pytest.mark.parametrize("deals", ["--independent-deals", "--duplicate-deals"])
def test_a_remembering_connected_bot_predicts_no_hand_on_independent_deals(
    tmp_path: Path, cleanup: list, deals: str
) -> None:
    """Issue 34: a connected bot is one process; on one deal played twice it knows its
    opponent's hand in the second game (the control: ``--duplicate-deals``).  On independent
    deals (the default) it predicts none, and the records say how they were dealt.  It asked
    for one game at a time: the arena never gives it two (``playing`` <= 1, one live game)."""
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "ben")
    arena = arena_support.start_arena(folder, "--per-bot", "2", "--move-timeout", "5", deals)
    try:  # stopped with SIGTERM: a SIGKILLed arena (cleanup's) leaves its worker process behind
        _remembering_run(arena, tokens, tmp_path, cleanup, deals)
    finally:
        arena.stop()


def _remembering_run(
    arena: ArenaProcess, tokens: dict[str, str], tmp_path: Path, cleanup: list, deals: str
) -> None:
    logs = {name: tmp_path / f"{name}.jsonl" for name in ("ann", "ben")}
    for name in ("ann", "ben"):
        cleanup.append(start_bot(name, tokens[name], arena.address, tmp_path,
                                 script=REMEMBERING, env={"REMEMBER_LOG": str(logs[name])},
                                 reconnect=False))  # fmt: skip
    most_playing = most_live = 0
    deadline = time.monotonic() + 120
    while arena.json("/api/status")["games"] < 12 and time.monotonic() < deadline:
        for row in arena.json("/api/connections")["connected"]:
            most_playing = max(most_playing, row["playing"])
        live = [g for g in arena.json("/api/games?limit=1") if g["live"]]
        most_live = max(most_live, len(live))
        time.sleep(0.05)
    for bot in [p for p in cleanup if isinstance(p, arena_support.BotProc)]:
        bot.kill()  # their pairs end: every game is published
    wait_until(lambda: arena.json("/api/status")["live"] == 0, 30, "the games to end")
    tried, right = (sum(x) for x in zip(*(_predictions(arena, log) for log in logs.values()),
                                         strict=True))  # fmt: skip
    print(f"{deals}: {right} of {tried} second-game hands predicted")  # the figure, with -s
    assert tried >= 4, tried
    games = arena.json("/api/games?limit=20")
    kinds = {arena.json(f"/api/games/{g['id']}")["record"]["ladder"]["deals"] for g in games}
    if deals == "--independent-deals":
        assert right == 0, (right, tried)
        assert kinds == {"independent"}
    else:
        assert right >= tried // 3, (right, tried)  # about every second game is a twin
        assert kinds == {"duplicate"}
    assert most_playing <= 1 and most_live <= 1, (most_playing, most_live)


def _post(arena: ArenaProcess, path: str, token: str, body: dict[str, Any] | None = None
          ) -> tuple[int, dict[str, Any]]:  # fmt: skip
    request = urllib.request.Request(
        arena.web + path,
        data=json.dumps(body or {}).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tacocat_arena.cli", *args],
                          capture_output=True, text=True, timeout=180)  # fmt: skip


def _games(arena: ArenaProcess, player: str) -> int:
    """Games of ``player``'s version 1 committed so far."""
    games: int = arena.json(f"/api/submissions/{player}/1")["games"]
    return games


def _playing(arena: ArenaProcess, bot: str) -> int:
    """Games of ``bot`` in flight, from the desk (which lists revoked and suspended versions
    too): a hosted batch counts until its games are committed."""
    organizer = (arena.folder / "organizer.token").read_text().strip()
    request = urllib.request.Request(
        arena.web + "/api/admin", headers={"Authorization": f"Bearer {organizer}"}
    )
    desk = json.loads(urllib.request.urlopen(request, timeout=30).read())
    return sum(row["playing"] for row in desk["bots"] if row["bot"] == bot)


def _statuses(arena: ArenaProcess) -> dict[str, str]:
    return {v["bot"]: v["status"] for v in arena.json("/api/submissions")}


@pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap (bwrap) cannot sandbox here")
def test_suspend_reinstate_roll_back_and_revoke_a_hosted_player(tmp_path: Path) -> None:
    """The organizer suspends and reinstates over HTTP and the CLI (a reason the player
    reads), the player rolls back with ``submit --activate``, and revoking a player stops its
    hosted version at once: listed ``revoked``, no game of it starts after."""
    folder = tmp_path / "arena"
    tokens = add_players(folder, "alice", "bob", "cat")
    # Batches of 4 games (2 pairs): "a batch that started after the revoke" comes sooner.
    arena = arena_support.start_arena(
        folder, "--move-timeout", "5", "--probation", "0", "--pairs-per-batch", str(PAIRS)
    )
    try:  # stopped with SIGTERM: a SIGKILLed arena leaves its workers holding its output
        organizer = (folder / "organizer.token").read_text().strip()
        for player, times in (("alice", 2), ("bob", 1), ("cat", 1)):
            for _ in range(times):
                done = _cli("submit", str(PACKAGE), "--arena", arena.web, "--token", tokens[player],
                            "--wait", "--timeout", "150")  # fmt: skip
                assert done.returncode == 0, done.stdout + done.stderr
        assert _statuses(arena) == {"alice@v1": "retired", "alice@v2": "active",
                                    "bob@v1": "active", "cat@v1": "active"}  # fmt: skip
        # Organizer only; numbers that name no version are 404s.
        assert _post(arena, "/api/submissions/alice/2/suspend", tokens["alice"])[0] == 401
        assert _post(arena, "/api/submissions/alice/9999999999999/suspend", organizer)[0] == 404
        assert _post(arena, "/api/submissions/alice/7/suspend", organizer)[0] == 404
        code, found = _post(arena, "/api/submissions/alice/2/suspend", organizer,
                            {"reason": "plays for bob"})  # fmt: skip
        assert code == 200 and found["status"] == "suspended", found
        detail = arena.json("/api/submissions/alice/2")
        assert detail["reason"] == "suspended by the organizer: plays for bob"
        # The player cannot undo it, but can roll back to v1.
        assert _post(arena, "/api/submissions/alice/2/activate", tokens["alice"])[0] == 409
        assert _post(arena, "/api/submissions/alice/1/activate", tokens["bob"])[0] == 403
        done = _cli("submit", "--activate", "1", "--arena", arena.web, "--token", tokens["alice"])
        assert done.returncode == 0 and "alice v1: active" in done.stdout, done.stdout + done.stderr
        # The CLI beside the running arena: reinstate (v1 active: v2 comes back retired).
        done = _cli("submissions", "reinstate", "alice@v2", "--dir", str(folder))
        assert done.returncode == 0 and "alice@v2: retired" in done.stdout, done.stderr
        assert _post(arena, "/api/submissions/alice/2/activate", tokens["alice"])[0] == 200
        wait_until(lambda: _statuses(arena)["alice@v1"] == "retired", 10, "the roll-forward")
        # Revoking bob from the desk stops bob@v1 at once: no game of it starts after.  The
        # desk lists every version that has played (revoked ones too): both bob's and cat's
        # must have played first.  (Waiting for bob's alone, cat's first batch could still be
        # to come: one worker plays one batch at a time, least met first.)
        for bot in ("bob", "cat"):
            wait_until(lambda bot=bot: _games(arena, bot) > 0, 120, f"{bot}@v1's games")
        assert _post(arena, "/api/players/bob/revoke", organizer)[0] == 200
        assert _statuses(arena)["bob@v1"] == "revoked"
        desk = json.loads(urllib.request.urlopen(urllib.request.Request(
            arena.web + "/api/admin", headers={"Authorization": f"Bearer {organizer}"}),
            timeout=30).read())  # fmt: skip
        assert {v["bot"]: v["status"] for v in desk["versions"]}["bob@v1"] == "revoked"
        assert {b["bot"] for b in desk["bots"]} >= {"bob@v1", "cat@v1"}
        assert all(isinstance(b["games"], int) for b in desk["bots"])
        # A batch already on the worker may finish (docs/arena-server.md); none starts after.
        # Its end is the event waited on (its games are committed before it stops counting as
        # in flight), not a few seconds, which a loaded machine overran.
        wait_until(lambda: _playing(arena, "bob@v1") == 0, 120, "bob@v1's batch in flight")
        before = _games(arena, "bob")
        # The one worker has at most one batch in flight now (alice@v2 and cat's, started
        # before the revoke or after it); once two more of cat's batches are committed, one of
        # them started after the revoke: the event "none starts after" is judged on, not a
        # few seconds of bob's count standing still.
        cat = _games(arena, "cat")
        batch = 2 * PAIRS
        wait_until(lambda: _games(arena, "cat") >= cat + 2 * batch, 120, "cat's batches after")
        assert _games(arena, "bob") == before
    finally:
        arena.stop()


_CRASHES_AGAINST_ZED = """
import os
from example_bots.random_bot import RandomBot
from tacocat_bot import run


class Flaky(RandomBot):
    def on_game_start(self, game_id, seat, opponent):
        if opponent == "zed":  # a connected bot's name: never the gate's opponent
            os._exit(3)


run(Flaky())
"""


@pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap (bwrap) cannot sandbox here")
def test_a_new_version_crashing_only_in_games_leaves_the_old_one_active(
    tmp_path: Path, cleanup: list
) -> None:
    """Probation as real processes: alice's v2 passes the gate, then crashes in every real
    game (against connected bot zed, its only opponent: alice's versions never meet); it is
    suspended within its probation and v1 stays active, as docs/submissions.md says."""
    folder = tmp_path / "arena"
    tokens = add_players(folder, "alice", "zed")
    arena = arena_support.start_arena(folder, "--move-timeout", "5", "--probation", "20")
    try:
        done = _cli("submit", str(PACKAGE), "--arena", arena.web, "--token", tokens["alice"],
                    "--wait", "--timeout", "150")  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        flaky = tmp_path / "flaky"
        flaky.mkdir()
        (flaky / "bot.toml").write_text('command = "python bot.py"\n')
        (flaky / "bot.py").write_text(_CRASHES_AGAINST_ZED)
        done = _cli("submit", str(flaky), "--arena", arena.web, "--token", tokens["alice"],
                    "--wait", "--timeout", "150")  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert "alice v2: probation" in done.stdout and "v1 stays active" in done.stdout
        bot = start_bot("zed", tokens["zed"], arena.address, tmp_path, reconnect=False)
        cleanup.append(bot)
        wait_until(lambda: _statuses(arena)["alice@v2"] == "suspended", 180, "v2's suspension")
        assert _statuses(arena)["alice@v1"] == "active"
        v2 = arena.json("/api/submissions/alice/2")
        assert v2["games"] < 20 and "in a row" in v2["reason"], v2
        games = arena.json("/api/games?bot=alice@v1&limit=200")
        assert not [g for g in games if set(g["seats"]) == {"alice@v1", "alice@v2"}]
    finally:
        arena.stop()


@pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap (bwrap) cannot sandbox here")
def test_a_suspended_versions_game_against_a_connected_bot_ends_at_once(
    tmp_path: Path, cleanup: list
) -> None:
    """Suspending a version (the CLI, beside the live arena) ends its game in flight against
    a slow connected bot: forfeited by the version, and no game of it starts after."""
    folder = tmp_path / "arena"
    tokens = add_players(folder, "alice", "zed")
    arena = arena_support.start_arena(folder, "--move-timeout", "5")
    try:
        done = _cli("submit", str(PACKAGE), "--arena", arena.web, "--token", tokens["alice"],
                    "--wait", "--timeout", "150")  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        cleanup.append(start_bot("zed", tokens["zed"], arena.address, tmp_path, delay=0.5,
                                 reconnect=False))  # fmt: skip

        def live_game() -> str | None:
            games = arena.json("/api/games?bot=alice@v1&limit=1")
            return next((g["id"] for g in games if g["live"]), None)

        game_id = wait_until(live_game, 60, "a live game of alice@v1 against zed")
        done = _cli("submissions", "suspend", "alice@v1", "--dir", str(folder), "--reason", "x")
        assert done.returncode == 0, done.stdout + done.stderr
        # A bound for a stuck game, not a measured time: zed's think alone is 0.5 s a move.
        wait_until(lambda: live_game() is None, 20, "the game in flight to end")
        path = f"/api/games/{game_id}"
        wait_until(lambda: arena.status(path) == 200, 20, "the game's record")
        game = arena.json(path)
        assert game["reason"] in ("disconnect", "crash") and game["winner"] == "zed", game
        # Its other games in flight (the pair's twin) end and are committed first: the event
        # waited on; then none starts in the next few seconds.
        wait_until(lambda: _playing(arena, "alice@v1") == 0, 120, "alice@v1's games in flight")
        before = arena.json("/api/submissions/alice/1")["games"]
        time.sleep(3)
        assert arena.json("/api/submissions/alice/1")["games"] == before
        assert not [g for g in arena.json("/api/games?bot=alice@v1&limit=5") if g["live"]]
    finally:
        arena.stop()
