"""Ladder matchmaking: which connected bots to pair next.

A pair plays one duplicate deal (the same deal twice, seats swapped).  Pairs that have met
least come first, so a bot that has just connected is paired before anyone plays a rematch;
among those, bots close in rating come first, because a game between close bots tells the
ratings most; remaining ties are broken at random so no name is favoured.  The function is
pure: the ladder passes in everything it decides from.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Mapping


def pair_key(a: str, b: str) -> tuple[str, str]:
    """The unordered pair ``{a, b}`` as a sorted tuple (how meetings are counted)."""
    return (a, b) if a < b else (b, a)


def choose_pairs(
    capacity: Mapping[str, int],
    meetings: Mapping[tuple[str, str], int],
    ratings: Mapping[str, float],
    slots: int,
    rng: random.Random,
    allowed: Callable[[str, str], bool] | None = None,
) -> list[tuple[str, str]]:
    """Up to ``slots`` pairs to start now, best first.

    ``capacity[bot]`` is how many more pairs the bot may play at once (bots at 0 are left
    out); ``meetings[pair_key(a, b)]`` how many pairs a and b have played; ``ratings`` the
    current rating of each bot (missing = 0).  A bot appears in at most ``capacity[bot]``
    of the chosen pairs; ``allowed(a, b)``, when given, says which pairs may be chosen at all
    (hosted play pairs a hosted version with anyone, never two connected bots).
    """
    left = {bot: n for bot, n in capacity.items() if n > 0}
    if slots <= 0 or len(left) < 2:
        return []
    candidates = []
    for a, b in itertools.combinations(sorted(left), 2):
        if allowed is not None and not allowed(a, b):
            continue
        key = pair_key(a, b)
        gap = abs(ratings.get(a, 0.0) - ratings.get(b, 0.0))
        candidates.append((meetings.get(key, 0), gap, rng.random(), key))
    candidates.sort()
    chosen: list[tuple[str, str]] = []
    for *_, (a, b) in candidates:
        if len(chosen) == slots:
            break
        if left[a] > 0 and left[b] > 0:
            # Who opens the deal in seat 0 is drawn: the pair plays both seatings anyway.
            chosen.append((a, b) if rng.random() < 0.5 else (b, a))
            left[a] -= 1
            left[b] -= 1
    return chosen
