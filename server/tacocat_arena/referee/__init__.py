"""The gRPC referee: protocol <-> engine, clocks, connections and identities."""

from tacocat_arena.referee.match import GameReport, play_game
from tacocat_arena.referee.server import ArenaServicer, Referee, start_server
from tacocat_arena.referee.session import BotSession, SessionClosed
from tacocat_arena.referee.settings import (
    DEFAULT_GRACE_MS,
    ClockSettings,
    FailurePolicy,
    RefereeSettings,
)

__all__ = [
    "DEFAULT_GRACE_MS",
    "ArenaServicer",
    "BotSession",
    "ClockSettings",
    "FailurePolicy",
    "GameReport",
    "Referee",
    "RefereeSettings",
    "SessionClosed",
    "play_game",
    "start_server",
]
