"""Walk everything a seat's view lets a bot reach, and name what RULES-SPEC I2 forbids in it.

``reachable`` follows ordinary attribute access: every public attribute and property (names
without a leading underscore), the items of tuples, lists, sets and dicts (keys and values),
recursively.  ``forbidden`` then lists what no view of ``seat`` may hold (I2): the game itself
or its random state, its draw pile or full log, the opponent's hand before it is revealed,
cards the opponent drew, an opponent's committed but unrevealed simultaneous choice, the seed,
and any event in its full (hidden-card) form.

Used by the view walk (tests/test_view_walk.py) and by the peeking bot, which runs the same
walk from inside a bot, in process and over the referee.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Iterator, Mapping
from typing import Any

from tacocat_arena.engine import Ruleset
from tacocat_arena.engine.game import ReadOnlyEvent

LEAVES = (int, float, str, bytes, bool, type(None), enum.Enum)
# What a bot can reach but which holds no game state: the language itself.
_SKIP = (type, type(len), type(enum), type(lambda: 0), type(Iterator.__iter__))


def _is_small(obj: object) -> bool:
    """Values too small to hide anything: cards, counts, flags, names (not a 2**64 seed)."""
    kind = type(obj)
    return kind is str or kind is bool or obj is None or (kind is int and obj < 2**32)  # type: ignore[operator]


def _public_names(kind: type) -> tuple[str, ...]:
    names = _NAMES.get(kind)
    if names is None:
        names = tuple(name for name in dir(kind) if not name.startswith("_"))
        _NAMES[kind] = names
    return names


_NAMES: dict[type, tuple[str, ...]] = {}


def reachable(root: object, known: dict[int, object] | None = None) -> Iterator[tuple[str, object]]:
    """Every object reachable from ``root`` by ordinary attribute access, with its path.

    ``known`` (id -> object, kept alive there) holds immutable objects an earlier walk of the
    same game already checked: what an immutable object reaches never changes, so they are
    skipped, which is what makes walking every view of thousands of games affordable.
    """
    seen: dict[int, object] = {}  # holds every object, so that no id is reused meanwhile
    stack: list[tuple[str, object]] = [("view", root)]
    while stack:
        path, obj = stack.pop()
        if id(obj) in seen or (known is not None and id(obj) in known):
            continue
        seen[id(obj)] = obj
        yield path, obj
        if isinstance(obj, LEAVES):
            continue
        if isinstance(obj, Mapping):
            for key, value in obj.items():
                if not _is_small(value):
                    stack.append((f"{path}[{key!r}]", value))
                if not _is_small(key):
                    stack.append((f"{path}.keys()", key))
        elif isinstance(obj, (tuple, list, set, frozenset)):
            stack.extend(
                (f"{path}[{i}]", item) for i, item in enumerate(obj) if not _is_small(item)
            )
        for name in _public_names(type(obj)):
            try:
                value = getattr(obj, name)
            except Exception:  # a property that refuses is not a leak
                continue
            if callable(value) or isinstance(value, _SKIP):
                continue  # methods and classes: code, not state
            stack.append((f"{path}.{name}", value))


def peek(view: object, known: dict[int, object] | None = None) -> list[str]:
    """What a cheating bot finds from ``view`` alone: game objects, random state, or events
    holding hidden cards.  Empty when nothing (the peeking bot runs this)."""
    seat = getattr(view, "seat", None)
    problems = []
    for path, obj in reachable(view, known):
        if isinstance(obj, random.Random) or type(obj).__name__ == "Game":
            problems.append(f"{path}: a {type(obj).__name__}")
        elif isinstance(obj, Mapping):
            if HIDDEN_KEYS & set(obj):
                problems.append(f"{path}: an event holding hidden cards")
            elif obj.get("type") == "replace" and obj.get("seat") != seat and "drawn" in obj:
                problems.append(f"{path}: cards the opponent drew")
    return problems


HIDDEN_KEYS = frozenset(("hands", "draw_pile", "seed"))


IMMUTABLE = (tuple, frozenset, ReadOnlyEvent, Ruleset, *LEAVES)


def forbidden(
    view: object, game: Any, seat: int, known: dict[int, object] | None = None
) -> list[str]:
    """What ``seat``'s ``view`` lets a bot reach that I2 forbids; empty when nothing.

    Pass the same ``known`` for every view of one game to skip what earlier walks checked.
    """
    opponent = 1 - seat
    hidden: dict[int, str] = {
        id(game): "the game",
        id(game._rng): "the game's random state",
        id(game.draw_pile): "the draw pile",
        id(game.events): "the full event log",
        id(game.hands): "both hands",
    }
    opponent_hand = game.hands[opponent]
    if opponent_hand and opponent_hand != game.hands[seat]:
        hidden[id(opponent_hand)] = "the opponent's hand"
    for event in game.events:
        if event["type"] in ("deal", "replace"):
            hidden[id(event)] = f"a full {event['type']} event"
        if event["type"] == "replace" and event["seat"] == opponent and event["drawn"]:
            hidden[id(event["drawn"])] = "cards the opponent drew"
    for committed in game._committed.values():
        hidden[id(committed)] = "the opponent's unrevealed choice"
    pile = tuple(game.draw_pile)
    walked = list(reachable(view, known))
    problems = []
    for path, obj in walked:
        if id(obj) in hidden:
            problems.append(f"{path}: {hidden[id(obj)]}")
        elif type(obj) is int and obj == game.seed and obj > 2**32:
            problems.append(f"{path}: the seed")
        elif isinstance(obj, (tuple, list)) and len(pile) > 1 and tuple(obj) == pile:
            problems.append(f"{path}: the draw pile's order")
        elif isinstance(obj, random.Random) or type(obj).__name__ == "Game":
            problems.append(f"{path}: a {type(obj).__name__}")
        elif isinstance(obj, Mapping):
            if HIDDEN_KEYS & set(obj):
                problems.append(f"{path}: an event holding hidden cards")
            elif obj.get("type") == "replace" and obj.get("seat") == opponent and "drawn" in obj:
                problems.append(f"{path}: cards the opponent drew")
    if known is not None and not problems:
        known.update((id(obj), obj) for _, obj in walked if isinstance(obj, IMMUTABLE))
    return problems
