"""Tests for the Bradley-Terry Elo fit.

Expected values are worked out independently of the implementation: closed
forms where the model has one, and otherwise a separate MM fit (Hunter 2004)
and a finite-difference Hessian written here from scratch.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tacocat_arena.stats.ratings import Rating, expected_score, fit_ratings

ELO = 400.0 / math.log(10.0)  # Elo per natural-log unit, written out independently

Game = tuple[str, str, float]


def games(a: str, b: str, wins: int, losses: int, draws: int = 0) -> list[Game]:
    """``wins``/``losses``/``draws`` are from ``a``'s point of view."""
    return [(a, b, 1.0)] * wins + [(a, b, 0.0)] * losses + [(a, b, 0.5)] * draws


# The worked example of docs/ratings.md: strengths 4 : 2 : 1 reproduced exactly.
DOC_PLAYERS = ["A", "B", "C"]
DOC_GAMES = games("A", "B", 8, 3, 4) + games("B", "C", 10, 5) + games("C", "A", 3, 12)


# --- independent reference implementations -------------------------------------------


def mm_fit(players: Sequence[str], data: Sequence[Game]) -> dict[str, float]:
    """Hunter's MM algorithm on gamma = exp(r), no prior; returns mean-zero Elo.

    Completely separate from the Newton code under test.
    """
    wins = {p: 0.0 for p in players}
    pair_games: dict[tuple[str, str], int] = {}
    for a, b, s in data:
        wins[a] += s
        wins[b] += 1.0 - s
        pair_games[a, b] = pair_games.get((a, b), 0) + 1
        pair_games[b, a] = pair_games.get((b, a), 0) + 1
    gamma = {p: 1.0 for p in players}
    for _ in range(200_000):
        new = {}
        for i in players:
            denominator = 0.0
            for j in players:
                if (i, j) in pair_games:
                    denominator += pair_games[i, j] / (gamma[i] + gamma[j])
            new[i] = wins[i] / denominator
        scale = math.exp(sum(math.log(g) for g in new.values()) / len(new))
        new = {p: g / scale for p, g in new.items()}
        change = max(abs(math.log(new[p] / gamma[p])) for p in players)
        gamma = new
        if change < 1e-14:
            break
    logs = {p: math.log(g) for p, g in gamma.items()}
    mean = sum(logs.values()) / len(logs)
    return {p: (v - mean) * ELO for p, v in logs.items()}


def sigmoid(v: float) -> float:
    return 1.0 / (1.0 + math.exp(-v))


def ascent_fit(
    players: Sequence[str], data: Sequence[Game], prior_draws: float
) -> dict[str, float]:
    """Plain projected gradient ascent under sum(r) == 0, with the prior's virtual
    draws against a 0-rated opponent; returns Elo. Slow but obviously correct."""
    r = {p: 0.0 for p in players}
    degree = {p: 0 for p in players}
    for a, b, _ in data:
        degree[a] += 1
        degree[b] += 1
    rate = 1.0 / (max(degree.values()) / 2 + prior_draws / 4)
    for _ in range(1_000_000):
        grad = {p: prior_draws * (0.5 - sigmoid(r[p])) for p in players}
        for a, b, s in data:
            residual = s - sigmoid(r[a] - r[b])
            grad[a] += residual
            grad[b] -= residual
        mean = sum(grad.values()) / len(grad)
        step = {p: rate * (g - mean) for p, g in grad.items()}
        r = {p: r[p] + step[p] for p in players}
        if max(abs(v) for v in step.values()) < 1e-13:
            break
    return {p: v * ELO for p, v in r.items()}


def log_likelihood(data: Sequence[Game], r: dict[str, float], prior_draws: float) -> float:
    total = 0.0
    for a, b, s in data:
        p = sigmoid(r[a] - r[b])
        total += s * math.log(p) + (1.0 - s) * math.log(1.0 - p)
    for v in r.values():
        total += prior_draws * 0.5 * (math.log(sigmoid(v)) + math.log(sigmoid(-v)))
    return total


