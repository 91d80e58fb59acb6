"""The ruleset: every number and choice of the game as data (RULES-SPEC C2-C4, P10, W2).

A ruleset is an immutable value.  The defaults are RULES-SPEC's DECIDED values; a tournament
may override any field from TOML.  ``Ruleset.validate`` names the field and the constraint it
breaks, so a broken config fails at load, never in the middle of a game.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from tacocat_arena.engine.types import SEAT_0, SEAT_1, Seat

if TYPE_CHECKING:
    from pathlib import Path

#: RULES-SPEC C2 (DECIDED): value -> number of copies; 38 cards in all.
DEFAULT_DECK: Mapping[int, int] = {
    1: 2,
    2: 3,
    3: 3,
    4: 3,
    5: 4,
    6: 4,
    7: 4,
    8: 4,
    9: 3,
    10: 3,
    11: 3,
    12: 2,
}
#: RULES-SPEC C3 (DECIDED): hand size of each space, from seat 0's goal to seat 1's goal.
DEFAULT_HAND_SIZES: tuple[int, ...] = (4, 5, 6, 7, 6, 5, 4)


class TieRule(enum.Enum):
    """What a tied showdown does (RULES-SPEC P10)."""

    #: The source's rule: nobody moves, no tile, a new round is dealt on the same space.
    REPLAY_ROUND = "replay_round"
    #: Variant: the tie goes to the player the arrow points to (a two-arrow space still ties).
    ARROW = "arrow"


class RulesetError(ValueError):
    """A ruleset breaks a constraint; the message names the field and the constraint."""


def default_arrows(spaces: int) -> tuple[frozenset[Seat], ...]:
    """RULES-SPEC C4 (DECIDED): both arrows on the centre, else toward the player farther away.

    Seat 0's goal is before space 1, so on the spaces nearer seat 0's goal seat 1 is farther
    from winning and the arrow points to seat 1; on the other half it points to seat 0.
    """
    centre = spaces // 2
    arrows: list[frozenset[Seat]] = []
    for index in range(spaces):
        if index == centre:
            arrows.append(frozenset((SEAT_0, SEAT_1)))
        elif index < centre:
            arrows.append(frozenset((SEAT_1,)))
        else:
            arrows.append(frozenset((SEAT_0,)))
    return tuple(arrows)


@dataclass(frozen=True)
class Ruleset:
    """All the configurable rules of a game; hashable and immutable.

    ``hand_sizes[i]`` and ``arrows[i]`` describe board space ``i + 1`` (position 0 is seat 0's
    goal, position ``len(hand_sizes) + 1`` is seat 1's goal).
    """

    deck: Mapping[int, int] = field(default_factory=lambda: dict(DEFAULT_DECK))
    hand_sizes: tuple[int, ...] = DEFAULT_HAND_SIZES
    arrows: tuple[frozenset[Seat], ...] = field(
        default_factory=lambda: default_arrows(len(DEFAULT_HAND_SIZES))
    )
    tie_rule: TieRule = TieRule.REPLAY_ROUND
    max_rounds: int = 50

    def __post_init__(self) -> None:
        # Freeze the deck into a sorted tuple-backed mapping so equal rulesets hash equally.
        object.__setattr__(self, "deck", _FrozenDeck(self.deck))
        object.__setattr__(self, "hand_sizes", tuple(self.hand_sizes))
        object.__setattr__(self, "arrows", tuple(frozenset(a) for a in self.arrows))
        self.validate()
        sorted_cards = tuple(
            value for value, count in sorted(self.deck.items()) for _ in range(count)
        )
        object.__setattr__(self, "_cards", sorted_cards)
        object.__setattr__(self, "_deck_size", len(sorted_cards))

    # -- derived values -------------------------------------------------------------------
    @property
    def spaces(self) -> int:
        """Number of board spaces between the goals."""
        return len(self.hand_sizes)

    @property
    def centre(self) -> int:
        """Board position of the centre space, where the Tacocat starts (S1)."""
        return self.spaces // 2 + 1

    @property
    def deck_size(self) -> int:
        """Number of cards in the deck (counted once: encoders read it at every step)."""
        return self._deck_size  # type: ignore[attr-defined]

    def cards(self) -> list[int]:
        """The whole deck as a sorted list of card values (C2)."""
        return list(self._cards)  # type: ignore[attr-defined]

    def hand_size_at(self, position: int) -> int:
        """Hand size dealt to each player on board ``position`` (C3)."""
        return self.hand_sizes[position - 1]

    def arrows_at(self, position: int) -> frozenset[Seat]:
        """Seats the arrow(s) on board ``position`` point to (C4)."""
        return self.arrows[position - 1]

    # -- validation -----------------------------------------------------------------------
    def validate(self) -> None:
        """Raise RulesetError naming the first field that breaks a constraint."""
        if not self.deck:
            raise RulesetError("deck: must list at least one card value")
        for value, count in self.deck.items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise RulesetError(f"deck: card value {value!r} must be a positive integer")
            if not isinstance(count, int) or isinstance(count, bool) or count < 0:
                raise RulesetError(f"deck: count of value {value} must be an integer >= 0")
        if self.spaces < 1 or self.spaces % 2 == 0:
            raise RulesetError(
                f"hand_sizes: needs an odd number of spaces so there is a centre (S1); "
                f"got {self.spaces}"
            )
        deck_size = sum(self.deck.values())  # validated counts; deck_size is set after this
        # Indexes count from 0 as in TOML and Python; the space each one describes is named
        # too, since board positions count from 1.
        for index, size in enumerate(self.hand_sizes):
            where = f"hand_sizes[{index}] (space {index + 1})"
            if not isinstance(size, int) or isinstance(size, bool):
                raise RulesetError(f"{where}: must be an integer, got {size!r}")
            if size < 2:
                raise RulesetError(f"{where}: must be >= 2 (C3), got {size}")
            if 4 * size > deck_size:
                raise RulesetError(
                    f"{where}: 4 x {size} exceeds the deck of {deck_size} "
                    "cards; deal plus full replacement could exhaust the draw pile (C3)"
                )
        if len(self.arrows) != self.spaces:
            raise RulesetError(
                f"arrows: needs one entry per space ({self.spaces}), got {len(self.arrows)}"
            )
        for index, seats in enumerate(self.arrows):
            if not seats or not seats <= {SEAT_0, SEAT_1}:
                raise RulesetError(
                    f"arrows[{index}] (space {index + 1}): must name seat 0, seat 1 or both, "
                    f"got {sorted(seats)}"
                )
        if not isinstance(self.tie_rule, TieRule):
            raise RulesetError(f"tie_rule: must be a TieRule, got {self.tie_rule!r}")
        if not isinstance(self.max_rounds, int) or self.max_rounds < 1:
            raise RulesetError(f"max_rounds: must be an integer >= 1, got {self.max_rounds!r}")

    # -- loading ----------------------------------------------------------------------------
    def with_overrides(self, overrides: Mapping[str, Any]) -> Ruleset:
        """Return a copy with fields replaced from a TOML-style mapping (validated)."""
        return replace(self, **_parse_fields(overrides))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON/TOML-ready form; ``Ruleset.from_dict(r.to_dict()) == r``."""
        return {
            "deck": {str(v): c for v, c in sorted(self.deck.items())},
            "hand_sizes": list(self.hand_sizes),
            "arrows": [sorted(a) for a in self.arrows],
            "tie_rule": self.tie_rule.value,
            "max_rounds": self.max_rounds,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Ruleset:
        """Build a ruleset from a mapping; missing fields take the defaults."""
        fields = _parse_fields(data)
        if "hand_sizes" in fields and "arrows" not in fields:
            fields["arrows"] = default_arrows(len(fields["hand_sizes"]))
        return cls(**fields)

    @classmethod
    def from_toml(cls, path: str | Path) -> Ruleset:
        """Load a ruleset from a TOML file (top-level keys are the fields)."""
        import tomllib  # here: a bot's start (every view carries a ruleset) needs no TOML

        try:
            with open(path, "rb") as handle:
                data = tomllib.load(handle)
        except tomllib.TOMLDecodeError as error:
            raise RulesetError(f"{path}: not valid TOML: {error}") from error
        return cls.from_dict(data)


_KNOWN_FIELDS = ("deck", "hand_sizes", "arrows", "tie_rule", "max_rounds")


def _parse_fields(data: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(data) - set(_KNOWN_FIELDS))
    if unknown:
        raise RulesetError(
            f"{unknown[0]}: unknown ruleset field; known fields are {', '.join(_KNOWN_FIELDS)}"
        )
    fields: dict[str, Any] = {}
    if "deck" in data:
        deck = data["deck"]
        if not isinstance(deck, Mapping):
            raise RulesetError('deck: must be a table of value = count, e.g. {"1" = 2}')
        parsed: dict[int, int] = {}
        for key, count in deck.items():
            try:
                value = int(key)
            except (TypeError, ValueError):
                raise RulesetError(f"deck: key {key!r} is not an integer card value") from None
            parsed[value] = count
        fields["deck"] = parsed
    if "hand_sizes" in data:
        sizes = data["hand_sizes"]
        if not isinstance(sizes, (list, tuple)):
            raise RulesetError("hand_sizes: must be a list of integers, one per space")
        fields["hand_sizes"] = tuple(sizes)
    if "arrows" in data:
        arrows = data["arrows"]
        if not isinstance(arrows, (list, tuple)) or not all(
            isinstance(a, (list, tuple)) for a in arrows
        ):
            raise RulesetError("arrows: must be a list of lists of seats, e.g. [[1], [0, 1], [0]]")
        fields["arrows"] = tuple(frozenset(a) for a in arrows)
    if "tie_rule" in data:
        try:
            fields["tie_rule"] = TieRule(data["tie_rule"])
        except ValueError:
            choices = ", ".join(repr(t.value) for t in TieRule)
            raise RulesetError(f"tie_rule: {data['tie_rule']!r} is not one of {choices}") from None
    if "max_rounds" in data:
        fields["max_rounds"] = data["max_rounds"]
    return fields


class _FrozenDeck(Mapping[int, int]):
    """An immutable, hashable value -> count mapping.

    The sorted items make the hash and the order; a private dict beside them makes a look-up
    O(1) (encoders read a count for every card of every observation)."""

    __slots__ = ("_items", "_counts")

    def __init__(self, source: Mapping[int, int]) -> None:
        self._items = tuple(sorted(dict(source).items()))
        self._counts = dict(self._items)

    def __getitem__(self, key: int) -> int:
        return self._counts[key]

    def __contains__(self, key: object) -> bool:
        return key in self._counts

    def __iter__(self) -> Iterator[int]:
        return (value for value, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self._items) == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return repr(dict(self._items))


DEFAULT_RULESET = Ruleset()
