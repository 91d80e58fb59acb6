"""The bot author's base class.

Subclass ``Bot`` and implement the four decisions.  Each receives a ``SeatView``
(``tacocat_arena.engine.SeatView``): ``view.hand``, ``view.legal`` (the legal options),
``view.events`` (this round so far), ``view.current_attack``, ``view.tacocat`` and more; see
docs/sdk.md.  Answers are plain values: lists of card values, or one card value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tacocat_arena.engine.types import (
    Action,
    Attack,
    Card,
    DecisionKind,
    Defend,
    Duel,
    Replace,
)

if TYPE_CHECKING:
    from tacocat_arena.engine.view import SeatView


class Bot:
    """Base class of a bot: override the four decision methods.

    The defaults are legal but weak (keep the hand, duel the lowest card, attack with the
    lowest single card, sacrifice everything), so a half-written bot still plays.
    """

    #: Shown in tournament tables when no name is given by the organiser.
    name = "bot"

    def replace(self, view: SeatView) -> Sequence[Card]:
        """Card values to discard and redraw (at most ``view.legal.max_replace``; may be empty)."""
        return []

    def duel(self, view: SeatView) -> Card:
        """One card value of the hand for the duel (D1)."""
        return view.hand[0]

    def attack(self, view: SeatView) -> Sequence[Card]:
        """One card, a set or a sequence from the hand; keep at least one card (P1-P6).
        ``view.legal.attacks`` lists every legal attack."""
        return [view.hand[0]]

    def defend(self, view: SeatView) -> Sequence[Card | None]:
        """One answer per card of ``view.current_attack``, in order: a card value >= it that
        defends it, or None to sacrifice (your lowest card not named) (P2, P4)."""
        return [None] * len(view.current_attack)

    def on_game_start(self, game_id: str, seat: int, opponent: str) -> None:
        """Called when a game starts (optional)."""

    def on_game_end(self, game_id: str, result: str, reason: str) -> None:
        """Called when a game ends; ``result`` is "win", "loss" or "draw" (optional)."""

    # -- the SDK's side ---------------------------------------------------------------------
    def act(self, view: SeatView) -> Action:
        """Dispatch ``view`` to the decision method and wrap its answer as an engine action."""
        kind = view.kind
        if kind is DecisionKind.DUEL:
            return Duel(int(self.duel(view)))
        if kind is DecisionKind.ATTACK:
            return Attack(tuple(map(int, self.attack(view))))
        if kind is DecisionKind.DEFEND:
            return Defend(tuple([None if a is None else int(a) for a in self.defend(view)]))
        if kind is DecisionKind.REPLACE:
            return Replace(tuple(map(int, self.replace(view))))
        raise ValueError("this view has no pending decision")
