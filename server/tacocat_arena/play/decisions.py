"""A recorded game's decisions, one seat at a time: the position each was taken in, and what
the seat answered.

``replay --bot`` asks a bot every decision of a seat again and ``analyze`` re-searches them;
both need the same list: for every entry of the record's actions that the seat was asked for,
the game just before it (so ``build_view`` gives the very view the seat was shown, and nothing
more, I1/I2) and how the record says it was answered: the seat's own action, a fallback its
SDK played, a default the referee substituted (with what the bot sent), or a forfeit.  The
record is re-verified on the way (``engine.record.replay``), so a decision never comes from a
record that does not follow the rules.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tacocat_arena.engine import Action, DecisionKind, Game, Seat, SeatView, build_view
from tacocat_arena.engine.record import action_from_json, replay
from tacocat_arena.engine.types import Forfeit


class Answered(enum.Enum):
    """How the record says a decision was answered."""

    #: The seat's own action, applied as sent.
    OWN = "own"
    #: A legal action, but its SDK's default after the bot's code failed (``Action.fallback``).
    FALLBACK = "fallback"
    #: The referee played a default in its place (failure policy ``default_action``).
    SUBSTITUTED = "substituted"
    #: The seat failed the decision and forfeited the game.
    FORFEIT = "forfeit"


@dataclass(frozen=True)
class Decision:
    """One decision of one seat in a recorded game."""

    #: Index of the entry in the record's ``actions``.
    index: int
    seat: Seat
    round: int
    kind: DecisionKind
    #: The game just before the decision (a copy: read it, play on it, it is yours).
    game: Game
    #: What was applied: the seat's action, the referee's default, or the forfeit.
    played: Action | Forfeit
    answered: Answered
    #: The fallback's reason, the substitution's reason or the forfeit's detail.
    detail: str = ""
    #: The record's entry, as stored (timings, ``refused`` and its ``sent``).
    entry: Mapping[str, Any] | None = None

    @property
    def view(self) -> SeatView:
        """What the seat was shown (the one view builder's answer at that moment)."""
        return build_view(self.game, self.seat)

    @property
    def action(self) -> Action | None:
        """The action applied for the seat, or None for a forfeit."""
        return None if isinstance(self.played, Forfeit) else self.played


def seat_decisions(record: Mapping[str, Any], seat: Seat) -> list[Decision]:
    """Every decision ``seat`` was asked in ``record``, in order (RecordError if the record
    does not re-verify).  A forfeit counts as a decision when the seat had one pending (a
    timeout, a crash or an illegal answer while asked); a disconnect while it was not asked
    is no decision and is left out."""
    if seat not in (0, 1):
        raise ValueError(f"seat must be 0 or 1, got {seat!r}")
    entries = list(record.get("actions") or ())
    found: list[Decision] = []
    # The game when both seats were last asked at once: the second half of a simultaneous
    # decision is taken from there, so it is asked as the referee asked it (both at once;
    # the first commitment is in no view, so the seat's view is the same).
    both: list[Game | None] = [None]

    def before(index: int, game: Game) -> None:
        entry = entries[index]
        entry_seat, played = action_from_json(entry)
        earlier, both[0] = both[0], game.copy() if len(game.pending) == 2 else None
        if entry_seat != seat or seat not in game.pending or game.phase is None:
            return
        moment = both[0] or game.copy()
        if earlier is not None and game.pending == {seat} and earlier.phase is game.phase:
            moment = earlier
        if isinstance(played, Forfeit):
            answered, detail = Answered.FORFEIT, played.detail
        elif "substituted" in entry:
            answered, detail = Answered.SUBSTITUTED, str(entry.get("reason", ""))
        elif entry.get("fallback"):
            answered, detail = Answered.FALLBACK, str(entry["fallback"])
        else:
            answered, detail = Answered.OWN, ""
        found.append(
            Decision(
                index=index,
                seat=seat,
                round=game.round,
                kind=game.phase,
                game=moment,
                played=played,
                answered=answered,
                detail=detail,
                entry=entry,
            )
        )

    replay(record, before=before)
    return found


def record_seats(record: Mapping[str, Any], seat: Seat | None) -> tuple[Seat, ...]:
    """The seats to look at: ``seat`` alone, or both."""
    return (0, 1) if seat is None else (seat,)


__all__ = ["Answered", "Decision", "record_seats", "seat_decisions"]
