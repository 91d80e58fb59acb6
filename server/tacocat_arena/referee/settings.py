"""The referee's policy settings: clocks, grace, failure policy (all around the engine)."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class FailurePolicy(enum.Enum):
    """What an illegal or malformed answer, or a timeout, does to the game."""

    FORFEIT = "forfeit"  # the offending seat loses at once (the default)
    DEFAULT_ACTION = "default_action"  # the referee plays a default legal action instead


#: Added to every deadline before a decision counts as late.  It absorbs the referee's own
#: scheduling jitter and loopback latency, so that a bot that answers within its allowance is
#: never forfeited by noise on a loaded machine.  It is never reported to the bot.
DEFAULT_GRACE_MS = 100


@dataclass(frozen=True)
class ClockSettings:
    """Time control of one game, measured by the referee from send to receipt.

    ``decision_ms`` is each decision's allowance (0 = unlimited); time past it comes out of the
    per-game ``bank_ms`` (0 = no bank).  ``grace_ms`` is the documented slack on top.
    """

    decision_ms: int = 1000
    bank_ms: int = 0
    grace_ms: int = DEFAULT_GRACE_MS

    def __post_init__(self) -> None:
        for name in ("decision_ms", "bank_ms", "grace_ms"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0 (milliseconds), got {value!r}")


@dataclass(frozen=True)
class RefereeSettings:
    """Settings of a referee: clocks, failure policy and limits."""

    clock: ClockSettings = ClockSettings()
    failure_policy: FailurePolicy = FailurePolicy.FORFEIT
    #: Seconds a connecting bot has to send its Hello.
    handshake_timeout_s: float = 10.0
    #: Largest message accepted from a bot (an Action is a few dozen bytes).
    max_message_bytes: int = 64 * 1024
    #: Most games one session plays at once unless the bot asks for fewer.
    max_concurrent_games: int = 64
