"""A player's own failures, over real HTTP from a real arena: the request each forfeit was
answering, for that player's token and the organizer's alone; and ``replay --bot`` on the
game reproduces the crash with a real process, then the fixed build answers the request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from arena_support import add_players, start_arena, start_bot, wait_until

REPO = Path(__file__).resolve().parents[1]
CRASH_BOT = REPO / "tests" / "bots" / "crash_on_defend_bot.py"

pytestmark = [pytest.mark.slow]


def get(web: str, path: str, token: str | None) -> tuple[int, Any]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    request = urllib.request.Request(web + path, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def replay(game: str, bot: str, seat: str, tokens: dict[str, str]) -> tuple[int, dict[str, Any]]:
    """``replay GAME --bot "python BOT" --seat SEAT --json`` with dan's token in the env."""
    done = subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", "replay", game, "--bot", f"python {bot}",
         "--seat", seat, "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=180,
        env={**os.environ, "TACOCAT_ARENA_TOKEN": tokens["dan"]},
    )  # fmt: skip
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def test_a_crash_is_its_players_alone_to_read_and_replay_reproduces_it(tmp_path: Path) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "alice", "dan")
    arena = start_arena(folder, "--move-timeout", "5")
    organizer = (folder / "organizer.token").read_text().strip()
    logs = tmp_path / "bots"
    bots = [
        start_bot("alice", tokens["alice"], arena.address, logs, reconnect=False),
        start_bot("dan", tokens["dan"], arena.address, logs, script=CRASH_BOT, reconnect=False),
    ]
    path = "/api/players/dan/failures"
    try:
        report = wait_until(
            lambda: (
                (found := get(arena.web, path, tokens["dan"]))[0] == 200
                and found[1]["failures"]
                and found[1]
            ),
            120,
            "dan's forfeit in the list of its failures",
        )
        # Its first defence killed it: the game it was defending in, and a game in flight at
        # that moment, which it forfeits too (it was asked there when its stream went).
        assert all(f["bot"] == "dan" and f["failure"] == "forfeit" for f in report["failures"])
        failure = min(
            (f for f in report["failures"] if f["kind"] == "defend"), key=lambda f: f["game"]
        )
        assert failure["kind"] == "defend" and failure["request"]["kind"] == "DECISION_KIND_DEFEND"
        request = failure["request"]
        assert request["game_id"] == failure["game"] and request["legal"]["defend"]
        assert request["view"]["hand"] and request["view"]["seat"] == failure["seat"]

        # Nobody else reads a byte of it: no token 401, any other token 404, as for no player.
        assert get(arena.web, path, None)[0] == 401
        for token in (tokens["alice"], "x" * 43, organizer[:-1] + "?"):
            status, body = get(arena.web, path, token)
            assert status == 404 and "forfeit" not in json.dumps(body), body
        assert get(arena.web, "/api/players/nobody/failures", organizer)[0] == 404
        # The organizer reads the same list (a game that was in flight when dan's stream went
        # may be committed meanwhile: the later read may hold more, never other, failures).
        status, seen = get(arena.web, path, organizer)
        assert status == 200 and all(f in seen["failures"] for f in report["failures"]), seen
        again = get(arena.web, path, tokens["dan"])[1]
        assert all(f in again["failures"] for f in seen["failures"]), (seen, again)
        # dan's token reads dan's alone
        assert get(arena.web, "/api/players/alice/failures", tokens["dan"])[0] == 404

        status, game = get(arena.web, f"/api/games/{failure['game']}", None)
        assert status == 200
        # the game straight from the arena's page address, with the player's token
        code, local = replay(f"{arena.web}/games/{failure['game']}", CRASH_BOT, "dan", tokens)
    finally:
        for bot in bots:
            bot.kill()
        arena.stop()
    assert code == 1 and local["exit_code"] == 3 and local["game"] == failure["game"]
    (gone,) = [d for d in local["decisions"] if d["verdict"] == "gone"]
    assert gone["index"] == failure["index"] and gone["kind"] == "defend"
    record = tmp_path / "game.json"
    record.write_text(json.dumps(game["record"]))
    code, fixed = replay(str(record), f"{CRASH_BOT} fixed", str(failure["seat"]), tokens)
    assert code == 0
    (answered,) = [d for d in fixed["decisions"] if d["index"] == failure["index"]]
    assert answered["verdict"] == "different" and answered["answered"] == "forfeit"
