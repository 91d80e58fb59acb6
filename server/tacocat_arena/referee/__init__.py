"""The gRPC referee: protocol <-> engine, clocks, connections and identities."""

from tacocat_arena.referee.match import GameReport, PendingDecision, play_game
from tacocat_arena.referee.server import (
    ArenaServicer,
    ListenError,
    Referee,
    bind_port,
    grpc_server,
    start_server,
    stop_server,
)
from tacocat_arena.referee.session import BotSession, EndReason, SessionClosed
from tacocat_arena.referee.settings import (
    DEFAULT_GRACE_MS,
    ClockSettings,
    FailurePolicy,
    RefereeSettings,
    SessionLimits,
)

__all__ = [
    "DEFAULT_GRACE_MS",
    "ArenaServicer",
    "BotSession",
    "ClockSettings",
    "EndReason",
    "FailurePolicy",
    "GameReport",
    "ListenError",
    "PendingDecision",
    "Referee",
    "RefereeSettings",
    "SessionClosed",
    "SessionLimits",
    "bind_port",
    "grpc_server",
    "play_game",
    "start_server",
    "stop_server",
]
