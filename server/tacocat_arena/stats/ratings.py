"""Elo ratings as a maximum-likelihood Bradley-Terry fit over all games.

Why a global fit instead of incremental Elo updates: in a tournament every game
is known at the end, so the order games were played in should not matter (it
does with incremental K-factor Elo). Like Ordo and BayesElo we therefore fit
one rating per player to *all* results at once. See ``docs/ratings.md`` for the
full derivation and a worked example.

Model
    Each player ``i`` has a strength ``r_i`` in natural-log odds units ("nats").
    Player ``a`` is expected to score ``sigmoid(r_a - r_b)`` against ``b``; seats
    play no role (the model is colour-agnostic). Reported ratings are
    ``elo = r * 400 / ln(10)``, so a 400 Elo gap means 10:1 odds.

Draws
    A draw counts as half a win for each side (Ordo's convention): a game with
    score ``s`` for ``a`` contributes ``s*log(p) + (1-s)*log(1-p)`` to the
    log-likelihood, ``p = sigmoid(r_a - r_b)``. This needs no extra draw
    parameter and makes the MLE match the "expected score equals actual score"
    equations.

Anchoring
    Ratings only determine differences, so they are anchored so that the mean
    rating of the rated players is exactly 0. The fit itself is done under that
    constraint (Newton's method restricted to the subspace ``sum(r) == 0``).

Prior
    With ``prior_draws > 0`` every player that has games also gets
    ``prior_draws`` virtual draws against a virtual opponent rated 0, i.e. at
    the mean (BayesElo-style virtual draws). It keeps the rating of a player
    with all wins or all losses finite (its MLE is at +/- infinity) and links
    groups of players that never met. Its pull is negligible once players have
    many real games. With ``prior_draws == 0`` the plain MLE is returned, and a
    ``ValueError`` is raised when it does not exist. Priors below
    ``MIN_PRIOR_DRAWS`` are rejected: their pull is lost in rounding error.

Interval
    ``err`` is 1.96 times the standard error of the player's anchored rating,
    from the observed Fisher information at the optimum (the negative Hessian
    ``H`` of the log-likelihood, prior included) restricted to the mean-zero
    subspace: the covariance is the pseudo-inverse ``(P H P)^+`` with ``P`` the
    centering projection. With two players each anchored rating is half the
    difference, so each ``err`` is half the 95% half-width of the difference.

Players without games
    They carry no information: they get ``elo == 0.0`` (the anchor) and
    ``err == math.inf``, and they are left out of the fit and of the mean. A
    single player can have no games (self-play is rejected), so it is unrated.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

ELO_PER_NAT: Final[float] = 400.0 / math.log(10.0)
"""Elo points per natural-log unit of odds (about 173.72)."""

Z_95: Final[float] = 1.96
"""Two-sided 95% normal quantile used for ``Rating.err``."""

DEFAULT_PRIOR_DRAWS: Final[float] = 1.0
"""Virtual draws per player against a 0-rated virtual opponent (see module doc)."""

MIN_PRIOR_DRAWS: Final[float] = 1e-6
"""Smallest non-zero prior: below it the prior's pull drowns in rounding error."""

_TOLERANCE: Final[float] = 1e-10  # Newton step size (nats) at which we stop
_MAX_ITERATIONS: Final[int] = 200

Matrix = list[list[float]]


@dataclass(frozen=True)
class Rating:
    """A fitted rating: ``elo`` (mean of rated players is 0) and its 95% half-width.

    ``err`` is ``math.inf`` for a player without games (it is unrated).
    """

    name: str
    elo: float
    err: float

    @property
    def is_rated(self) -> bool:
        """True when the player had at least one game, so ``err`` is finite."""
        return math.isfinite(self.err)


def expected_score(elo_a: float, elo_b: float) -> float:
    """Expected score of ``a`` against ``b`` under the fitted model."""
    return _sigmoid((elo_a - elo_b) / ELO_PER_NAT)


def fit_ratings(
    players: Sequence[str],
    games: Iterable[tuple[str, str, float]],
    *,
    prior_draws: float = DEFAULT_PRIOR_DRAWS,
) -> dict[str, Rating]:
    """Fit Bradley-Terry Elo ratings to ``games`` (``(a, b, score_for_a)`` triples).

    Scores are usually 1, 0.5 or 0, but any value in [0, 1] is accepted (a
    fractional score is treated like the equivalent mix of wins and losses).
    Returns one ``Rating`` per player, in the order of ``players``.

    Raises ``ValueError`` for duplicate or unknown players, self-play, scores
    outside [0, 1], a prior that is neither 0 nor at least ``MIN_PRIOR_DRAWS``,
    or (only with ``prior_draws == 0``) results for which the maximum-likelihood
    ratings are not finite.
    """
    index = _index_players(players)
    if not (prior_draws == 0 or MIN_PRIOR_DRAWS <= prior_draws < math.inf):
        raise ValueError(
            f"prior_draws must be 0 or a finite number >= {MIN_PRIOR_DRAWS:g}, got {prior_draws!r}"
        )
    count, points = _aggregate(index, games)

    rated = [i for i in range(len(players)) if sum(count[i]) > 0]
    result = {name: Rating(name=name, elo=0.0, err=math.inf) for name in players}
    if not rated:
        return result

    # Restrict the pairwise tables to rated players; from here on indices are local.
    n = [[count[i][j] for j in rated] for i in rated]
    w = [[points[i][j] for j in rated] for i in rated]
    if prior_draws == 0:
        _require_identifiable(w, [players[i] for i in rated])

    # The steps keep sum(r) == 0; centering again only removes rounding drift.
    strengths = _centered(_maximize(n, w, prior_draws))
    variances = _anchored_variances(_information(n, strengths, prior_draws))
    for k, i in enumerate(rated):
        result[players[i]] = Rating(
            name=players[i],
            elo=strengths[k] * ELO_PER_NAT,
            err=Z_95 * ELO_PER_NAT * math.sqrt(max(variances[k], 0.0)),
        )
    return result


