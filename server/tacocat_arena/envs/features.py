"""What a learner observes: a seat's view (``engine.view.build_view``) as numbers and text.

The features are a fixed-length vector of floats in [0, 1], a function of the ``SeatView``
and of the choices the seat has made so far in the decision it is building (see ``codec``),
and of nothing else, so they can hold nothing a seat may not know (RULES-SPEC I1, I2).
Card counts are divided by the deck's copies of the value, sizes by the largest hand.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from operator import truediv
from struct import Struct

from tacocat_arena.engine import Card, DecisionKind, Ruleset, SeatView

Answer = Card | None

_KINDS = (DecisionKind.REPLACE, DecisionKind.DUEL, DecisionKind.ATTACK, DecisionKind.DEFEND)


@dataclass(frozen=True)
class Features:
    """The observation layout of one ruleset; ``size`` floats, ``names`` says what each is."""

    ruleset: Ruleset
    values: tuple[Card, ...]
    names: tuple[str, ...]
    # The ruleset's constants, worked out once (``of`` makes one layout per ruleset).
    _layout: _Layout = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_layout", _Layout(self.ruleset, self.values))

    @classmethod
    def of(cls, ruleset: Ruleset) -> Features:
        """The layout for ``ruleset``."""
        return _features(ruleset)

    @property
    def size(self) -> int:
        """The length of the vector."""
        return len(self.names)

    def encode(self, view: SeatView, chosen: tuple[Answer, ...] = ()) -> list[float]:
        """The vector of ``view`` with ``chosen`` the seat's choices so far in its decision,
        as Python floats of the float32 values the adapters' observations hold (``pack``)."""
        return array("f", self.pack(view, chosen)).tolist()

    def pack(self, view: SeatView, chosen: tuple[Answer, ...] = ()) -> bytearray:
        """The vector as native float32s: a new buffer each call, for ``numpy.frombuffer``.

        Made in one join of its groups' bytes: the card groups, the kind and seat, and the
        board come from tables of the segments already made (a segment is a function of a
        tuple of cards, of the kind and seat, or of the Tacocat's position and the covered
        spaces), the last eight floats are packed at once.  Building a float32 array from a
        list of 91 Python floats costs several times this.
        """
        layout = self._layout
        counts, kept = layout.counts, layout.kept.get  # kept segments: no call to make
        kind = view.kind
        seat = view.seat
        attack = view.current_attack
        answering = layout.no_card
        picked: tuple[Card, ...] = ()
        sacrifices = 0.0
        if chosen:
            picked = tuple(c for c in chosen if c is not None)
            sacrifices = (len(chosen) - len(picked)) / layout.largest
        if kind is DecisionKind.DEFEND and len(chosen) < len(attack):
            answering = layout.answering[attack[len(chosen)]]
        kept_board = layout.boards.get((view.tacocat, view.covered))
        board, first, second = kept_board or layout.board(view)
        largest = layout.largest
        hand, discards = view.hand, view.discards
        return bytearray().join(
            (
                layout.heads[seat][4 if kind is None else _KINDS.index(kind)],
                kept(hand) or counts(hand),
                kept(picked) or counts(picked),
                kept(attack) or counts(attack),
                answering,
                kept(discards) or counts(discards),
                board,
                _TAIL(
                    sacrifices,
                    view.opponent_hand_size / largest,
                    view.draw_pile_size / layout.deck_size,
                    view.max_replace / largest,
                    min(view.round, layout.max_rounds) / layout.max_rounds,
                    first if seat == 0 else second,  # the distance to its own goal
                    second if seat == 0 else first,
                    1.0 if view.attacker == seat else 0.0,
                ),
            )
        )

    def describe(self, view: SeatView, chosen: tuple[Answer, ...] = ()) -> str:
        """A one-line text of the same view (OpenSpiel's observation string)."""
        covered = "".join("#" if c else "." for c in view.covered)
        kind = view.kind.value if view.kind is not None else "waiting"
        text = (
            f"seat {view.seat} round {view.round} tacocat {view.tacocat} board {covered} "
            f"hand {_cards(view.hand)} opponent {view.opponent_hand_size} "
            f"pile {view.draw_pile_size} discards {_cards(view.discards)} {kind}"
        )
        if view.kind is DecisionKind.REPLACE:
            text += f" max {view.max_replace}"
        if view.current_attack:
            text += f" attack {_cards(view.current_attack)}"
        if chosen:
            text += " chosen " + " ".join("x" if c is None else str(c) for c in chosen)
        return text


