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

from tacocat_arena.engine import DecisionKind, SeatView
from tacocat_bot.bot import Bot
from tacocat_bot.client import SessionError, SessionSummary, run
from tacocat_bot.local import MatchScore, local_games, play_local

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
