"""Match statistics over duplicate pairs: the pentanomial counts, Elo with its interval, LOS.

Why pairs and not games: a tournament plays every deal twice with the seats swapped
(``schedule.py``), so the two games of a deal share their cards and are not independent.
Like fishtest and fastchess (whose "game pairs" are an opening played with both colours) we
therefore treat the *pair* as the unit of observation: bot A scores 0, 0.5, 1, 1.5 or 2 points
of 2 in it, and the five counts of those outcomes (the pentanomial) carry the variance that
the deal's luck leaves after it cancels.  The per-game (trinomial) variance ignores that
cancellation and overstates the error of two close bots several times over.

Formulas (docs/ratings.md, "Pair statistics", cites the sources):

* pair score ``x = A's points / 2`` in {0, 1/4, 1/2, 3/4, 1}; ``score`` is the mean of ``x``
  over the pairs, ``variance`` its population variance (fastchess ``EloPentanomial``,
  fishtest ``stat_util.stats``, which agree);
* ``elo = -400 log10(1/score - 1)`` (logistic Elo), its 95% interval the image of
  ``score +- z * sqrt(variance / pairs)``, ``z`` the 97.5% normal quantile;
* ``LOS = Phi((score - 1/2) / sqrt(variance / pairs))``;
* ``nelo = (score - 1/2) / sqrt(2 variance) * 800 / ln 10`` (normalized Elo, reported only).

Zero counts are replaced by ``REGULARIZE_ZERO`` before any of this (fishtest's
``LLRcalc.regularize``, fastchess's ``regularize``), so a 100% score gives a large finite
Elo rather than infinity, and the variance is never 0.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Final, Protocol

from tacocat_arena.stats.tables import GameResult

PAIR_POINTS: Final[tuple[float, ...]] = (0.0, 0.5, 1.0, 1.5, 2.0)
"""A's points in a pair, by index of the pentanomial counts (LL, LD, WL+DD, WD, WW)."""


class PlannedGame(Protocol):
    """What the pair statistics read of a planned game (``tournament.schedule.PlannedGame``
    has it): stats sits below the tournament and does not import it."""

    @property
    def game_id(self) -> str: ...
    @property
    def seats(self) -> tuple[str, str]: ...
    @property
    def deal(self) -> int: ...


REGULARIZE_ZERO: Final[float] = 1e-3
"""What a zero count becomes before estimating (fishtest and fastchess use the same)."""

SCORE_CLAMP: Final[float] = 1e-3
"""Scores are clamped to [SCORE_CLAMP, 1 - SCORE_CLAMP] before conversion to Elo (fishtest's
``stat_util.elo``): |Elo| stays below 1200, where a few games can say nothing finer anyway."""

Z_975: Final[float] = NormalDist().inv_cdf(0.975)
"""The two-sided 95% normal quantile, 1.95996..."""

NELO_PER_UNIT: Final[float] = 800.0 / math.log(10.0)
"""Normalized Elo per unit of t-value (fishtest's ``nelo_divided_by_nt``)."""


@dataclass(frozen=True)
class Pentanomial:
    """How often bot A took 0, 0.5, 1, 1.5 and 2 points in a pair (index = half-points)."""

    counts: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)

    def __post_init__(self) -> None:
        if len(self.counts) != len(PAIR_POINTS) or any(c < 0 for c in self.counts):
            raise ValueError(f"a pentanomial is five counts >= 0, got {self.counts!r}")

    @property
    def pairs(self) -> int:
        """Complete pairs counted."""
        return sum(self.counts)

    def added(self, half_points: int) -> Pentanomial:
        """A copy with one more pair in which A scored ``half_points / 2`` points."""
        if half_points not in range(len(PAIR_POINTS)):
            raise ValueError(f"a pair is worth 0..4 half-points, got {half_points!r}")
        counts = list(self.counts)
        counts[half_points] += 1
        return Pentanomial((counts[0], counts[1], counts[2], counts[3], counts[4]))

    def regularized(self) -> list[float]:
        """The counts with every 0 replaced by ``REGULARIZE_ZERO``."""
        return [float(c) if c else REGULARIZE_ZERO for c in self.counts]


@dataclass(frozen=True)
class EloEstimate:
    """What the pairs say about A against B (see the module docstring for each formula).

    ``elo_low``/``elo_high`` bound the 95% interval (it is not symmetric around ``elo``);
    ``err`` is its half-width, the "±" that fishtest and fastchess print.
    """

    pairs: int
    score: float  # A's mean score per game, regularized
    variance: float  # population variance of a pair's mean score, regularized
    elo: float
    elo_low: float
    elo_high: float
    los: float  # likelihood of superiority: P(A is the stronger), 0..1
    nelo: float

    @property
    def err(self) -> float:
        """Half-width of the 95% interval, in Elo."""
        return (self.elo_high - self.elo_low) / 2


def score_to_elo(score: float) -> float:
    """Logistic Elo difference of an expected score (clamped, see ``SCORE_CLAMP``)."""
    clamped = min(max(score, SCORE_CLAMP), 1.0 - SCORE_CLAMP)
    return -400.0 * math.log10(1.0 / clamped - 1.0)


