"""A person's games in the arena (``serve``): a signed-in player challenges a bot.

Each challenge is ``play human``'s match (``local.run_match``: a referee of its own on
loopback, the bot started by the one launcher in its sandbox, the person's seat relayed to
the page), played on the arena's loop and written to a folder of its own,
``DIR/human/N/``, which ``tacocat-arena verify`` re-checks like any match.  Human games are
unrated and kept apart from the ladder: nothing of them enters ``arena.sqlite`` or its
ratings; their one table, ``human_games`` of ``DIR/human/games.sqlite``, is the players'
history of them.

The opponents are the example bots (``builtin:NAME``) for now; hosted versions and
connected bots are not offered yet (docs/human-seat.md, "In the arena").
"""

from __future__ import annotations

import asyncio
import secrets
import sqlite3
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tacocat_arena.human.local import HumanMatch, human_config, run_match
from tacocat_arena.human.relay import Relay
from tacocat_arena.launch.builtins import BUILTINS
from tacocat_arena.tournament.config import ConfigError, load_config

#: Person's games at once in one arena (each is a bot process and a referee).
MAX_LIVE = 4
#: Finished challenges whose page still answers (its last state), the oldest dropped first.
KEEP_FINISHED = 64

_SCHEMA = """
CREATE TABLE IF NOT EXISTS human_games (
    number INTEGER PRIMARY KEY,
    player TEXT NOT NULL,
    opponent TEXT NOT NULL,
    folder TEXT NOT NULL,
    started_at REAL NOT NULL,
    result TEXT NOT NULL DEFAULT '',
    reason TEXT NOT NULL DEFAULT '',
    rounds INTEGER NOT NULL DEFAULT 0,
    seat INTEGER
)
"""


class ChallengeError(ValueError):
    """A challenge the arena refuses; the message says why (the web answers 409)."""


@dataclass
class Challenge:
    """One person's game: its page's key, its row's number and the relay of its seat."""

    key: str
    number: int
    player: str
    opponent: str
    folder: Path
    relay: Relay
    done: bool = False


class Challenges:
    """The arena's person's games: started, looked up by their page's key, listed."""

    def __init__(
        self,
        folder: Path,
        *,
        bot_move_timeout_s: float,
        human_move_timeout_s: float = 120.0,
        spawn: Callable[[Coroutine[Any, Any, None]], object] | None = None,
    ) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.bot_move_timeout_s = bot_move_timeout_s
        self.human_move_timeout_s = human_move_timeout_s
        self.spawn = spawn or asyncio.ensure_future
        self.db = sqlite3.connect(folder / "games.sqlite", isolation_level=None)
        self.db.execute(_SCHEMA)
        self.by_key: dict[str, Challenge] = {}

    @staticmethod
    def opponents() -> list[str]:
        """What a person may challenge: the example bots."""
        return sorted(BUILTINS)

    def start(self, player: str, opponent: Any) -> Challenge:
        """Start ``player``'s game against ``opponent`` (an example bot's name); refused
        while the player has a game in play or the arena has ``MAX_LIVE``."""
        if not isinstance(opponent, str) or opponent.removeprefix("builtin:") not in BUILTINS:
            raise ChallengeError(
                f"opponent {str(opponent)[:40]!r} is not a bot you may challenge "
                f"(one of: {', '.join(self.opponents())})"
            )
        name = opponent.removeprefix("builtin:")
        live = [c for c in self.by_key.values() if not c.done]
        if any(c.player == player for c in live):
            raise ChallengeError("you have a game in play already: finish it first")
        if len(live) >= MAX_LIVE:
            raise ChallengeError(f"{MAX_LIVE} people are playing already: try again soon")
        bot = name if name != player else f"{name}-bot"
        number = self.db.execute(
            "INSERT INTO human_games (player, opponent, folder, started_at) VALUES (?, ?, '', ?)",
            (player, name, time.time()),
        ).lastrowid
        assert number is not None
        out = self.folder / str(number)
        self.db.execute("UPDATE human_games SET folder = ? WHERE number = ?", (str(out), number))
        try:
            config = load_config(
                None,
                {
                    "games_per_pairing": 2,
                    "seed": secrets.randbelow(2**62),
                    "move_timeout_s": self.bot_move_timeout_s,
                    "out": out,
                    "name": f"human game {number}",
                },
                [f"{player}=", f"{bot}=builtin:{name}"],
                external_ok=True,
            )
            config = human_config(config, player, self.human_move_timeout_s)
        except (ConfigError, ValueError) as error:
            self.db.execute("DELETE FROM human_games WHERE number = ?", (number,))
            raise ChallengeError(str(error)) from None
        challenge = Challenge(
            secrets.token_urlsafe(18), number, player, name, out, Relay(player, bot)
        )
        self.by_key[challenge.key] = challenge
        self._forget_old()
        self.spawn(self._play(challenge, config))
        return challenge

    async def _play(self, challenge: Challenge, config: Any) -> None:
        try:
            match = await run_match(config, challenge.relay, pair=False)
            self._record(challenge, match)
        finally:
            challenge.done = True

    def _record(self, challenge: Challenge, match: HumanMatch) -> None:
        if not match.results:
            return
        result = match.results[0]
        seat = result.seats.index(challenge.player)
        outcome = "draw" if result.winner is None else ("win" if result.winner == seat else "loss")
        self.db.execute(
            "UPDATE human_games SET result = ?, reason = ?, rounds = ?, seat = ? WHERE number = ?",
            (outcome, result.reason.value, result.rounds, seat, challenge.number),
        )

    def _forget_old(self) -> None:
        finished = [key for key, c in self.by_key.items() if c.done]
        for key in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del self.by_key[key]

    def get(self, key: str) -> Challenge | None:
        """The challenge whose page has ``key``."""
        return self.by_key.get(key)

    def history(self, player: str | None = None) -> list[dict[str, Any]]:
        """The person's games, newest first (every player's, or ``player``'s), unrated."""
        query = "SELECT number, player, opponent, started_at, result, reason, rounds, seat"
        query += " FROM human_games"
        rows = (
            self.db.execute(query + " WHERE player = ? ORDER BY number DESC", (player,))
            if player is not None
            else self.db.execute(query + " ORDER BY number DESC LIMIT 200")
        )
        keys = ("number", "player", "opponent", "started_at", "result", "reason", "rounds", "seat")
        return [dict(zip(keys, row, strict=True)) for row in rows]
