"""games.jsonl as the tournament runs: each duplicate pair is appended once both its games
are committed.

A game's record holds its deal (the seed and both hands), and the twin of a duplicate pair
plays the same deal with the seats swapped: publishing the first game before the second is
played would tell the second's players their cards.  So a committed game waits here until
its twin (same seed, same two bots) is committed too; then both lines are appended and the
file is fsync'ed.  An interrupted tournament therefore leaves every finished pair replayable.

On open the file is reconciled with the store: a line torn by kill -9 is cut off, and pairs
committed but never appended (kill -9 between the commit and the append) are appended, so
``--resume`` completes the file and never writes a game twice.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.commitments import tag_of
from tacocat_arena.tournament.storage import TournamentStore

GAMES_FILE = "games.jsonl"
DuplicateKey = tuple[int, tuple[str, ...]]


def game_line(
    result: GameResult, detail: str, record: dict[str, Any], tag: str = ""
) -> dict[str, Any]:
    """One line of games.jsonl: the game's summary, its whole record and its ``tag``
    (``commitments.game_tag``, when the tournament has a secret)."""
    return {
        "id": result.game_id,
        "seats": list(result.seats),
        "seed": result.seed,
        "result": record.get("result"),
        "winner": result.winner,
        "reason": result.reason.value,
        "detail": detail,
        "rounds": result.rounds,
        "decisions": list(result.decisions),
        "decision_ms": [round(ms, 3) for ms in result.decision_ms],
        "fallbacks": list(result.fallbacks),
        **({"tag": tag} if tag else {}),
        "record": record,
    }


def duplicate_key(result: GameResult) -> DuplicateKey:
    """What the two games of a duplicate pair share: the deal's seed and the two bots (the
    arena holds its games back by the same rule)."""
    return (result.seed, tuple(sorted(result.seats)))


class GamesLog:
    """Appends the games of ``store`` to ``path`` pair by pair (see the module docstring)."""

    def __init__(self, path: Path, store: TournamentStore) -> None:
        self.path = path
        self._secret = store.deal_secret()
        self._waiting: dict[DuplicateKey, tuple[GameResult, str, dict[str, Any]]] = {}
        self._written = self._reconcile(store.count() == 0)
        for row in store.rows():
            self.add(*row)

    def _reconcile(self, fresh: bool) -> set[str]:
        """The ids the file already holds, after cutting off a torn last line; a store with
        no game owns no line (the file is left from another tournament) and starts empty."""
        if fresh or not self.path.exists():
            self.path.unlink(missing_ok=True)
            return set()
        data = self.path.read_bytes()
        whole = data[: data.rfind(b"\n") + 1]
        if len(whole) != len(data):
            with open(self.path, "r+b") as handle:
                handle.truncate(len(whole))
        return {json.loads(line)["id"] for line in whole.splitlines() if line.strip()}

    def add(self, result: GameResult, detail: str, record: dict[str, Any]) -> None:
        """A game was committed: append it with its twin once both are (each game once)."""
        if result.game_id in self._written:
            return
        key = duplicate_key(result)
        twin = self._waiting.pop(key, None)
        if twin is None:
            self._waiting[key] = (result, detail, record)
            return
        lines = [self._line(*twin), self._line(result, detail, record)]
        text = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        self._written.update(line["id"] for line in lines)

    def _line(self, result: GameResult, detail: str, record: dict[str, Any]) -> dict[str, Any]:
        tag = tag_of(self._secret, result.game_id, result.seats, record)
        return game_line(result, detail, record, tag)
