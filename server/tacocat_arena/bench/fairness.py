"""How many games duplicate deals save: a measurement, in process (no network, no bots).

A tournament plays every deal twice with the seats swapped (see ``schedule.py``).  The plain
alternative alternates the seats over independent deals.  Both estimate the same thing (a
bot's mean score against another), but the duplicate pair shares its cards, so the luck of
the deal cancels out of the pair's mean.  This module measures by how much, for two CLOSE
bots, where it matters most:

* bot A: ``GreedyPolicy``;
* bot B: the same heuristic, but in each decision, with probability ``epsilon``, a uniformly
  random legal action instead (``RandomPolicy``, seeded): a slightly weaker bot (A scores
  about 51.5% at the default ``epsilon=0.02``).

It plays ``pairs`` pairs of games under each design and takes A's mean score per pair:

(a) duplicate: one deal, played with A in seat 0 then with A in seat 1;
(b) alternation: two independent deals, A in seat 0 in the first, in seat 1 in the second.

Each design's confidence interval for A's score has half-width ``1.96 * sqrt(var / pairs)``,
``var`` the variance of a pair's mean score, so for the same width alternation needs
``ratio = var_alternation / var_duplicate`` times as many games as duplicate.  The ratio
depends on the bots: the closer they play, the more of their games' difference is the deal's
luck, which duplicate cancels (identical deterministic bots split every deal: ratio infinite).
B's randomness is independent in every game, in both designs, as a real bot's would be.

    >>> report = measure_duplicate_efficiency(pairs=4000, seed=1)
    >>> print(report.summary())
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from tacocat_arena.engine import Action, SeatView
from tacocat_arena.play.local import play_game
from tacocat_arena.play.policies import GreedyPolicy, Policy, RandomPolicy

DEFAULT_EPSILON = 0.02
_Z95 = 1.959963984540054


class EpsilonGreedyPolicy:
    """``GreedyPolicy``, except that each decision is, with probability ``epsilon``, a uniformly
    random legal action (drawn with ``rng``)."""

    def __init__(self, epsilon: float, rng: random.Random) -> None:
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {epsilon}")
        self.epsilon = epsilon
        self.rng = rng
        self.greedy = GreedyPolicy()
        self.random = RandomPolicy(rng)

    def act(self, view: SeatView) -> Action:
        """The greedy action, or (probability ``epsilon``) a random legal one."""
        if self.epsilon and self.rng.random() < self.epsilon:
            return self.random.act(view)
        return self.greedy.act(view)


@dataclass(frozen=True)
class FairnessReport:
    """The measurement.  Scores are bot A's (``GreedyPolicy``) mean score per game (win 1,
    draw 1/2); variances are sample variances (n - 1) of a pair's mean score."""

    pairs: int  # pairs of games per design
    seed: int
    epsilon: float  # bot B's probability of a random action
    games: int  # games played in all: 2 designs x pairs x 2 games
    duplicate_score: float
    alternation_score: float
    seat0_score: float  # mean score of whoever sat in seat 0, over all games
    draw_rate: float  # share of all games drawn
    split_rate: float  # share of duplicate pairs where each bot won the deal once
    duplicate_variance: float
    alternation_variance: float
    ratio: float  # alternation_variance / duplicate_variance (inf if only the latter is 0)
    ratio_ci95: tuple[float, float]  # approximate 95% interval of the ratio (delta method)

    @property
    def duplicate_ci95(self) -> float:
        """Half-width of the 95% interval of A's score, duplicate design."""
        return _Z95 * math.sqrt(self.duplicate_variance / self.pairs)

    @property
    def alternation_ci95(self) -> float:
        """Half-width of the 95% interval of A's score, alternation design."""
        return _Z95 * math.sqrt(self.alternation_variance / self.pairs)

    def games_needed(self, half_width: float) -> tuple[int, int]:
        """Games (duplicate, alternation) for a 95% interval of +-``half_width`` on the score."""

        def games(variance: float) -> int:
            return 2 * math.ceil((_Z95 / half_width) ** 2 * variance)

        return games(self.duplicate_variance), games(self.alternation_variance)

    def summary(self) -> str:
        """The report as text."""
        low, high = self.ratio_ci95
        dup_games, alt_games = self.games_needed(0.02)
        lines = [
            f"Duplicate deals vs seat alternation: GreedyPolicy (A) against greedy with "
            f"{self.epsilon:g} random decisions (B), {self.pairs} pairs of games per design, "
            f"seed {self.seed} ({self.games} games).",
            f"A's score:      duplicate {self.duplicate_score:.4f} +- {self.duplicate_ci95:.4f}, "
            f"alternation {self.alternation_score:.4f} +- {self.alternation_ci95:.4f} (95%)",
            f"seat 0 scores {self.seat0_score:.4f}; {self.draw_rate:.1%} of games drawn; "
            f"{self.split_rate:.1%} of duplicate deals split 1-1",
            f"variance of a pair's mean score: duplicate {self.duplicate_variance:.5f}, "
            f"alternation {self.alternation_variance:.5f}",
            f"ratio {self.ratio:.2f} (95% about {low:.2f}-{high:.2f}): for the same interval, "
            f"alternation needs {self.ratio:.2f}x the games of duplicate; duplicate needs "
            f"1/{self.ratio:.1f} of alternation's."
            if 0 < self.ratio < math.inf
            else f"ratio {self.ratio}: one of the variances is 0, so the games cannot be compared.",
            f"e.g. +-2% on the score: duplicate {dup_games} games, alternation {alt_games}.",
        ]
        return "\n".join(lines)


