"""The flat action space: every decision of the game as a sequence of single choices.

A learning library wants a fixed, small set of action ids and a legal subset of it at every
step, while a defence against a jumbo attack can have thousands of options.  So a decision is
built one card at a time, and the engine receives the whole action only when it is complete:

- ``card(v)`` (one id per card value of the deck, lowest first): discard a ``v`` (replace),
  duel with ``v``, add ``v`` to the attack, or defend the attack card being answered with ``v``;
- ``DONE``: the replace or the attack is complete;
- ``SACRIFICE``: answer the attack card being answered with a sacrifice (P2, P4).

Replaced and attack cards are chosen in ascending order, so each engine action has exactly
one path; a defence answers the attack's cards in their order (as ``Defend.answers`` does).
Legality at every step is read from the engine's own enumerations (``legal_attacks``,
``defence_options``, the view's ``max_replace``): every legal engine action is reachable and no
path reaches an illegal one.  docs/envs.md has the table.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from tacocat_arena.engine import (
    Action,
    Attack,
    Card,
    DecisionKind,
    Defend,
    Duel,
    IllegalActionError,
    Replace,
    Ruleset,
    SeatView,
    legal_attacks,
)

Answer = Card | None
#: The attack table's key: the hand and the cards chosen so far.
_AttackKey = tuple[tuple[Card, ...], tuple[Answer, ...]]
#: How many answers the attack table keeps before it starts again (a few MB at most).
_TABLE_LIMIT = 1 << 16


@dataclass(frozen=True)
class ActionCodec:
    """The flat action ids of one ruleset's deck: ``card(v)`` ids, then DONE, then SACRIFICE."""

    values: tuple[Card, ...]
    #: The id that completes a replace or an attack.
    done: int = field(init=False, compare=False)
    #: The id that answers the attack card being answered with a sacrifice.
    sacrifice: int = field(init=False, compare=False)
    #: How many ids there are (the size of the action space).
    size: int = field(init=False, compare=False)
    # Per-codec constants and tables, made once (a codec is made once per ruleset, ``of``);
    # plain attributes, not properties, since every step reads them.
    _index: dict[Card, int] = field(init=False, repr=False, compare=False)
    _card_id: Callable[[Card], int] = field(init=False, repr=False, compare=False)
    _attack: dict[_AttackKey, tuple[int, ...]] = field(init=False, repr=False, compare=False)
    _duels: tuple[Duel, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        count = len(self.values)
        object.__setattr__(self, "done", count)
        object.__setattr__(self, "sacrifice", count + 1)
        object.__setattr__(self, "size", count + 2)
        object.__setattr__(self, "_index", {v: i for i, v in enumerate(self.values)})
        object.__setattr__(self, "_card_id", self._index.__getitem__)
        object.__setattr__(self, "_attack", {})
        # Actions are immutable values: one Duel per card id serves every duel.
        object.__setattr__(self, "_duels", tuple(Duel(v) for v in self.values))

    @classmethod
    def of(cls, ruleset: Ruleset) -> ActionCodec:
        """The codec of ``ruleset`` (its deck's distinct values decide the ids)."""
        return _codec(ruleset)

    def card(self, value: Card) -> int:
        """The id of card value ``value``."""
        return self._index[value]

    def value(self, action_id: int) -> Card:
        """The card value of a ``card(v)`` id."""
        return self.values[action_id]

    def name(self, action_id: int) -> str:
        """A short readable name of an id: ``"7"``, ``"done"`` or ``"sacrifice"``."""
        if action_id == self.done:
            return "done"
        if action_id == self.sacrifice:
            return "sacrifice"
        return str(self.values[action_id])

    def legal_ids(self, view: SeatView, chosen: tuple[Answer, ...]) -> tuple[int, ...]:
        """The ids legal for ``view``'s pending decision after the choices ``chosen``, ascending.

        Worked out from the hand (sorted, as the engine keeps every hand) by slicing it at
        the lowest card allowed, which costs less than looking an answer up in a table would
        (hands rarely repeat); an attack's are kept per hand and choices (see ``_attacks``)."""
        kind = view.kind
        if kind is None:
            return ()
        hand = view.hand
        if kind is DecisionKind.DEFEND:
            # P2, P4: a card of the hand not named yet, at least the attack card answered.
            limit = view.current_attack[len(chosen)]
            cards: Sequence[Card] = hand[bisect_left(hand, limit) :]
            if chosen:
                cards = _without(cards, chosen, limit)
            return (*map(self._card_id, dict.fromkeys(cards)), self.sacrifice)
        if kind is DecisionKind.REPLACE:
            # R1, R2: ascending cards still in hand, at most max_replace of them, then done.
            if len(chosen) >= view.max_replace:
                return (self.done,)
            if not chosen:
                return (*map(self._card_id, dict.fromkeys(hand)), self.done)
            floor: Card = chosen[-1]  # type: ignore[assignment]
            cards = _without(hand[bisect_left(hand, floor) :], chosen, floor)
            return (*map(self._card_id, dict.fromkeys(cards)), self.done)
        if kind is DecisionKind.DUEL:  # D1: any card of the hand
            return tuple(map(self._card_id, dict.fromkeys(hand)))
        return self._attacks(hand, chosen)

    def _attacks(self, hand: tuple[Card, ...], chosen: tuple[Answer, ...]) -> tuple[int, ...]:
        """The next cards of the legal attacks (``legal_attacks`` lists each as a sorted
        tuple) that begin with the cards chosen, and done if those make one; kept in a
        bounded table, since going through a hand's attacks costs more than a look-up."""
        key = (hand, chosen)
        table = self._attack
        ids = table.get(key)
        if ids is None:
            if len(table) >= _TABLE_LIMIT:
                table.clear()
            attacks = legal_attacks(hand)
            size = len(chosen)
            if not size:
                ids = tuple(map(self._card_id, sorted({a[0] for a in attacks})))
            else:
                nexts = sorted({a[size] for a in attacks if len(a) > size and a[:size] == chosen})
                done = (self.done,) if chosen in attacks else ()
                ids = (*map(self._card_id, nexts), *done)
            table[key] = ids
        return ids

    def step(
        self,
        view: SeatView,
        chosen: tuple[Answer, ...],
        action_id: int,
        legal: tuple[int, ...] | None = None,
    ) -> tuple[tuple[Answer, ...], Action | None]:
        """Take one step: the choices so far, and the engine action once it is complete.

        ``legal`` is ``legal_ids(view, chosen)`` when the caller has it already (a step game
        keeps it for the step).  Raises ``IllegalActionError`` (naming the rule of the
        decision) for an id that is not legal now; ``chosen`` is never changed.
        """
        if legal is None:
            legal = self.legal_ids(view, chosen)
        if action_id not in legal:
            raise IllegalActionError(
                _RULE.get(view.kind, "A0") if view.kind is not None else "W1",
                f"action id {action_id!r} ({self._describe(action_id)}) is not legal now; "
                f"legal ids: {', '.join(f'{i} ({self.label(i)})' for i in legal) or 'none'}",
            )
        kind = view.kind
        if kind is DecisionKind.DUEL:
            return (), self._duels[action_id]
        if action_id == self.done:  # a replace or an attack: only a defence holds sacrifices
            cards: tuple[Card, ...] = chosen  # type: ignore[assignment]
            return (), Replace(cards) if kind is DecisionKind.REPLACE else Attack(cards)
        answer: Answer = None if action_id == self.sacrifice else self.values[action_id]
        chosen = (*chosen, answer)
        if kind is DecisionKind.DEFEND and len(chosen) == len(view.current_attack):
            return (), Defend(chosen)
        return chosen, None

    def label(self, action_id: int) -> str:
        """What an id means, said so that it cannot be taken for an id: ``"card 7"``,
        ``"done"`` or ``"sacrifice"`` (error messages list ids with their labels)."""
        name = self.name(action_id)
        return name if action_id >= self.done else f"card {name}"

    def path(self, action: Action) -> tuple[int, ...]:
        """The ids that build ``action`` (the inverse of ``step``): for tests and teaching."""
        index = self._index
        if isinstance(action, Duel):
            return (index[action.card],)
        if isinstance(action, Defend):
            return tuple(self.sacrifice if a is None else index[a] for a in action.answers)
        return (*(index[c] for c in sorted(action.cards)), self.done)

    def _describe(self, action_id: object) -> str:
        if isinstance(action_id, int) and 0 <= action_id < self.size:
            return self.label(action_id)
        return f"outside 0..{self.size - 1}"


def _without(cards: Sequence[Card], chosen: tuple[Answer, ...], floor: Card) -> list[Card]:
    """``cards`` (the hand from ``floor`` up) less the cards of ``chosen`` at least ``floor``
    (the lower ones are not among them): what is left of it to choose from."""
    rest = list(cards)
    for answer in chosen:
        if answer is not None and answer >= floor:
            rest.remove(answer)
    return rest


_RULE = {
    DecisionKind.REPLACE: "R1",
    DecisionKind.DUEL: "D1",
    DecisionKind.ATTACK: "P3",
    DecisionKind.DEFEND: "P4",
}


@lru_cache(maxsize=64)
def _codec(ruleset: Ruleset) -> ActionCodec:
    return ActionCodec(tuple(sorted(set(ruleset.cards()))))
