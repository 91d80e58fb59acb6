"""A hostile player against analysis on request (``/api/players/NAME/analyses``) of a real
``serve``: garbled and oddly typed bodies, another player's token and games, a flood of
requests.  Each gets a clear 4xx (never a 500), and the arena goes on answering everyone."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import arena_support
import pytest
from arena_support import add_players, post, start_bots, wait_until

pytestmark = pytest.mark.slow


def _finished(arena: arena_support.ArenaProcess, player: str) -> list[str]:
    return [
        g["id"]
        for g in arena.json("/api/games?limit=200")
        if not g["live"] and player in g["seats"]
    ]


def test_hostile_analysis_requests_get_a_clear_error_and_harm_no_one(tmp_path: Path) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "alice", "bob", "carol")
    arena = arena_support.start_arena(folder, "--move-timeout", "5")
    bots = start_bots(tokens, arena.address, tmp_path, names=["alice", "bob"], reconnect=False)
    try:
        games = wait_until(lambda: _finished(arena, "alice")[:3], 180, "alice's finished games")
        path = "/api/players/alice/analyses"
        theirs = json.dumps({"game": games[0]}).encode()
        # Bodies that are no request: garbled, nested past the parser's depth, oddly typed.
        for body in (
            b"\xff\xfe garbage",
            b"[" * 4000,
            b'{"game": ' + b"[" * 3000 + b"]" * 1000,
            b"[1, 2]",
            json.dumps({"game": games[0], "reference": 5}).encode(),
            json.dumps({"game": games[0], "reference": ["ismcts"]}).encode(),
            json.dumps({"game": games[0], "reference": {"iterations": 9}}).encode(),
            json.dumps({"game": games[0], "seat": [0]}).encode(),
            json.dumps({"game": games[0], "seat": True}).encode(),
            json.dumps({"game": games[0], "reference": "ismcts?iterations=1e99"}).encode(),
            json.dumps({"game": games[0], "reference": "ismcts?uct=nan"}).encode(),
        ):
            status, answer = post(arena.web, path, body, tokens["alice"])
            assert status == 400, (body[:60], status, answer)
            assert isinstance(answer, dict) and answer.get("error"), answer
        assert post(arena.web, path, b"{" + b" " * 10_000, tokens["alice"])[0] == 413
        # Another player's token, a game that is not theirs, not finished, or no game at all.
        assert post(arena.web, path, theirs)[0] == 401
        assert post(arena.web, path, theirs, tokens["carol"])[0] == 404
        assert post(arena.web, "/api/players/carol/analyses", theirs, tokens["carol"])[0] == 404
        for game in ("../../players", "L' OR 1=1 --", "x" * 3000, "*", games[0] + "\x00"):
            status, _ = post(arena.web, path, json.dumps({"game": game}).encode(), tokens["alice"])
            assert status == 404, (game[:40], status)
        # A flood of requests for alice's games at once: one analysis queued, the rest 429
        # (or the same job again), never more than one of hers pending.
        cheap = "ismcts?iterations=10&seeds=1"
        bodies = [json.dumps({"game": g, "reference": cheap}).encode() for g in games] * 10
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda b: post(arena.web, path, b, tokens["alice"]), bodies))
        statuses = {status for status, _ in answers}
        assert statuses <= {200, 202, 429}, answers
        accepted = {a["game"] for s, a in answers if s in (200, 202)}
        assert len(accepted) == 1, answers
        # Everyone else is still answered: the board, bob's own list.
        assert arena.status("/api/leaderboard") == 200
        status, _ = post(arena.web, "/api/players/bob/analyses", b"{}", tokens["bob"])
        assert status == 400
        assert "Traceback" not in arena.output(), arena.output()[-3000:]
    finally:
        for bot in bots:
            bot.kill()
        arena.stop()


def test_a_player_cannot_have_one_game_analysed_for_ever(tmp_path: Path) -> None:
    """Each new ``seed`` (or ``uct``) is a new reference, so a player that asks again once
    its last is done kept the worker busy and the cache growing without end: a game's seat
    is analysed with at most ``MAX_REFERENCES``, then refused (409) naming them; the ones
    made are still answered from the cache, and another game is analysed as before."""
    folder = tmp_path / "arena"
    tokens = add_players(folder, "alice", "bob")
    arena = arena_support.start_arena(folder, "--move-timeout", "5")
    bots = start_bots(tokens, arena.address, tmp_path, reconnect=False)
    try:
        games = wait_until(
            lambda: _finished(arena, "alice")[:2] if len(_finished(arena, "alice")) > 1 else None,
            180,
            "two finished games of alice's",
        )
        path = "/api/players/alice/analyses"

        def ask(game: str, seed: int) -> tuple[int, Any]:
            reference = f"ismcts?iterations=10&seeds=1&seed={seed}"
            body = json.dumps({"game": game, "seat": _seat(arena, game), "reference": reference})
            return post(arena.web, path, body.encode(), tokens["alice"])

        def done(game: str, seed: int) -> bool:
            status, answer = ask(game, seed)
            assert status in (200, 202), answer
            assert answer["state"] != "failed", answer
            return answer["state"] == "done"

        for seed in range(1, 4):
            wait_until(lambda seed=seed: done(games[0], seed), 300, f"analysis {seed}", 0.5)
        status, answer = ask(games[0], 4)
        assert status == 409 and "3 references already" in answer["error"], answer
        assert "seed=1" in answer["error"] and "seed=3" in answer["error"], answer
        assert ask(games[0], 2)[0] == 200  # a reference made: from the cache
        assert ask(games[1], 4)[0] in (200, 202)  # another game: as before
        cached = list((folder / "analysis").glob(f"{games[0]}.*.json"))
        assert len(cached) == 3, cached
        assert "Traceback" not in arena.output(), arena.output()[-3000:]
    finally:
        for bot in bots:
            bot.kill()
        arena.stop()


def _seat(arena: arena_support.ArenaProcess, game: str) -> int:
    seats = next(g["seats"] for g in arena.json("/api/games?limit=200") if g["id"] == game)
    return seats.index("alice")
