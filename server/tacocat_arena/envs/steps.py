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

    __slots__ = (
        "game",
        "codec",
        "chosen",
        "committed",
        "archive",
        "_moment",
        "_views",
        "_legal",
        "_legal_chosen",
    )

    def __init__(self, ruleset: Ruleset = DEFAULT_RULESET, seed: int = 0) -> None:
        self.game = Game(ruleset, seed)
        self.codec = ActionCodec.of(ruleset)
        #: The mover's choices so far in the decision it is building.
        self.chosen: tuple[Answer, ...] = ()
        #: A seat's committed, not yet revealed, simultaneous choice (known to that seat only).
        self.committed: dict[Seat, Action] = {}
        #: Events of earlier rounds kept from another game (a resampled world, see openspiel).
        self.archive: tuple[Event, ...] = ()
        self._forget()

    def _forget(self) -> None:
        """Drop the views and legal ids kept for the moment of the game they were built at.

        A step asks for the mover's view and legal ids several times (the adapter's mask, its
        observation, the step's own check), and nothing changes between: each is built once
        per moment.  The moment is the length of ``game.actions``, where the engine records
        every action it applies and every forfeit, so a change made to ``game`` directly (a
        rollout applying whole actions) is seen too."""
        self._moment = -1
        self._views: list[SeatView | None] = [None, None]
        self._legal: tuple[int, ...] = ()
        self._legal_chosen: tuple[Answer, ...] | None = None

    @classmethod
    def around(cls, game: Game, archive: tuple[Event, ...] = ()) -> StepGame:
        """A step game over an existing engine game (a sampled world)."""
        steps = cls.__new__(cls)
        steps.game = game
        steps.codec = ActionCodec.of(game.ruleset)
        steps.chosen = ()
        steps.committed = {}
        steps.archive = archive
        steps._forget()
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
        return MOVERS[self.game.pending]

    def view(self, seat: Seat) -> SeatView:
        """What ``seat`` may know now (the engine's one view builder, once per moment)."""
        game = self.game
        moment = len(game.actions)
        if moment != self._moment:
            self._moment = moment
            self._views = [None, None]
            self._legal_chosen = None
        view = self._views[seat]
        if view is None:
            view = self._views[seat] = build_view(game, seat)
        return view

    def chosen_by(self, seat: Seat) -> tuple[Answer, ...]:
        """``seat``'s choices so far (empty unless it is the mover)."""
        return self.chosen if seat == MOVERS[self.game.pending] else ()

    def legal_ids(self) -> tuple[int, ...]:
        """The ids legal for the mover now (empty when the game is over)."""
        game = self.game
        moment = len(game.actions)
        chosen = self.chosen
        if self._legal_chosen is chosen and self._moment == moment:
            return self._legal
        seat = MOVERS[game.pending]
        if seat is None:
            return ()
        if moment != self._moment:  # as ``view`` does, without the call
            self._moment = moment
            self._views = [None, None]
        view = self._views[seat]
        if view is None:
            view = self._views[seat] = build_view(game, seat)
        self._legal = legal = self.codec.legal_ids(view, chosen)
        self._legal_chosen = chosen
        return legal

    def step(self, action_id: int) -> Action | None:
        """Take one step for the mover; return the engine action if it completed one.

        An illegal id raises ``IllegalActionError`` and changes nothing.
        """
        game = self.game
        seat = MOVERS[game.pending]
        if seat is None:
            raise ValueError("the game is over: no step can be taken")
        chosen = self.chosen
        if self._legal_chosen is chosen and self._moment == len(game.actions):
            legal = self._legal  # kept for this moment: the mover's view is kept too
        else:
            legal = self.legal_ids()  # builds the mover's view of this moment too
        view: SeatView = self._views[seat]  # type: ignore[assignment]
        chosen, action = self.codec.step(view, chosen, int(action_id), legal)
        if action is None:
            self.chosen = chosen
            return None
        self._apply(game, seat, action)
        return action

    def apply(self, seat: Seat, action: Action) -> None:
        """Apply a whole engine action for ``seat`` (the mover), e.g. a policy's."""
        game = self.game
        if seat != MOVERS[game.pending]:
            raise ValueError(f"seat {seat} is not the mover (seat {self.mover} is)")
        self._apply(game, seat, action)

    def _apply(self, game: Game, seat: Seat, action: Action) -> None:
        both = len(game.pending) == 2
        game.apply(seat, action)
        self.chosen = ()
        if both and game.pending:
            self.committed[seat] = action
        elif self.committed:
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
        # The copy is at the same moment: what was built for this one holds for it too.
        copy._moment = self._moment
        copy._views = list(self._views)
        copy._legal = self._legal
        copy._legal_chosen = self._legal_chosen
        return copy

    def __deepcopy__(self, memo: dict[int, Any]) -> StepGame:
        return self.clone()  # what OpenSpiel's clone of a Python state calls


#: The mover of each set of pending seats: the lower one (a frozenset's hash is kept).
MOVERS: dict[frozenset[Seat], Seat | None] = {
    frozenset(): None,
    frozenset((0,)): 0,
    frozenset((1,)): 1,
    frozenset((0, 1)): 0,
}


def _event_text(event: Event) -> str:
    return " ".join(f"{key}={value}" for key, value in event.items())
