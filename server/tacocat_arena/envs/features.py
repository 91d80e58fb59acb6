"""What a learner observes: a seat's view (``engine.view.build_view``) as numbers and text.

The features are a fixed-length vector of floats in [0, 1], a function of the ``SeatView``
and of the choices the seat has made so far in the decision it is building (see ``codec``),
and of nothing else, so they can hold nothing a seat may not know (RULES-SPEC I1, I2).
Card counts are divided by the deck's copies of the value, sizes by the largest hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from tacocat_arena.engine import Card, DecisionKind, Ruleset, SeatView

Answer = Card | None

_KINDS = (DecisionKind.REPLACE, DecisionKind.DUEL, DecisionKind.ATTACK, DecisionKind.DEFEND)


@dataclass(frozen=True)
class Features:
    """The observation layout of one ruleset; ``size`` floats, ``names`` says what each is."""

    ruleset: Ruleset
    values: tuple[Card, ...]
    names: tuple[str, ...]

    @classmethod
    def of(cls, ruleset: Ruleset) -> Features:
        """The layout for ``ruleset``."""
        return _features(ruleset)

    @property
    def size(self) -> int:
        """The length of the vector."""
        return len(self.names)

    def encode(self, view: SeatView, chosen: tuple[Answer, ...] = ()) -> list[float]:
        """The vector of ``view`` with ``chosen`` the seat's choices so far in its decision."""
        ruleset = self.ruleset
        deck = ruleset.deck
        values = self.values
        largest = max(ruleset.hand_sizes)
        positions = ruleset.spaces + 2
        out: list[float] = [1.0 if view.kind is kind else 0.0 for kind in _KINDS]
        out.append(float(view.seat))
        for cards in (view.hand, tuple(c for c in chosen if c is not None), view.current_attack):
            out.extend(cards.count(v) / deck[v] for v in values)
        answering = (
            view.current_attack[len(chosen)]
            if view.kind is DecisionKind.DEFEND and len(chosen) < len(view.current_attack)
            else None
        )
        out.extend(1.0 if v == answering else 0.0 for v in values)
        discards = view.discards
        out.extend(discards.count(v) / deck[v] for v in values)
        out.extend(1.0 if p == view.tacocat else 0.0 for p in range(positions))
        out.extend(1.0 if covered else 0.0 for covered in view.covered)
        out.append(chosen.count(None) / largest)
        out.append(view.opponent_hand_size / largest)
        out.append(view.draw_pile_size / ruleset.deck_size)
        out.append(view.max_replace / largest)
        out.append(min(view.round, ruleset.max_rounds) / ruleset.max_rounds)
        out.append(view.distance_to_goal() / (ruleset.spaces + 1))
        out.append(view.distance_to_goal(view.opponent) / (ruleset.spaces + 1))
        out.append(1.0 if view.attacker == view.seat else 0.0)
        return out

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
