"""The sequential probability ratio test on duplicate pairs: "is A better than B?", early.

A match stops as soon as the evidence decides between H0 ``elo(A - B) = elo0`` and H1
``elo(A - B) = elo1``, with error rates ``alpha`` (accepting H1 when H0 holds) and ``beta``
(accepting H0 when H1 holds).  This is the GSPRT of fishtest and fastchess on the
pentanomial model (docs/ratings.md, "SPRT", cites both):

* the pairs' outcomes follow an unknown distribution ``p`` over the pair scores
  ``a = (0, 1/4, 1/2, 3/4, 1)``; H0 says its mean is ``s0 = L(elo0)``, H1 ``s1 = L(elo1)``,
  ``L(e) = 1 / (1 + 10^(-e/400))`` (logistic Elo);
* each hypothesis is represented by the maximum-likelihood ``p`` with that mean, given the
  observed frequencies ``q`` (Van den Bergh, "Comments on normalized Elo", Prop. 1.1):
  ``p_i = q_i / (1 + theta (a_i - s))`` with ``theta`` the root of
  ``sum q_i (a_i - s) / (1 + theta (a_i - s)) = 0``;
* ``LLR = N sum q_i (log p1_i - log p0_i)``, ``N`` the pairs (zero counts regularized as in
  ``pairs.py``);
* Wald's bounds: accept H1 once ``LLR >= log((1 - beta) / alpha)``, H0 once
  ``LLR <= log(beta / (1 - alpha))``.

The test is evaluated after every pair, so its overshoot past a bound is at most one pair's
jump (fishtest, updated in batches, corrects for the overshoot; we need not).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass

from tacocat_arena.stats.pairs import Pentanomial, elo_to_score

_THETA_TOLERANCE = 1e-15  # relative; theta's bracket is (-1/(a_max - s), -1/(a_min - s))
_MAX_STEPS = 2000  # bisection alone would need ~1100 steps to reach adjacent doubles
#: A pair's score variance assumed before any game (``Sprt.expected_pairs``): two
#: independent even games, each of variance 1/4, averaged; duplicate deals usually give
#: less, so the estimate leans long.
PAIR_VARIANCE = 0.125


class SprtDecision(enum.Enum):
    """Where the test stands: H0 accepted, H1 accepted, or no decision (yet)."""

    H0 = "H0"
    H1 = "H1"
    NONE = "none"


@dataclass(frozen=True)
class Sprt:
    """The test's design: H0 ``elo0``, H1 ``elo1`` (logistic Elo of A minus B), error rates."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        # fastchess's SPRT::isValid checks the same conditions.
        if not (math.isfinite(self.elo0) and math.isfinite(self.elo1)):
            raise ValueError(f"elo0 and elo1 must be finite, got {self.elo0}, {self.elo1}")
        if self.elo0 >= self.elo1:
            raise ValueError(f"elo0 must be below elo1, got {self.elo0:g},{self.elo1:g}")
        if not (0 < self.alpha < 1 and 0 < self.beta < 1):
            raise ValueError(f"alpha and beta must be in (0, 1), got {self.alpha}, {self.beta}")
        if self.alpha + self.beta >= 1:
            raise ValueError(f"alpha + beta must be below 1, got {self.alpha + self.beta:g}")

    @classmethod
    def parse(cls, text: str, *, alpha: float = 0.05, beta: float = 0.05) -> Sprt:
        """The ``--sprt ELO0,ELO1`` flag; ``ValueError`` with a usable message otherwise."""
        parts = text.split(",")
        try:
            if len(parts) != 2:
                raise ValueError
            elo0, elo1 = float(parts[0]), float(parts[1])
        except ValueError:
            raise ValueError(f"expected ELO0,ELO1 such as 0,20; got {text!r}") from None
        return cls(elo0, elo1, alpha, beta)

    @property
    def lower(self) -> float:
        """The LLR at or below which H0 is accepted: ``log(beta / (1 - alpha))``."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """The LLR at or above which H1 is accepted: ``log((1 - beta) / alpha)``."""
        return math.log((1 - self.beta) / self.alpha)

    def llr(self, pentanomial: Pentanomial) -> float:
        """The generalized log-likelihood ratio of H1 against H0 on these pairs (0 if none)."""
        if pentanomial.pairs == 0:
            return 0.0
        scores = [i / 4 for i in range(5)]
        return generalized_llr(
            pentanomial.regularized(), scores, elo_to_score(self.elo0), elo_to_score(self.elo1)
        )

    def expected_pairs(self, true_elo: float, variance: float = PAIR_VARIANCE) -> float:
        """About how many pairs the test takes to decide when A - B is ``true_elo``: Wald's
        bound over the LLR's mean drift per pair in the normal approximation,
        ``(s1 - s0) (s - (s0 + s1) / 2) / variance`` (s the true score).  ``inf`` where the
        drift is zero (halfway between H0 and H1: the cap decides).  For ``play --sprt``'s
        estimate before the first game, not for any decision."""
        s0, s1 = elo_to_score(self.elo0), elo_to_score(self.elo1)
        drift = (s1 - s0) * (elo_to_score(true_elo) - (s0 + s1) / 2) / variance
        if drift == 0:
            return math.inf
        return (self.upper if drift > 0 else self.lower) / drift

    def decide(self, llr: float) -> SprtDecision:
        """H1 at or above the upper bound, H0 at or below the lower one, else no decision."""
        if llr >= self.upper:
            return SprtDecision.H1
        if llr <= self.lower:
            return SprtDecision.H0
        return SprtDecision.NONE


def mle_with_mean(counts: Sequence[float], scores: Sequence[float], mean: float) -> list[float]:
    """The most likely distribution over ``scores`` with this ``mean``, given ``counts``.

    ``p_i = q_i / (1 + theta (a_i - mean))`` with ``q`` the observed frequencies and
    ``theta`` the root of ``f(theta) = sum q_i (a_i - mean) / (1 + theta (a_i - mean))``.
    ``f`` falls strictly on the interval where every ``p_i`` stays positive; Newton's method
    kept inside a shrinking bracket (bisecting when a step leaves it) finds the root.
    Raises ``ValueError`` unless ``mean`` lies strictly between the lowest and the highest
    score observed.
    """
    total = sum(counts)
    if total <= 0 or any(c < 0 for c in counts):
        raise ValueError(f"counts must be >= 0 and not all 0, got {list(counts)!r}")
    q = [c / total for c in counts]
    seen = [a - mean for a, qi in zip(scores, q, strict=True) if qi > 0]
    if not (min(seen) < 0 < max(seen)):
        raise ValueError(f"mean {mean!r} is not strictly inside the observed scores")
    terms = [(a - mean, qi) for a, qi in zip(scores, q, strict=True) if qi > 0]
    low, high = -1.0 / max(seen), -1.0 / min(seen)
    theta = 0.0  # inside (low, high): the observed mean is a root when it equals ``mean``
    for _ in range(_MAX_STEPS):
        value = slope = 0.0
        for d, qi in terms:
            ratio = d / (1 + theta * d)
            value += qi * ratio
            slope -= qi * ratio * ratio
        if value > 0:
            low = theta
        elif value < 0:
            high = theta
        else:
            break
        # Newton's step where it stays inside the bracket, else bisection (safeguarded Newton).
        step = theta - value / slope
        following = step if low < step < high else (low + high) / 2
        if abs(following - theta) <= _THETA_TOLERANCE * (1 + abs(theta)):
            theta = following
            break
        theta = following
    return [qi / (1 + theta * (a - mean)) for a, qi in zip(scores, q, strict=True)]


def generalized_llr(
    counts: Sequence[float], scores: Sequence[float], s0: float, s1: float
) -> float:
    """``N sum q_i log(p1_i / p0_i)``: the GLR of mean ``s1`` against ``s0`` (module doc).

    Outcomes never observed (count 0) contribute nothing; pass regularized counts to match
    fishtest's and fastchess's figures exactly.
    """
    p0 = mle_with_mean(counts, scores, s0)
    p1 = mle_with_mean(counts, scores, s1)
    return sum(
        c * (math.log(x1) - math.log(x0)) for c, x0, x1 in zip(counts, p0, p1, strict=True) if c
    )


@dataclass(frozen=True)
class SprtState:
    """The test after some pairs: the counts, the LLR and the decision (final once made)."""

    sprt: Sprt
    pentanomial: Pentanomial
    llr: float
    decision: SprtDecision

    @property
    def pairs(self) -> int:
        """Pairs the test has counted."""
        return self.pentanomial.pairs

    def after(self, half_points: int) -> SprtState:
        """The state with one more pair; a decided test stays as it is."""
        if self.decision is not SprtDecision.NONE:
            return self
        pentanomial = self.pentanomial.added(half_points)
        llr = self.sprt.llr(pentanomial)
        return SprtState(self.sprt, pentanomial, llr, self.sprt.decide(llr))

    def summary(self) -> str:
        """The closing line: ``SPRT: H1 accepted (LLR 2.95 >= 2.94) after 57 pairs``."""
        pairs = f"after {self.pairs} pair{'s' if self.pairs != 1 else ''}"
        if self.decision is SprtDecision.H1:
            return f"SPRT: H1 accepted (LLR {self.llr:.2f} >= {self.sprt.upper:.2f}) {pairs}"
        if self.decision is SprtDecision.H0:
            return f"SPRT: H0 accepted (LLR {self.llr:.2f} <= {self.sprt.lower:.2f}) {pairs}"
        return (
            f"SPRT: no decision (LLR {self.llr:.2f}, bounds [{self.sprt.lower:.2f}, "
            f"{self.sprt.upper:.2f}]) {pairs}"
        )


def start(sprt: Sprt) -> SprtState:
    """The test before its first pair."""
    return SprtState(sprt, Pentanomial(), 0.0, SprtDecision.NONE)
