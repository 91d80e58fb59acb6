"""Legal actions: validators, enumerators and samplers (RULES-SPEC R2, D1, P2-P6).

Hands are sorted lists (or tuples) of card values.  Attacks are few (at most a hundred or so
for a seven-card hand), so they are enumerated and cached per hand.  Defences are
combinatorial (one answer per attack card, from a multiset), so they get a validator, an
enumerator of distinct answers, and a uniform-per-answer sampler.

Every validator raises ``IllegalActionError`` with the rule ID and leaves its inputs alone.
"""

from __future__ import annotations

import random
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from functools import lru_cache

from tacocat_arena.engine.errors import IllegalActionError
from tacocat_arena.engine.types import Card

#: Hands the attack cache keeps (least recently used dropped).  An entry is about 330 bytes
#: (the hand, the cache's node, a tuple of shared attack tuples), so a full cache is about
#: 5 MB; the default deck has 43,666 hands of 2-7 cards, and new ones keep appearing for
#: tens of thousands of games, so an unbounded cache made a long-running arena grow toward
#: ~190 MB (issue 23, break 10).  16,384 hands keep the engine as fast as that did (issue 22).
HAND_CACHE = 16384

Hand = Sequence[Card]


def remove_cards(hand: Hand, cards: Sequence[Card], rule: str) -> list[Card]:
    """Return ``hand`` less the multiset ``cards``; raise ``rule: ...`` if it lacks one."""
    rest = list(hand)
    for card in cards:
        try:
            rest.remove(card)
        except ValueError:
            raise IllegalActionError(
                rule, f"card {card} is not in your hand {_fmt(hand)}"
            ) from None
    return rest


def check_attack_shape(cards: Sequence[Card], hand_size: int) -> None:
    """Raise unless ``cards`` is one card, a set or a sequence (P1, P3) leaving a card (P6)."""
    count = len(cards)
    if count == 0:
        raise IllegalActionError("P1", "an attack needs at least one card")
    if count >= hand_size:
        raise IllegalActionError(
            "P6",
            f"cannot attack with {count} of your {hand_size} cards: "
            "the attacker must keep at least one card",
        )
    if count == 1:
        return
    first = cards[0]
    if all(card == first for card in cards):
        return
    ordered = sorted(cards)
    if count >= 3 and all(b - a == 1 for a, b in zip(ordered, ordered[1:], strict=False)):
        return
    raise IllegalActionError(
        "P3",
        f"{_fmt(cards)} is neither a set (2+ cards of one value) nor a sequence "
        "(3+ consecutive values, each once)",
    )


@lru_cache(maxsize=HAND_CACHE)
def legal_attacks(hand: tuple[Card, ...]) -> tuple[tuple[Card, ...], ...]:
    """Every legal attack from a sorted ``hand``, each as a sorted tuple (P1, P3, P6).

    Singles first, then sets by value and size, then sequences by start and length.
    """
    limit = len(hand) - 1  # P6: keep at least one card
    if limit < 1:
        return ()
    counts: dict[Card, int] = {}
    for card in hand:
        counts[card] = counts.get(card, 0) + 1
    values = sorted(counts)
    attacks: list[tuple[Card, ...]] = [(value,) for value in values]
    for value in values:
        for size in range(2, min(counts[value], limit) + 1):
            attacks.append((value,) * size)
    for start_index, start in enumerate(values):
        run = [start]
        for value in values[start_index + 1 :]:
            if value != run[-1] + 1 or len(run) >= limit:
                break
            run.append(value)
            if len(run) >= 3:
                attacks.append(tuple(run))
    shared = _SHARED.setdefault
    return tuple([shared(attack, attack) for attack in attacks])


#: Each attack tuple ever listed, kept once.  Attacks are few (the singles, sets and runs of
#: a deck's values: 65 for the default deck), so a hand's cache entry is a tuple of shared
#: references rather than a tuple of fresh tuples: a fifth of the memory per hand.
_SHARED: dict[tuple[Card, ...], tuple[Card, ...]] = {}


def check_defence(attack: Sequence[Card], answers: Sequence[Card | None], hand: Hand) -> list[Card]:
    """Validate a defence (P2, P4); return the defender's hand after the named cards leave.

    A refusal cites the rule of the attack answered: P2 for a single card, P4 for a jumbo.
    """
    rule = "P2" if len(attack) == 1 else "P4"
    if len(answers) != len(attack):
        raise IllegalActionError(
            rule,
            f"give one answer per attack card: the attack {_fmt(attack)} has {len(attack)} "
            f"cards, the defence has {len(answers)} answers",
        )
    rest = list(hand)
    for attack_card, answer in zip(attack, answers, strict=True):
        if answer is None:
            continue
        if answer < attack_card:
            raise IllegalActionError(
                rule,
                f"{answer} cannot defend {attack_card}: a defence needs an equal or higher card",
            )
        try:
            rest.remove(answer)
        except ValueError:
            named = [a for a in answers if a is not None]
            raise IllegalActionError(
                rule, f"the defence names {_fmt(named)}, not all in your hand {_fmt(hand)}"
            ) from None
    return rest


def distinct_values(hand: tuple[Card, ...]) -> tuple[Card, ...]:
    """The distinct values of a hand, ascending (the legal duel cards, D1).

    Not cached: duel hands repeat too seldom (62% misses in a 4,096-hand cache), so a cache
    would cost more memory and as much time as it saved."""
    return tuple(sorted(set(hand)))


def defence_options(attack: Sequence[Card], hand: Hand) -> tuple[tuple[Card, ...], ...]:
    """For each attack card, the distinct hand values that may defend it (P2, P4)."""
    values = sorted(set(hand))
    return tuple(tuple(v for v in values if v >= card) for card in attack)


def enumerate_defences(attack: Sequence[Card], hand: Hand) -> Iterator[tuple[Card | None, ...]]:
    """Yield every distinct legal defence (answers as values, None = sacrifice), once each."""
    counts: dict[Card, int] = {}
    for card in hand:
        counts[card] = counts.get(card, 0) + 1
    options = defence_options(attack, hand)
    answers: list[Card | None] = []

    def extend(index: int) -> Iterator[tuple[Card | None, ...]]:
        if index == len(attack):
            yield tuple(answers)
            return
        for choice in (None, *options[index]):
            if choice is not None:
                if counts[choice] == 0:
                    continue
                counts[choice] -= 1
            answers.append(choice)
            yield from extend(index + 1)
            answers.pop()
            if choice is not None:
                counts[choice] += 1

    yield from extend(0)


def sample_defence(
    attack: Sequence[Card], hand: Hand, rng: random.Random
) -> tuple[Card | None, ...]:
    """A random legal defence: each attack card in turn is defended by a random fitting
    unused card (each card equally likely) or sacrificed, with equal chance among those."""
    pool = sorted(hand)
    answers: list[Card | None] = []
    random_float = rng.random
    for card in attack:
        first = bisect_left(pool, card)  # pool[first:] are the cards that can defend
        pick = first + int(random_float() * (len(pool) - first + 1))
        answers.append(pool.pop(pick) if pick < len(pool) else None)
    return tuple(answers)


def _fmt(cards: Sequence[Card]) -> str:
    return "[" + " ".join(map(str, cards)) + "]"