def finite_difference_errors(
    players: Sequence[str], data: Sequence[Game], elo: dict[str, float], prior_draws: float
) -> dict[str, float]:
    """95% half-widths for three players, via a numerical Hessian.

    Parametrize the mean-zero ratings by theta = (x_0, x_1) with x_2 = -x_0 - x_1,
    take the Hessian of the log-likelihood in theta by central differences,
    invert it (2x2), and map the covariance back to all three players.
    """
    if len(players) != 3:
        raise ValueError("this reference only handles three players")
    theta0 = [elo[players[0]] / ELO, elo[players[1]] / ELO]

    def f(theta: Sequence[float]) -> float:
        r = {players[0]: theta[0], players[1]: theta[1], players[2]: -theta[0] - theta[1]}
        return log_likelihood(data, r, prior_draws)

    h = 1e-4
    hess = [[0.0, 0.0], [0.0, 0.0]]
    for i in range(2):
        for j in range(2):
            values = []
            for si, sj in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
                t = list(theta0)
                t[i] += si * h
                t[j] += sj * h
                values.append(f(t))
            hess[i][j] = (values[0] - values[1] - values[2] + values[3]) / (4 * h * h)
    a, b, c, d = -hess[0][0], -hess[0][1], -hess[1][0], -hess[1][1]
    det = a * d - b * c
    c00, c01, c11 = d / det, -b / det, a / det
    variances = [c00, c11, c00 + c11 + 2 * c01]
    return {p: 1.96 * ELO * math.sqrt(v) for p, v in zip(players, variances, strict=True)}


# --- exact values ---------------------------------------------------------------------


def test_two_players_three_quarters_gives_400_log10_3() -> None:
    result = fit_ratings(["A", "B"], games("A", "B", 300, 100), prior_draws=0)
    assert result["A"].elo - result["B"].elo == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert result["A"].elo == pytest.approx(190.848501887865 / 2, abs=1e-6)
    assert result["A"].elo + result["B"].elo == pytest.approx(0.0, abs=1e-9)


def test_two_players_interval_is_half_the_difference_interval() -> None:
    # Var(r_A - r_B) = 1 / (n p (1 - p)); anchored ratings are +-(diff / 2).
    n, p = 400, 0.75
    result = fit_ratings(["A", "B"], games("A", "B", 300, 100), prior_draws=0)
    expected = 1.96 * ELO * math.sqrt(1.0 / (n * p * (1 - p))) / 2
    assert expected == pytest.approx(19.658, abs=1e-3)
    assert result["A"].err == pytest.approx(expected, rel=1e-9)
    assert result["B"].err == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("n", [2, 10, 100, 1000])
