"""Reference policies for local play: uniform random, and a sensible heuristic.

A policy maps a ``SeatView`` with a pending decision to an action.  Randomness is passed in
as an ``rng`` so that every game played with policies stays reproducible.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Protocol

from tacocat_arena.engine import (
    Action,
    Attack,
    Card,
    DecisionKind,
    Defend,
    Duel,
    Replace,
    SeatView,
    distinct_values,
    legal_attacks,
    sample_defence,
)


class Policy(Protocol):
    """Anything that chooses an action for a view whose ``kind`` is not None."""

    def act(self, view: SeatView) -> Action:
        """Return a legal action for ``view.kind``."""
        ...


class RandomPolicy:
    """Random over each decision's options: a uniformly random subset of the hand to replace
    (a uniform count, then a subset, when R2 caps it); a random duel value; a random legal
    attack; for each attack card a random fitting card or a sacrifice."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng if rng is not None else random.Random(0)

    def act(self, view: SeatView) -> Action:
        """Pick uniformly among the legal options of the pending decision."""
        kind = view.kind
        if kind is None:
            raise ValueError("no decision is pending for this view")
        # int(random() * n) is uniform to within 2**-53: far cheaper than randrange.
        random_float = self.rng.random
        if kind is DecisionKind.DUEL:
            values = distinct_values(view.hand)
            return Duel(values[int(random_float() * len(values))])
        if kind is DecisionKind.ATTACK:
            attacks = legal_attacks(view.hand)
            return Attack(attacks[int(random_float() * len(attacks))])
        if kind is DecisionKind.DEFEND:
            return Defend(sample_defence(view.current_attack, view.hand, self.rng))
        hand = view.hand
        size = len(hand)
        if view.max_replace >= size:
            # No cap: every subset of the hand's cards is equally likely.
            mask = int(random_float() * (1 << size))
            return Replace(tuple(card for i, card in enumerate(hand) if mask >> i & 1))
        # Capped (R2): a uniform count, then a uniform subset of that many cards
        # (a partial Fisher-Yates shuffle).
        count = int(random_float() * (view.max_replace + 1))
        cards = list(hand)
        for index in range(count):
            pick = index + int(random_float() * (size - index))
            cards[index], cards[pick] = cards[pick], cards[index]
        return Replace(tuple(cards[:count]))


class GreedyPolicy:
    """A heuristic that plays the tug of war sensibly.

    The round is won by the lowest last card, and a sacrifice always costs the lowest card,
    so the policy guards its lowest card, fights with high ones, and replaces the middle.
    """

    MIDDLE = range(5, 9)

    def act(self, view: SeatView) -> Action:
        """Choose by the heuristic described in the class docstring."""
        if view.kind is None:
            raise ValueError("no decision is pending for this view")
        return greedy_action(
            view.kind, tuple(view.hand), view.max_replace, tuple(view.current_attack)
        )


def greedy_action(
    kind: DecisionKind, hand: tuple[Card, ...], max_replace: int, attack: tuple[Card, ...]
) -> Action:
    """``GreedyPolicy``'s choice from the few values it reads (for playouts that build no view):
    the decision, the sorted hand, the replace cap and the attack to answer."""
    if kind is DecisionKind.REPLACE:
        middle = [card for card in hand[1:] if card in GreedyPolicy.MIDDLE]
        return Replace(tuple(middle[:max_replace]))
    if kind is DecisionKind.DUEL:
        return Duel(hand[-1] if len(hand) > 2 else hand[0])
    if kind is DecisionKind.ATTACK:
        return _greedy_attack(hand)
    return _greedy_defence(attack, hand)


@lru_cache(maxsize=65536)
def _greedy_attack(hand: tuple[Card, ...]) -> Attack:
    return Attack(max(legal_attacks(hand), key=lambda cards: _attack_score(cards, hand)))


def _attack_score(cards: tuple[Card, ...], hand: tuple[Card, ...]) -> tuple[int, int, int]:
    spends_lowest = cards.count(hand[0]) > hand.count(hand[0]) - 1
    return (0 if spends_lowest else 1, len(cards), -max(cards))


@lru_cache(maxsize=65536)
def _greedy_defence(attack: tuple[Card, ...], hand: tuple[Card, ...]) -> Defend:
    pool = list(hand[1:])  # keep the lowest card for the showdown
    answers: list[Card | None] = []
    for card in attack:
        fitting = [value for value in pool if value >= card]
        if fitting:
            pool.remove(fitting[0])
            answers.append(fitting[0])
        else:
            answers.append(None)
    return Defend(tuple(answers))
