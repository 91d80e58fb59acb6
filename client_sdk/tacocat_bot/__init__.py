"""tacocat_bot: write a Tacocat Spelled Backwards bot in Python.

    from tacocat_bot import Bot, run

    class MyBot(Bot):
        def replace(self, view): ...  # -> list of card values to discard (may be empty)
        def duel(self, view): ...     # -> one card value
        def attack(self, view): ...   # -> list of card values: one card, a set or a sequence
        def defend(self, view): ...   # -> one entry per attack card: a card value or None

    run(MyBot())

``play_local(bot_a, bot_b, games=...)`` plays bots against each other in process, with no
server.  See docs/sdk.md.
"""

from __future__ import annotations

# First of all: what a bot never uses is deferred only if nothing imported it before.
from tacocat_bot import _deferred  # noqa: F401

# isort: split

from typing import TYPE_CHECKING, Any

from tacocat_arena.engine.types import DecisionKind
from tacocat_arena.engine.view import SeatView
from tacocat_bot.bot import Bot
from tacocat_bot.client import SessionError, SessionSummary, run

if TYPE_CHECKING:
    from tacocat_bot.local import MatchScore, local_games, play_local

#: Loaded on first use: a bot that plays on a server never needs the local game loop, and
#: every start of a hosted bot pays for what its SDK imports (issue 41).
_LOCAL = frozenset({"MatchScore", "local_games", "play_local"})


def __getattr__(name: str) -> Any:
    if name in _LOCAL:
        from tacocat_bot import local

        value = getattr(local, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Bot",
    "DecisionKind",
    "MatchScore",
    "SeatView",
    "SessionError",
    "SessionSummary",
    "local_games",
    "play_local",
    "run",
]