def test_even_match_interval(n: int) -> None:
    # p = 0.5: SE(diff) = 2/sqrt(n) nats, each player's SE is half that.
    result = fit_ratings(["A", "B"], games("A", "B", n // 2, n // 2), prior_draws=0)
    assert result["A"].elo == pytest.approx(0.0, abs=1e-9)
    assert result["A"].err == pytest.approx(1.96 * ELO / math.sqrt(n), rel=1e-9)


@pytest.mark.parametrize("prior", [0.5, 1.0, 2.0])
def test_even_match_interval_with_prior(prior: float) -> None:
    # Information = n/4 * [[1,-1],[-1,1]] + prior/4 * I; projecting H^-1 onto the
    # mean-zero direction leaves Var(x_A) = 1 / (n + prior/2).
    n = 20
    result = fit_ratings(["A", "B"], games("A", "B", 5, 5, 10), prior_draws=prior)
    assert result["A"].elo == pytest.approx(0.0, abs=1e-9)
    assert result["A"].err == pytest.approx(1.96 * ELO / math.sqrt(n + prior / 2), rel=1e-9)


def test_three_players_closed_form_with_draws() -> None:
    # Strengths 4:2:1 give P(A>B) = 2/3, P(B>C) = 2/3, P(A>C) = 4/5; the games score
    # exactly that (A-B includes 4 draws), so the MLE is r = ln(4, 2, 1) up to a shift.
    result = fit_ratings(DOC_PLAYERS, DOC_GAMES, prior_draws=0)
    step = 400 * math.log10(2)
    assert result["A"].elo == pytest.approx(step, abs=1e-6)
    assert result["B"].elo == pytest.approx(0.0, abs=1e-6)
    assert result["C"].elo == pytest.approx(-step, abs=1e-6)


def test_doc_example_numbers() -> None:
    """The table in docs/ratings.md."""
    result = fit_ratings(DOC_PLAYERS, DOC_GAMES, prior_draws=0)
    assert [round(result[p].elo, 2) for p in DOC_PLAYERS] == [120.41, 0.0, -120.41]
    assert [round(result[p].err, 2) for p in DOC_PLAYERS] == [95.18, 87.91, 95.18]
    with_prior = fit_ratings(DOC_PLAYERS, DOC_GAMES, prior_draws=1.0)
    assert [round(with_prior[p].elo, 2) for p in DOC_PLAYERS] == [116.98, 0.0, -116.98]
    assert [round(with_prior[p].err, 2) for p in DOC_PLAYERS] == [93.27, 86.6, 93.27]
    # "for two bots at 300-100, one virtual draw each moves the ratings from +-95.42 to +-95.27"
    two = fit_ratings(["A", "B"], games("A", "B", 300, 100), prior_draws=1.0)
    assert round(two["A"].elo, 2) == 95.27


@pytest.mark.parametrize("prior", [0.0, 1.0, 3.0])
def test_errors_match_finite_difference_hessian(prior: float) -> None:
    data = DOC_GAMES + games("A", "B", 1, 2) + games("A", "C", 0, 1, 3)
    result = fit_ratings(DOC_PLAYERS, data, prior_draws=prior)
    elo = {p: r.elo for p, r in result.items()}
    reference = finite_difference_errors(DOC_PLAYERS, data, elo, prior)
    for p in DOC_PLAYERS:
        assert result[p].err == pytest.approx(reference[p], rel=1e-5)


def test_symmetric_results_give_zero() -> None:
    data = games("A", "B", 3, 3, 2) + games("B", "C", 1, 1, 6) + games("C", "A", 4, 4)
    for prior in (0.0, 1.0):
        result = fit_ratings(["A", "B", "C"], data, prior_draws=prior)
        for rating in result.values():
            assert rating.elo == pytest.approx(0.0, abs=1e-9)
    cycle = games("A", "B", 2, 1) + games("B", "C", 2, 1) + games("C", "A", 2, 1)
    result = fit_ratings(["A", "B", "C"], cycle, prior_draws=0)
    assert all(r.elo == pytest.approx(0.0, abs=1e-9) for r in result.values())


def test_draw_counts_as_half_a_win() -> None:
    one_each = fit_ratings(["A", "B", "C"], games("A", "B", 3, 1) + games("B", "C", 1, 1, 0))
    two_draws = fit_ratings(["A", "B", "C"], games("A", "B", 2, 0, 2) + games("B", "C", 0, 0, 2))
    for p in "ABC":
        assert one_each[p].elo == pytest.approx(two_draws[p].elo, abs=1e-9)
        assert one_each[p].err == pytest.approx(two_draws[p].err, abs=1e-9)


# --- agreement with the independent MM fit --------------------------------------------


def random_games(seed: int, players: int, count: int) -> tuple[list[str], list[Game]]:
    rng = random.Random(seed)
    names = [f"bot{i}" for i in range(players)]
    strength = {name: rng.gauss(0.0, 1.0) for name in names}
    data: list[Game] = []
    for _ in range(count):
        a, b = rng.sample(names, 2)
        p = 1.0 / (1.0 + math.exp(strength[b] - strength[a]))
        u = rng.random()
        data.append((a, b, 0.5 if u < 0.2 else (1.0 if u < 0.2 + 0.8 * p else 0.0)))
    return names, data


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_agrees_with_mm_algorithm(seed: int) -> None:
    names, data = random_games(seed, players=6, count=300)
    result = fit_ratings(names, data, prior_draws=0)
    reference = mm_fit(names, data)
    assert max(reference.values()) - min(reference.values()) > 50  # not trivially all-zero
    for name in names:
        assert result[name].elo == pytest.approx(reference[name], abs=1e-6)


@pytest.mark.parametrize(("seed", "prior"), [(4, 0.0), (5, 0.5), (6, 1.0), (7, 4.0)])
def test_agrees_with_gradient_ascent(seed: int, prior: float) -> None:
    names, data = random_games(seed, players=5, count=40)
    result = fit_ratings(names, data, prior_draws=prior)
    reference = ascent_fit(names, data, prior)
    assert max(reference.values()) - min(reference.values()) > 50
    for name in names:
        assert result[name].elo == pytest.approx(reference[name], abs=1e-6)


def test_prior_keeps_all_wins_finite_and_matches_gradient_ascent() -> None:
    # C loses everything and A beats B 3-0: the plain MLE does not exist.
    data = games("A", "B", 3, 0) + games("A", "C", 2, 0) + games("B", "C", 4, 0, 1)
    result = fit_ratings(["A", "B", "C"], data, prior_draws=1.0)
    reference = ascent_fit(["A", "B", "C"], data, 1.0)
    for name in "ABC":
        assert result[name].elo == pytest.approx(reference[name], abs=1e-6)


def test_prior_shrinks_toward_zero_and_mean_stays_zero() -> None:
    names, data = random_games(7, players=5, count=60)
    plain = fit_ratings(names, data, prior_draws=0)
    shrunk = fit_ratings(names, data, prior_draws=20)
    assert sum(r.elo for r in shrunk.values()) == pytest.approx(0.0, abs=1e-9)
    assert max(abs(r.elo) for r in shrunk.values()) < max(abs(r.elo) for r in plain.values())


# --- edge cases -----------------------------------------------------------------------


def test_all_wins_needs_prior() -> None:
    data = games("A", "B", 10, 0)
    with pytest.raises(ValueError, match="'A' won every game"):
        fit_ratings(["A", "B"], data, prior_draws=0)
    result = fit_ratings(["A", "B"], data, prior_draws=1.0)
    assert math.isfinite(result["A"].elo) and math.isfinite(result["A"].err)
    assert result["A"].elo > 200
    assert result["B"].elo == pytest.approx(-result["A"].elo)
    # Check against the defining equation: 10 real wins vs B plus one virtual draw
    # vs a 0-rated opponent, before re-anchoring r_A = -r_B = x:
    # 10 * (1 - sigmoid(2x)) + 0.5 - sigmoid(x) = 0.
    x = result["A"].elo / ELO
    assert 10 * (1 - sigmoid(2 * x)) + 0.5 - sigmoid(x) == pytest.approx(0.0, abs=1e-9)


def test_all_losses_needs_prior() -> None:
    data = games("A", "B", 2, 1) + games("C", "A", 0, 4) + games("C", "B", 0, 3)
    with pytest.raises(ValueError, match="'C' scored no points"):
        fit_ratings(["A", "B", "C"], data, prior_draws=0)
    result = fit_ratings(["A", "B", "C"], data)
    assert result["C"].elo < result["B"].elo < result["A"].elo


def test_disconnected_groups_need_prior() -> None:
    data = games("A", "B", 2, 1) + games("C", "D", 1, 1)
    with pytest.raises(ValueError, match="do not exist"):
        fit_ratings(["A", "B", "C", "D"], data, prior_draws=0)
    result = fit_ratings(["A", "B", "C", "D"], data)
    assert result["A"].elo > result["B"].elo
    assert result["C"].elo == pytest.approx(result["D"].elo, abs=1e-9)


def test_player_without_games_is_unrated() -> None:
    result = fit_ratings(["A", "B", "Idle"], games("A", "B", 3, 1), prior_draws=0)
    assert result["Idle"] == Rating("Idle", 0.0, math.inf)
    assert not result["Idle"].is_rated and result["A"].is_rated
    # The idle player does not take part in the mean-zero anchor.
    assert result["A"].elo + result["B"].elo == pytest.approx(0.0, abs=1e-9)
    assert result["A"].elo == pytest.approx(400 * math.log10(3) / 2, abs=1e-6)


def test_single_player_and_no_players() -> None:
    assert fit_ratings(["solo"], []) == {"solo": Rating("solo", 0.0, math.inf)}
    assert fit_ratings([], []) == {}


def test_result_order_follows_players() -> None:
    result = fit_ratings(["C", "A", "B"], DOC_GAMES)
    assert list(result) == ["C", "A", "B"]


@pytest.mark.parametrize(
    ("players", "data", "prior", "message"),
    [
        (["A", "A"], [], 1.0, "duplicate"),
        (["A", "B"], [("A", "X", 1.0)], 1.0, "unknown player 'X'"),
        (["A", "B"], [("A", "A", 1.0)], 1.0, "itself"),
        (["A", "B"], [("A", "B", 1.5)], 1.0, r"\[0, 1\]"),
        (["A", "B"], [("A", "B", math.nan)], 1.0, r"\[0, 1\]"),
        (["A", "B"], [], -1.0, "prior_draws"),
        (["A", "B"], [], math.inf, "prior_draws"),
        (["A", "B"], [], math.nan, "prior_draws"),
        (["A", "B"], [], 1e-9, "prior_draws"),
    ],
)
def test_invalid_input(players: list[str], data: list[Game], prior: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fit_ratings(players, data, prior_draws=prior)


def test_expected_score() -> None:
    assert expected_score(0.0, 0.0) == pytest.approx(0.5)
    assert expected_score(400.0, 0.0) == pytest.approx(10 / 11)
    assert expected_score(-190.848501887865, 0.0) == pytest.approx(0.25)


def test_twenty_players_ten_thousand_games_fit() -> None:
    # (No bound on its time here: the fast tier's 2 s limit in tests/conftest.py is the one.)
    names, data = random_games(11, players=20, count=10_000)
    result = fit_ratings(names, data)
    assert sum(r.elo for r in result.values()) == pytest.approx(0.0, abs=1e-6)
    assert all(0 < r.err < 100 for r in result.values())


# --- properties -----------------------------------------------------------------------

NAMES = ["p0", "p1", "p2", "p3"]
game_strategy = st.tuples(
    st.sampled_from(NAMES), st.sampled_from(NAMES), st.sampled_from([0.0, 0.5, 1.0])
).filter(lambda g: g[0] != g[1])


@settings(max_examples=60, deadline=None)
@given(st.lists(game_strategy, max_size=40), st.sampled_from([0.5, 1.0, 3.0]))
def test_properties(data: list[Game], prior: float) -> None:
    result = fit_ratings(NAMES, data, prior_draws=prior)
    rated = [r for r in result.values() if r.is_rated]
    assert sum(r.elo for r in rated) == pytest.approx(0.0, abs=1e-6)
    assert all(math.isfinite(r.elo) and r.err > 0 for r in result.values())

    # Seat-agnostic: swapping sides (and scores) changes nothing; nor does game order.
    swapped = [(b, a, 1.0 - s) for a, b, s in reversed(data)]
    again = fit_ratings(NAMES, swapped, prior_draws=prior)
    for name in NAMES:
        assert again[name].elo == pytest.approx(result[name].elo, abs=1e-6)
        assert again[name].err == pytest.approx(result[name].err, rel=1e-6)

    # Mirrored results mirror the ratings.
    mirrored = fit_ratings(NAMES, [(a, b, 1.0 - s) for a, b, s in data], prior_draws=prior)
    for name in NAMES:
        assert mirrored[name].elo == pytest.approx(-result[name].elo, abs=1e-6)
