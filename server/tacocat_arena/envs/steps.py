"""The game one flat step at a time: what every adapter drives.

``StepGame`` wraps an engine ``Game``: one seat moves at a time, each step one id of the flat
action space (``codec``), and the engine receives the whole action when its last step is
taken.  The simultaneous decisions (R3, D1) are taken in seat order, seat 0 first: the engine
keeps a committed choice hidden until both have committed (its views and events show nothing
of it), so seat 1 decides exactly as if both chose at once.  That is the turn-based form of a
simultaneous game that OpenSpiel's ``convert_to_turn_based`` and PettingZoo's AEC API use.
"""

from __future__ import annotations

from typing import Any

from tacocat_arena.engine import (
    DEFAULT_RULESET,
    Action,
    Card,
    Event,
    Game,
    Ruleset,
    Seat,
    SeatView,
    build_view,
    public_event,
)
from tacocat_arena.envs.codec import ActionCodec

Answer = Card | None


class StepGame:
    """An engine game driven one flat action id at a time (see the module docstring)."""

    __slots__ = ("game", "codec", "chosen", "committed", "archive")

    def __init__(self, ruleset: Ruleset = DEFAULT_RULESET, seed: int = 0) -> None:
        self.game = Game(ruleset, seed)
        self.codec = ActionCodec.of(ruleset)
        #: The mover's choices so far in the decision it is building.
        self.chosen: tuple[Answer, ...] = ()
        #: A seat's committed, not yet revealed, simultaneous choice (known to that seat only).
        self.committed: dict[Seat, Action] = {}
        #: Events of earlier rounds kept from another game (a resampled world, see openspiel).
        self.archive: tuple[Event, ...] = ()

    @classmethod
    def around(cls, game: Game, archive: tuple[Event, ...] = ()) -> StepGame:
        """A step game over an existing engine game (a sampled world)."""
        steps = cls.__new__(cls)
        steps.game = game
        steps.codec = ActionCodec.of(game.ruleset)
        steps.chosen = ()
        steps.committed = {}
        steps.archive = archive
        return steps

    @property
    def ruleset(self) -> Ruleset:
        return self.game.ruleset

    @property
    def is_over(self) -> bool:
        """True once the engine game has an outcome."""
        return self.game.outcome is not None

    @property
    def mover(self) -> Seat | None:
        """The seat that takes the next step (the lower pending seat), None when over."""
        pending = self.game.pending
        return min(pending) if pending else None

    def view(self, seat: Seat) -> SeatView:
        """What ``seat`` may know now (the engine's one view builder)."""
        return build_view(self.game, seat)

    def chosen_by(self, seat: Seat) -> tuple[Answer, ...]:
        """``seat``'s choices so far (empty unless it is the mover)."""
        return self.chosen if seat == self.mover else ()

    def legal_ids(self) -> tuple[int, ...]:
        """The ids legal for the mover now (empty when the game is over)."""
        seat = self.mover
        if seat is None:
            return ()
        return self.codec.legal_ids(self.view(seat), self.chosen)

    def step(self, action_id: int) -> Action | None:
        """Take one step for the mover; return the engine action if it completed one.

        An illegal id raises ``IllegalActionError`` and changes nothing.
        """
        seat = self.mover
        if seat is None:
            raise ValueError("the game is over: no step can be taken")
        chosen, action = self.codec.step(self.view(seat), self.chosen, int(action_id))
        if action is None:
            self.chosen = chosen
            return None
        self.apply(seat, action)
        return action

    def apply(self, seat: Seat, action: Action) -> None:
        """Apply a whole engine action for ``seat`` (the mover), e.g. a policy's."""
        if seat != self.mover:
            raise ValueError(f"seat {seat} is not the mover (seat {self.mover} is)")
        game = self.game
        both = len(game.pending) == 2
        game.apply(seat, action)
        self.chosen = ()
        if both and game.pending:
            self.committed[seat] = action
        else:
            self.committed.clear()

    def returns(self) -> tuple[float, float]:
        """+1 for the winner, -1 for the loser, 0 each for a draw (or an unfinished game)."""
        outcome = self.game.outcome
        if outcome is None or outcome.winner is None:
            return (0.0, 0.0)
        return (1.0, -1.0) if outcome.winner == 0 else (-1.0, 1.0)

    def history(self, seat: Seat) -> str:
        """Everything ``seat`` has known, oldest first: its information state (perfect recall)."""
        parts = [f"seat {seat}"]
        for event in (*self.archive, *self.game.events):
            parts.append(_event_text(public_event(event, seat)))
        if seat in self.committed:
            parts.append(f"committed {self.committed[seat]}")
        if self.chosen and seat == self.mover:
            parts.append("chosen " + " ".join("x" if c is None else str(c) for c in self.chosen))
        return "\n".join(parts)

    def clone(self) -> StepGame:
        """An independent copy (the engine game's containers copied, its generator too)."""
        copy = StepGame.__new__(StepGame)
        copy.game = self.game.copy()
        copy.codec = self.codec
        copy.chosen = self.chosen
        copy.committed = dict(self.committed)
        copy.archive = self.archive
        return copy

    def __deepcopy__(self, memo: dict[int, Any]) -> StepGame:
        return self.clone()  # what OpenSpiel's clone of a Python state calls


def _event_text(event: Event) -> str:
    return " ".join(f"{key}={value}" for key, value in event.items())