def _index_players(players: Sequence[str]) -> dict[str, int]:
    index: dict[str, int] = {}
    for name in players:
        if name in index:
            raise ValueError(f"duplicate player name {name!r}")
        index[name] = len(index)
    return index


def _aggregate(
    index: dict[str, int], games: Iterable[tuple[str, str, float]]
) -> tuple[Matrix, Matrix]:
    """Collapse games into pairwise game counts and points (the sufficient statistics).

    This makes each Newton iteration cost O(players^2) however many games there are.
    """
    size = len(index)
    count = [[0.0] * size for _ in range(size)]
    points = [[0.0] * size for _ in range(size)]
    for a, b, score in games:
        for name in (a, b):
            if name not in index:
                raise ValueError(f"game {a!r} vs {b!r} names unknown player {name!r}")
        if a == b:
            raise ValueError(f"player {a!r} cannot play against itself")
        if not (math.isfinite(score) and 0.0 <= score <= 1.0):
            raise ValueError(f"score for {a!r} vs {b!r} must be in [0, 1], got {score!r}")
        i, j = index[a], index[b]
        count[i][j] += 1.0
        count[j][i] += 1.0
        points[i][j] += score
        points[j][i] += 1.0 - score
    return count, points


def _require_identifiable(points: Matrix, names: Sequence[str]) -> None:
    """Raise unless the finite MLE exists (Zermelo/Ford/Hunter condition).

    It exists iff, for every split of the players into two groups, each group
    scored something against the other: the "scored > 0 against" digraph is
    strongly connected. Otherwise some group's ratings run off to infinity.
    """
    size = len(names)

    def reachable(forward: bool) -> set[int]:
        seen, stack = {0}, [0]
        while stack:
            i = stack.pop()
            for j in range(size):
                scored = points[i][j] if forward else points[j][i]
                if j not in seen and scored > 0:
                    seen.add(j)
                    stack.append(j)
        return seen

    if len(reachable(True)) < size or len(reachable(False)) < size:
        for i, name in enumerate(names):
            if sum(points[i]) == 0:
                raise ValueError(
                    f"player {name!r} scored no points, so its maximum-likelihood rating "
                    "is -infinity; use prior_draws > 0"
                )
            if all(points[j][i] == 0 for j in range(size)):
                raise ValueError(
                    f"player {name!r} won every game, so its maximum-likelihood rating "
                    "is +infinity; use prior_draws > 0"
                )
        raise ValueError(
            "maximum-likelihood ratings do not exist: some group of players never scored "
            "against (or never met) the rest; use prior_draws > 0"
        )


def _maximize(n: Matrix, w: Matrix, prior_draws: float) -> list[float]:
    """Newton's method with backtracking on the concave log-likelihood, from r = 0.

    Steps stay in the mean-zero subspace: ``(P H P + 11^T) d = P g`` has a
    solution with ``sum(d) == 0``, the Newton step of the restricted problem.
    Working there also avoids the near-flat "shift everyone" direction that a
    tiny prior would otherwise leave, which is ill-conditioned.
    """
    size = len(n)
    r = [0.0] * size
    value = _log_likelihood(n, w, r, prior_draws)
    for _ in range(_MAX_ITERATIONS):
        grad = _centered(_gradient(n, w, r, prior_draws))
        step = _solve(_anchored_system(_information(n, r, prior_draws)), grad)
        slope = sum(g * s for g, s in zip(grad, step, strict=True))
        # Converged when the step is tiny, or when the gain it predicts (the
        # Newton decrement) is below what the log-likelihood can resolve.
        if max(abs(s) for s in step) < _TOLERANCE or slope < 1e-20 * (1.0 + abs(value)):
            return [ri + si for ri, si in zip(r, step, strict=True)]
        # Near the optimum the gain of a step is below the rounding error of the
        # log-likelihood, so allow that much slack; Newton's full steps converge
        # quadratically there anyway.
        slack = 1e-12 * (1.0 + abs(value))
        t = 1.0
        while True:
            trial = [ri + t * si for ri, si in zip(r, step, strict=True)]
            trial_value = _log_likelihood(n, w, trial, prior_draws)
            if trial_value >= value + 1e-4 * t * slope - slack:
                break
            t *= 0.5
            if t < 1e-12:  # no representable improvement left: we are at the optimum
                return r
        r, value = trial, trial_value
    raise RuntimeError("rating fit did not converge; please report this with the game data")