def _cards(cards: tuple[Card, ...]) -> str:
    return "[" + " ".join(map(str, cards)) + "]"


#: How many segments a layout's tables keep before they start again (a default board has
#: 1,152 arrangements; hands, attacks and discards, tens of thousands).
_TABLE_LIMIT = 1 << 16
_Board = tuple[bytes, float, float]
#: The last eight features (the scalars), packed at once as native float32s.
_TAIL = Struct("8f").pack


def _floats(values: Iterable[float]) -> bytes:
    """``values`` as native float32s (as numpy's float32 holds them)."""
    return array("f", values).tobytes()


class _Layout:
    """The ruleset's constants and the tables of segments that ``Features.encode`` joins.

    The groups follow ``_features``'s names: kinds, seat, then one slot per card value for
    hand, chosen, attack, answering and discards, the Tacocat's position and the covered
    spaces, then the scalars."""

    __slots__ = (
        "values",
        "heads",
        "answering",
        "no_card",
        "copies",
        "largest",
        "deck_size",
        "max_rounds",
        "spaces",
        "kept",
        "boards",
    )

    def __init__(self, ruleset: Ruleset, values: tuple[Card, ...]) -> None:
        self.values = values
        #: The kind and seat segment: by seat, then by position in _KINDS (found by identity:
        #: hashing an Enum member runs Python code), the fifth for no decision pending.
        self.heads = tuple(
            tuple(
                _floats([*(1.0 if kind is each else 0.0 for each in _KINDS), float(seat)])
                for kind in (*_KINDS, None)
            )
            for seat in (0, 1)
        )
        self.answering = {v: _floats(1.0 if v == w else 0.0 for w in values) for v in values}
        self.no_card = _floats(0.0 for _ in values)
        self.copies = tuple(ruleset.deck[v] for v in values)
        self.largest = max(ruleset.hand_sizes)
        self.deck_size = ruleset.deck_size
        self.max_rounds = ruleset.max_rounds
        self.spaces = ruleset.spaces
        #: The segments of ``counts`` made so far (never empty, so ``or`` can test them).
        self.kept: dict[tuple[Card, ...], bytes] = {(): self.no_card}
        self.boards: dict[tuple[int, tuple[bool, ...]], _Board] = {}

    def counts(self, cards: tuple[Card, ...]) -> bytes:
        """Per card value, the copies of it in ``cards`` over the deck's copies of it."""
        segment = self.kept.get(cards)
        if segment is None:
            if len(self.kept) >= _TABLE_LIMIT:
                self.kept.clear()
                self.kept[()] = self.no_card
            segment = _floats(map(truediv, map(cards.count, self.values), self.copies))
            self.kept[cards] = segment
        return segment

    def board(self, view: SeatView) -> _Board:
        """The Tacocat's one-hot position and the covered spaces, as floats, and each seat's
        distance to its goal over ``spaces + 1`` (seat 0's, then seat 1's): a function of
        the position and the covered spaces alone."""
        tacocat, covered = view.tacocat, view.covered
        key = (tacocat, covered)
        board = self.boards.get(key)
        if board is None:
            if len(self.boards) >= _TABLE_LIMIT:
                self.boards.clear()
            floats = [1.0 if p == tacocat else 0.0 for p in range(len(covered))]
            floats.extend(1.0 if c else 0.0 for c in covered)
            scale = self.spaces + 1
            board = self.boards[key] = (
                _floats(floats),
                view.distance_to_goal(0) / scale,
                view.distance_to_goal(1) / scale,
            )
        return board


@lru_cache(maxsize=64)
def _features(ruleset: Ruleset) -> Features:
    values = tuple(sorted(set(ruleset.cards())))
    names: list[str] = [f"kind_{kind.value}" for kind in _KINDS]
    names.append("seat")
    for group in ("hand", "chosen", "attack", "answering", "discards"):
        names.extend(f"{group}_{v}" for v in values)
    positions = ruleset.spaces + 2
    names.extend(f"tacocat_at_{p}" for p in range(positions))
    names.extend(f"covered_{p}" for p in range(positions))
    names.extend(
        [
            "chosen_sacrifices",
            "opponent_hand_size",
            "draw_pile_size",
            "max_replace",
            "round",
            "distance_to_own_goal",
            "distance_to_opponent_goal",
            "is_attacker",
        ]
    )
    return Features(ruleset, values, tuple(names))
