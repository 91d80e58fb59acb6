"""Ladder matchmaking: which connected bots to pair next.

A pair plays one duplicate deal (the same deal twice, seats swapped).  Pairs that have met
least come first, so a bot that has just connected is paired before anyone plays a rematch;
among those, bots close in rating come first, because a game between close bots tells the
ratings most; remaining ties are broken at random so no name is favoured.  The functions are
pure: the ladder passes in everything it decides from.

"Met" counts the games a pair has played **and** the games planned for it that are still in
flight (the arena's bookings): a free slot then goes to the least-met pair whatever else is
playing, instead of to whichever bots happen to be free (with one worker and one slow
connected bot, the two free versions were paired 252 times in a row, issue 35).

Two identities of one player never meet (``player_of``): a player's connected bot against its
own hosted version, or its probation version against the version it would retire, is a
player farming its own rating.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Collection, Mapping

from tacocat_arena.arena.submissions import parse_identity


def player_of(name: str) -> str:
    """The player a ladder name belongs to: ``alice`` for ``alice`` (its connected bot) and
    for ``alice@v2`` (its hosted version)."""
    identity = parse_identity(name)
    return name if identity is None else identity[0]


def same_player(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are two identities of one player (they never meet)."""
    return player_of(a) == player_of(b)


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
    (hosted play pairs a hosted version with anyone, never two connected bots).  Two
    identities of one player are never paired, whatever ``allowed`` says.
    """
    left = {bot: n for bot, n in capacity.items() if n > 0}
    if slots <= 0 or len(left) < 2:
        return []
    candidates = []
    for a, b in itertools.combinations(sorted(left), 2):
        if same_player(a, b) or allowed is not None and not allowed(a, b):
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


def hosted_pairs(
    hosted: Collection[str],
    connected: Mapping[str, int],
    meetings: Mapping[tuple[str, str], int],
    ratings: Mapping[str, float],
    batch_slots: int,
    mixed_slots: int,
    rng: random.Random,
    playing_mixed: Collection[str] = (),
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The hosted ladder's next pairs: ``(batches, mixed)``.

    ``batches`` pair two hosted versions (a batch on a worker: up to ``batch_slots``);
    ``mixed`` a connected bot with a hosted version or another connected bot (games on the
    arena's referee: up to ``mixed_slots``), each connected bot within its
    ``connected[bot]`` capacity; both kinds chosen together, least met first.  A hosted
    version's capacity is the free slots themselves, **not** one game at a time: every batch
    or mixed game starts processes of its own, so a version already playing takes a free
    slot when it has met the other least (capacity per slot, not per version).

    Except on the arena's own referee: there a version plays **one mixed pairing at a
    time** (capacity 1, and 0 while it is in ``playing_mixed``).  That referee knows a
    process by its instance name (``alice@v1``, its twin ``alice@v1~B``), so a second
    pairing at once would start a second ``alice@v1`` whose connection replaces the first's
    session mid-game (a disconnect the version did not cause).  Batches are not limited:
    each has a referee of its own.
    """
    batches = choose_pairs(
        dict.fromkeys(hosted, max(0, batch_slots)), meetings, ratings, batch_slots, rng
    )
    busy = set(playing_mixed)
    free = 1 if mixed_slots > 0 else 0
    capacity = {**connected, **{name: 0 if name in busy else free for name in hosted}}
    hosted_set = set(hosted)

    def not_two_hosted(a: str, b: str) -> bool:
        return a not in hosted_set or b not in hosted_set

    mixed = choose_pairs(capacity, meetings, ratings, mixed_slots, rng, not_two_hosted)
    return batches, mixed
