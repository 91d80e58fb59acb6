"""The referee's policy settings: clocks, grace, failure policy, per-session limits (all
around the engine)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any


class FailurePolicy(enum.Enum):
    """What an illegal or malformed answer, or a timeout, does to the game."""

    FORFEIT = "forfeit"  # the offending seat loses at once (the default)
    DEFAULT_ACTION = "default_action"  # the referee plays a default legal action instead


#: Added to every deadline before a decision counts as late.  The clock runs from hand-over
#: to the session until the Action is read, so it includes the transport both ways and the
#: referee's own queueing; the grace absorbs these and the scheduling jitter of a loaded
#: machine, so that a bot answering within its allowance is never forfeited by noise.  It is
#: never reported to the bot.
DEFAULT_GRACE_MS = 100


@dataclass(frozen=True)
class ClockSettings:
    """Time control of one game, measured by the referee from the moment a request is handed
    to the bot's session (queued for writing) to the moment its Action is read.

    ``decision_ms`` is each decision's allowance (0 = unlimited); time past it comes out of the
    per-game ``bank_ms`` (0 = no bank).  ``grace_ms`` is the documented slack on top.
    """

    decision_ms: int = 1000
    bank_ms: int = 0
    grace_ms: int = DEFAULT_GRACE_MS

    @classmethod
    def from_seconds(
        cls, move_timeout_s: float, time_bank_s: float = 0.0, *, grace_ms: int = DEFAULT_GRACE_MS
    ) -> ClockSettings:
        """The clock from the unit every command and config file takes, seconds: the one
        place they become the protocol's milliseconds."""
        return cls(round(move_timeout_s * 1000), round(time_bank_s * 1000), grace_ms)

    def __post_init__(self) -> None:
        for name in ("decision_ms", "bank_ms", "grace_ms"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0 (milliseconds), got {value!r}")


@dataclass(frozen=True)
class SessionLimits:
    """What one bot session may cost the referee, whatever the bot does.

    Outgoing: messages wait in the session's outbox while a write is in flight; a bot that
    lets more than ``max_outbox_messages`` or ``max_outbox_bytes`` pile up, or that takes
    no message for ``write_deadline_s`` (it stopped reading, e.g. with a tiny HTTP/2 window),
    is disconnected and loses its open games.  Incoming: each message that the referee
    ignores (a reply matching no open request, a duplicate, a second Hello) spends one token
    of a bucket of ``ignored_burst`` that refills at ``ignored_per_s``; an empty bucket ends
    the session.  Errors answering ignored messages are rate-limited the same way
    (``error_burst``, ``errors_per_s``); the ignored messages beyond it are counted and the
    count is reported in the next Error (coalesced), never answered one by one.
    """

    write_deadline_s: float = 5.0
    max_outbox_messages: int = 4096
    max_outbox_bytes: int = 8 * 1024 * 1024
    #: Largest batch the referee builds for a bot (the bot's own receive limit is 4 MiB).
    max_batch_bytes: int = 256 * 1024
    ignored_burst: int = 1024
    ignored_per_s: float = 64.0
    error_burst: int = 32
    errors_per_s: float = 8.0

    def __post_init__(self) -> None:
        for name in (
            "write_deadline_s",
            "max_outbox_messages",
            "max_outbox_bytes",
            "max_batch_bytes",
            "ignored_burst",
            "ignored_per_s",
            "error_burst",
            "errors_per_s",
        ):
            value = getattr(self, name)
            if not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"{name} must be a number > 0, got {value!r}")


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
    #: Back-pressure and input bounds of each session.
    limits: SessionLimits = SessionLimits()
    #: Bots with an allowance of their own, (name, decision_ms) pairs: a person's seat
    #: (``play human``) thinks for minutes where its bot opponent keeps ``clock``'s.  The
    #: bank and the grace stay ``clock``'s for every seat.
    allowances: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        for name, ms in self.allowances:
            if not isinstance(ms, int) or isinstance(ms, bool) or ms < 0:
                raise ValueError(
                    f"the allowance of {name!r} must be an integer >= 0 ms, got {ms!r}"
                )

    def allowance_ms(self, name: str) -> int:
        """The per-decision allowance of bot ``name``'s seat: its own, or ``clock``'s."""
        for own, ms in self.allowances:
            if own == name:
                return ms
        return self.clock.decision_ms

    def record_block(self, names: tuple[str, str] | None = None) -> dict[str, Any]:
        """The ``referee`` block of a game record: the clock and policy the game was played
        under, which ``verify`` re-runs every timing against (docs/game-record.md).  The one
        place its keys are named: ``verify`` refuses a block with any other.  When the
        seats of ``names`` have different allowances (``allowances``), ``seat_decision_ms``
        holds each seat's, index = seat, and ``decision_ms`` stays the referee's default."""
        clock = self.clock
        block: dict[str, Any] = {
            "decision_ms": clock.decision_ms,
            "bank_ms": clock.bank_ms,
            "grace_ms": clock.grace_ms,
            "failure_policy": self.failure_policy.value,
        }
        if names is not None:
            own = [self.allowance_ms(name) for name in names]
            if own != [clock.decision_ms] * 2:
                block[SEAT_ALLOWANCES_KEY] = own
        return block


#: The keys of a record's ``referee`` block (``RefereeSettings.record_block``).
RECORD_REFEREE_KEYS = tuple(RefereeSettings().record_block())
#: The optional key of a ``referee`` block whose seats had allowances of their own.
SEAT_ALLOWANCES_KEY = "seat_decision_ms"