def _log_likelihood(n: Matrix, w: Matrix, r: Sequence[float], prior_draws: float) -> float:
    size = len(r)
    total = 0.0
    for i in range(size):
        for j in range(i + 1, size):
            if n[i][j]:
                d = r[i] - r[j]
                total += w[i][j] * _log_sigmoid(d) + w[j][i] * _log_sigmoid(-d)
        if prior_draws:
            total += 0.5 * prior_draws * (_log_sigmoid(r[i]) + _log_sigmoid(-r[i]))
    return total


def _gradient(n: Matrix, w: Matrix, r: Sequence[float], prior_draws: float) -> list[float]:
    """Actual minus expected score for each player (prior games included)."""
    size = len(r)
    grad = [0.0] * size
    for i in range(size):
        g = 0.5 * prior_draws * (_sigmoid(-r[i]) - _sigmoid(r[i]))
        for j in range(size):
            if n[i][j]:
                # w_ij - n_ij * p, written so that p close to 1 loses no precision.
                d = r[i] - r[j]
                g += w[i][j] * _sigmoid(-d) - w[j][i] * _sigmoid(d)
        grad[i] = g
    return grad


def _information(n: Matrix, r: Sequence[float], prior_draws: float) -> Matrix:
    """Observed Fisher information: the negative Hessian of the log-likelihood.

    With draws as half wins the Hessian does not depend on the scores, so the
    observed and expected information coincide.
    """
    size = len(r)
    info = [[0.0] * size for _ in range(size)]
    for i in range(size):
        diagonal = prior_draws * _sigmoid(r[i]) * _sigmoid(-r[i])
        for j in range(size):
            if j != i and n[i][j]:
                d = r[i] - r[j]
                v = n[i][j] * _sigmoid(d) * _sigmoid(-d)
                info[i][j] = -v
                diagonal += v
        info[i][i] = diagonal
    return info


def _anchored_system(info: Matrix) -> Matrix:
    """``P H P + 11^T``: the information restricted to ``sum(r) == 0``, made invertible.

    On the mean-zero subspace it acts like ``P H P``; the ``11^T`` term only
    fills the removed direction so the matrix can be inverted.
    """
    size = len(info)
    row_means = [sum(row) / size for row in info]
    grand_mean = sum(row_means) / size
    return [
        [info[i][j] - row_means[i] - row_means[j] + grand_mean + 1.0 for j in range(size)]
        for i in range(size)
    ]


def _anchored_variances(info: Matrix) -> list[float]:
    """Diagonal of ``(P H P)^+``, the covariance of the mean-zero ratings.

    ``(P H P + 11^T)^-1 == (P H P)^+ + 11^T / m^2`` (``H`` symmetric), so the
    variances are the inverse's diagonal minus ``1 / m^2``.
    """
    size = len(info)
    inverse = _inverse(_anchored_system(info))
    return [inverse[i][i] - 1.0 / size**2 for i in range(size)]


def _centered(values: Sequence[float]) -> list[float]:
    mean = sum(values) / len(values)
    return [v - mean for v in values]


def _solve(matrix: Matrix, rhs: Sequence[float]) -> list[float]:
    """Solve ``matrix @ x = rhs`` by Gaussian elimination with partial pivoting."""
    return [row[0] for row in _solve_many(matrix, [[v] for v in rhs])]


def _inverse(matrix: Matrix) -> Matrix:
    size = len(matrix)
    identity = [[1.0 if i == j else 0.0 for j in range(size)] for i in range(size)]
    return _solve_many(matrix, identity)


def _solve_many(matrix: Matrix, rhs: Matrix) -> Matrix:
    size = len(matrix)
    a = [list(row) + list(extra) for row, extra in zip(matrix, rhs, strict=True)]
    width = len(a[0]) if a else 0
    for col in range(size):
        pivot = max(range(col, size), key=lambda k: abs(a[k][col]))
        if a[pivot][col] == 0.0:  # unreachable after _require_identifiable, barring underflow
            raise RuntimeError("singular information matrix in rating fit")
        a[col], a[pivot] = a[pivot], a[col]
        head = a[col]
        for k in range(size):
            if k != col and a[k][col]:
                factor = a[k][col] / head[col]
                row = a[k]
                for m in range(col, width):
                    row[m] -= factor * head[m]
    return [[v / a[i][i] for v in a[i][size:]] for i in range(size)]


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _log_sigmoid(x: float) -> float:
    """``log(sigmoid(x))`` without overflow or loss of precision for large ``|x|``."""
    if x >= 0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))