def measure_duplicate_efficiency(
    pairs: int, seed: int, *, epsilon: float = DEFAULT_EPSILON
) -> FairnessReport:
    """Play ``pairs`` duplicate pairs and ``pairs`` alternation pairs of GreedyPolicy against
    ``EpsilonGreedyPolicy(epsilon)`` and compare the variances (module docstring)."""
    if pairs < 2:
        raise ValueError(f"pairs must be at least 2 (a variance needs two), got {pairs}")
    rng = random.Random(seed)  # deals and B's random streams, all from the one seed

    def b_policy() -> EpsilonGreedyPolicy:
        return EpsilonGreedyPolicy(epsilon, random.Random(rng.getrandbits(64)))

    def a_score(deal: int, a_seat: int) -> float:
        policies: list[Policy] = [GreedyPolicy(), GreedyPolicy()]
        policies[1 - a_seat] = b_policy()
        game = play_game(policies, seed=deal)
        assert game.outcome is not None
        winner = game.outcome.winner
        return 0.5 if winner is None else float(winner == a_seat)

    duplicate: list[float] = []
    alternation: list[float] = []
    seat0_points = 0.0
    draws = 0
    splits = 0
    for _ in range(pairs):
        deal = rng.getrandbits(64)
        first, second = a_score(deal, 0), a_score(deal, 1)
        duplicate.append((first + second) / 2)
        splits += {first, second} == {0.0, 1.0}
        third, fourth = a_score(rng.getrandbits(64), 0), a_score(rng.getrandbits(64), 1)
        alternation.append((third + fourth) / 2)
        seat0_points += first + (1 - second) + third + (1 - fourth)
        draws += [first, second, third, fourth].count(0.5)
    games = 4 * pairs
    dup_var = statistics.variance(duplicate)
    alt_var = statistics.variance(alternation)
    return FairnessReport(
        pairs=pairs,
        seed=seed,
        epsilon=epsilon,
        games=games,
        duplicate_score=statistics.fmean(duplicate),
        alternation_score=statistics.fmean(alternation),
        seat0_score=seat0_points / games,
        draw_rate=draws / games,
        split_rate=splits / pairs,
        duplicate_variance=dup_var,
        alternation_variance=alt_var,
        ratio=variance_ratio(alt_var, dup_var),
        ratio_ci95=_ratio_interval(alternation, duplicate),
    )


def variance_ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``; inf when only the denominator is 0, nan when both are."""
    if denominator > 0:
        return numerator / denominator
    return math.inf if numerator > 0 else math.nan


def _ratio_interval(top: Sequence[float], bottom: Sequence[float]) -> tuple[float, float]:
    """Approximate 95% interval of var(top) / var(bottom) for independent samples: normal on
    the log scale, with Var(s^2) ~ (m4 - s^4 (n - 3) / (n - 1)) / n for each sample."""
    ratio = variance_ratio(statistics.variance(top), statistics.variance(bottom))
    if not 0 < ratio < math.inf:
        return (math.nan, math.nan)  # a variance of 0: no interval on the log scale
    log_variance = _relative_variance_of_variance(top) + _relative_variance_of_variance(bottom)
    spread = _Z95 * math.sqrt(log_variance)
    return ratio * math.exp(-spread), ratio * math.exp(spread)


def _relative_variance_of_variance(sample: Sequence[float]) -> float:
    n = len(sample)
    mean = statistics.fmean(sample)
    s2 = statistics.variance(sample)
    m4 = sum((x - mean) ** 4 for x in sample) / n
    return max(0.0, (m4 - s2 * s2 * (n - 3) / (n - 1)) / n) / (s2 * s2)