def elo_to_score(elo: float) -> float:
    """Expected score of a logistic Elo difference: ``1 / (1 + 10^(-elo/400))``."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def pair_mean_variance(counts: Sequence[float]) -> tuple[float, float]:
    """Mean and population variance of a pair's mean score (``x = i/4`` for count ``i``)."""
    total = sum(counts)
    if total <= 0:
        raise ValueError("no pairs: the mean and variance are undefined")
    steps = len(counts) - 1
    mean = sum(c * i / steps for i, c in enumerate(counts)) / total
    variance = sum(c * (i / steps - mean) ** 2 for i, c in enumerate(counts)) / total
    return mean, variance


def estimate(pentanomial: Pentanomial) -> EloEstimate | None:
    """Elo, its 95% interval, LOS and nElo from the pairs; None before the first pair."""
    if pentanomial.pairs == 0:
        return None
    counts = pentanomial.regularized()
    score, variance = pair_mean_variance(counts)
    stderr = math.sqrt(variance / sum(counts))
    return EloEstimate(
        pairs=pentanomial.pairs,
        score=score,
        variance=variance,
        elo=score_to_elo(score),
        elo_low=score_to_elo(score - Z_975 * stderr),
        elo_high=score_to_elo(score + Z_975 * stderr),
        los=NormalDist().cdf((score - 0.5) / stderr),
        nelo=(score - 0.5) / math.sqrt(2.0 * variance) * NELO_PER_UNIT,
    )


@dataclass(frozen=True)
class PairStats:
    """Bot ``a``'s record against ``b``: games (W/L/D) and complete duplicate pairs.

    ``unpaired`` counts finished games whose partner (the same deal, seats swapped) is not
    finished: they are in the W/L/D but not in the pentanomial.
    """

    a: str
    b: str
    wins: int
    losses: int
    draws: int
    pentanomial: Pentanomial
    unpaired: int

    @property
    def games(self) -> int:
        """Finished games between the two."""
        return self.wins + self.losses + self.draws

    @property
    def estimate(self) -> EloEstimate | None:
        """The Elo estimate of ``a`` minus ``b`` from the pairs (None without pairs)."""
        return estimate(self.pentanomial)


def _half_points(result: GameResult, bot: str) -> int:
    """``bot``'s score in ``result`` in half-points: 2 win, 1 draw, 0 loss."""
    return round(2 * result.score(result.seats.index(bot)))


def pair_stats(results: Iterable[GameResult], a: str, b: str) -> PairStats:
    """``a``'s statistics against ``b`` over ``results`` (games of others are ignored).

    Two games form a pair when they share the deal seed and ``a`` sits in seat 0 in one and
    in seat 1 in the other.
    """
    if a == b:
        raise ValueError(f"a bot has no pair statistics against itself ({a!r})")
    record = [0, 0, 0]  # wins, losses, draws of a
    by_seat: dict[int, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
    for result in results:
        if set(result.seats) != {a, b}:
            continue
        points = _half_points(result, a)
        record[0 if points == 2 else 1 if points == 0 else 2] += 1
        by_seat[result.seed][result.seats.index(a)].append(points)
    pentanomial = Pentanomial()
    unpaired = 0
    for first, second in by_seat.values():
        for x, y in zip(first, second, strict=False):
            pentanomial = pentanomial.added(x + y)
        unpaired += abs(len(first) - len(second))
    return PairStats(a, b, record[0], record[1], record[2], pentanomial, unpaired)


def pairings_of(results: Iterable[GameResult], order: Sequence[str]) -> list[tuple[str, str]]:
    """The pairs of bots that met in ``results``, each as (earlier, later) in ``order``."""
    rank = {name: index for index, name in enumerate(order)}
    met = {
        (min(r.seats, key=rank.__getitem__), max(r.seats, key=rank.__getitem__)) for r in results
    }
    return sorted(met, key=lambda pair: (rank[pair[0]], rank[pair[1]]))


def all_pair_stats(results: Sequence[GameResult], order: Sequence[str]) -> list[PairStats]:
    """Pair statistics of every pairing that met, in the order of ``order`` (entrants)."""
    return [pair_stats(results, a, b) for a, b in pairings_of(results, order)]


class PairsInPlanOrder:
    """Completes the pairs of one pairing in the order they were planned.

    With several games in flight, pairs finish out of order.  A sequential test that counted
    them as they finished would depend on timing; counting only the longest run of complete
    pairs from the start of the plan makes it a function of the results alone (fishtest's
    SPRT, fed by batches from many workers, does not need this; a local match can have it).
    """

    def __init__(self, plan: Sequence[PlannedGame], a: str) -> None:
        self._a = a
        self._slot: dict[str, tuple[int, int]] = {}
        deals: dict[tuple[frozenset[str], int], int] = {}  # (the two bots, deal) -> pair
        for game in plan:
            pair = deals.setdefault((frozenset(game.seats), game.deal), len(deals))
            self._slot[game.game_id] = (pair, game.seats.index(a))
        self._points: list[list[int | None]] = [[None, None] for _ in deals]
        self._next = 0

    @property
    def complete(self) -> int:
        """Pairs complete from the start of the plan, without a gap."""
        return self._next

    def add(self, result: GameResult) -> list[int]:
        """Record ``result``; return A's half-points of each pair it completed, in plan order."""
        slot = self._slot.get(result.game_id)
        if slot is None:
            raise ValueError(f"game {result.game_id!r} is not in the plan of this match")
        pair, seat_of_a = slot
        self._points[pair][seat_of_a] = _half_points(result, self._a)
        done: list[int] = []
        while self._next < len(self._points):
            first, second = self._points[self._next]
            if first is None or second is None:
                break
            done.append(first + second)
            self._next += 1
        return done
