"""Pair (pentanomial) statistics and the SPRT, against values worked out here from the formulas.

Each expected value is computed in the test by another route than the module's: the pair
variance from the expanded list of pair scores with ``statistics``; the LLR from the closed form
of a two-outcome sample, and from an independent Newton solution of the MLE equation; one
figure from fishtest's own algorithm (``LLRcalc.LLR_logistic``, run with scipy's brentq).
"""

from __future__ import annotations

import math
import random
import statistics
from collections import Counter

import pytest

from tacocat_arena.engine import Game
from tacocat_arena.play.local import play_game
from tacocat_arena.play.policies import GreedyPolicy, Policy, RandomPolicy
from tacocat_arena.stats.pairs import (
    PairsInPlanOrder,
    Pentanomial,
    all_pair_stats,
    estimate,
    pair_stats,
)
from tacocat_arena.stats.sprt import (
    Sprt,
    SprtDecision,
    SprtState,
    generalized_llr,
    mle_with_mean,
    start,
)
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.schedule import round_robin

COUNTS = (3, 10, 20, 12, 5)  # pairs in which A took 0, 0.5, 1, 1.5, 2 points of 2
Z = statistics.NormalDist().inv_cdf(0.975)


def logistic(elo: float) -> float:
    return 1 / (1 + 10 ** (-elo / 400))


def elo_of(score: float) -> float:
    return 400 * math.log10(score / (1 - score))


# -- pair statistics ---------------------------------------------------------------------------
def test_pentanomial_variance_is_the_spread_of_the_pair_scores() -> None:
    pair_scores = [points / 4 for points, n in enumerate(COUNTS) for _ in range(n)]
    found = estimate(Pentanomial(COUNTS))
    assert found is not None and found.pairs == 50
    assert found.score == pytest.approx(statistics.fmean(pair_scores), abs=1e-12)
    assert found.variance == pytest.approx(statistics.pvariance(pair_scores), abs=1e-12)


def test_elo_interval_and_los_follow_from_the_pair_variance() -> None:
    pair_scores = [points / 4 for points, n in enumerate(COUNTS) for _ in range(n)]
    mean = statistics.fmean(pair_scores)
    stderr = math.sqrt(statistics.pvariance(pair_scores) / len(pair_scores))
    found = estimate(Pentanomial(COUNTS))
    assert found is not None
    assert found.elo == pytest.approx(elo_of(mean), abs=1e-9)
    assert found.elo_low == pytest.approx(elo_of(mean - Z * stderr), abs=1e-9)
    assert found.elo_high == pytest.approx(elo_of(mean + Z * stderr), abs=1e-9)
    assert found.los == pytest.approx(0.5 * math.erfc(-(mean - 0.5) / stderr / math.sqrt(2)))
    assert found.nelo == pytest.approx(
        (mean - 0.5) / math.sqrt(2 * statistics.pvariance(pair_scores)) * 800 / math.log(10)
    )
    # The same figures as fishtest's stat_util.get_elo on these counts (computed with scipy).
    assert (found.elo, found.err, found.los) == pytest.approx(
        (20.87120466602867, 50.23605715757104, 0.7944601106383424), abs=1e-9
    )


def test_a_perfect_score_is_regularized_to_a_finite_elo() -> None:
    found = estimate(Pentanomial((0, 0, 0, 0, 52)))
    assert found is not None
    eps = 1e-3  # fishtest's and fastchess's regularization of a zero count
    score = (52 * 4 + 3 * eps + 2 * eps + eps) / 4 / (52 + 4 * eps)
    assert found.score == pytest.approx(score, abs=1e-12)
    assert found.elo == pytest.approx(elo_of(1 - 1e-3))  # fishtest's clamp of the score
    assert math.isfinite(found.err) and found.los == pytest.approx(1.0)


def test_no_pairs_gives_no_estimate() -> None:
    assert estimate(Pentanomial()) is None
    with pytest.raises(ValueError, match="five counts"):
        Pentanomial((1, 2, 3))  # type: ignore[arg-type]


# -- the LLR -----------------------------------------------------------------------------------
def test_llr_of_two_outcomes_has_a_closed_form() -> None:
    # Only LL and WW observed: the most likely distribution with mean s puts s on WW.
    lost, won = 7, 40
    s0, s1 = logistic(0), logistic(20)
    expected = won * math.log(s1 / s0) + lost * math.log((1 - s1) / (1 - s0))
    found = generalized_llr([lost, 0, 0, 0, won], [0, 0.25, 0.5, 0.75, 1], s0, s1)
    assert found == pytest.approx(expected, abs=1e-9)


def newton_mle(counts: list[float], scores: list[float], mean: float) -> list[float]:
    """The constrained MLE by Newton's method on theta (the module bisects)."""
    total = sum(counts)
    q = [c / total for c in counts]
    theta = 0.0
    for _ in range(100):
        terms = [
            (qi, (a - mean) / (1 + theta * (a - mean))) for a, qi in zip(scores, q, strict=True)
        ]
        f = sum(qi * r for qi, r in terms)
        slope = -sum(qi * r * r for qi, r in terms)
        theta -= f / slope
    return [qi / (1 + theta * (a - mean)) for a, qi in zip(scores, q, strict=True)]


def test_llr_of_five_outcomes_matches_an_independent_mle() -> None:
    counts = [float(c) for c in COUNTS]
    scores = [0, 0.25, 0.5, 0.75, 1]
    s0, s1 = logistic(0), logistic(20)
    p0, p1 = newton_mle(counts, scores, s0), newton_mle(counts, scores, s1)
    for p, s in ((p0, s0), (p1, s1)):
        assert sum(p) == pytest.approx(1) and sum(
            a * x for a, x in zip(scores, p, strict=True)
        ) == pytest.approx(s)
        assert mle_with_mean(counts, scores, s) == pytest.approx(p, abs=1e-12)
    expected = sum(c * math.log(x1 / x0) for c, x0, x1 in zip(counts, p0, p1, strict=True))
    assert Sprt(0, 20).llr(Pentanomial(COUNTS)) == pytest.approx(expected, abs=1e-9)


def test_llr_matches_fishtest_on_its_own_example() -> None:
    # stat_util.py's __main__ example: pentanomial [10789, 19328, 33806, 19402, 10543],
    # elo0 -3, elo1 1 (logistic); LLRcalc.LLR_logistic gives 2.1310678117940807.
    counts = (10789, 19328, 33806, 19402, 10543)
    assert Sprt(-3, 1).llr(Pentanomial(counts)) == pytest.approx(2.1310678117940807, abs=1e-8)


def test_llr_is_close_to_its_normal_approximation_for_close_hypotheses() -> None:
    # fishtest's LLR_alt2: N (s1 - s0)(2 s - s0 - s1) / (2 var), var per pair.
    counts = (40, 180, 300, 200, 50)
    pair_scores = [points / 4 for points, n in enumerate(counts) for _ in range(n)]
    s, var = statistics.fmean(pair_scores), statistics.pvariance(pair_scores)
    s0, s1 = logistic(0), logistic(5)
    approximate = len(pair_scores) * (s1 - s0) * (2 * s - s0 - s1) / (2 * var)
    assert Sprt(0, 5).llr(Pentanomial(counts)) == pytest.approx(approximate, rel=0.02)


def test_wald_bounds_and_decisions() -> None:
    test = Sprt(0, 20, alpha=0.05, beta=0.05)
    assert test.upper == pytest.approx(math.log(19)) and test.lower == pytest.approx(-math.log(19))
    assert Sprt(0, 20, alpha=0.01, beta=0.1).upper == pytest.approx(math.log(0.9 / 0.01))
    assert test.decide(2.95) is SprtDecision.H1
    assert test.decide(-2.95) is SprtDecision.H0
    assert test.decide(0.0) is SprtDecision.NONE


@pytest.mark.parametrize(
    ("text", "message"),
    [("20", "ELO0,ELO1"), ("a,b", "ELO0,ELO1"), ("20,0", "below elo1"), ("0,inf", "finite")],
)
def test_bad_sprt_flags_are_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Sprt.parse(text)


def test_bad_error_rates_are_refused() -> None:
    with pytest.raises(ValueError, match="alpha and beta"):
        Sprt(0, 20, alpha=0)
    with pytest.raises(ValueError, match="alpha \\+ beta"):
        Sprt(0, 20, alpha=0.6, beta=0.5)


def test_a_decided_test_stays_decided_and_says_so() -> None:
    state = start(Sprt(0, 20))
    while state.decision is SprtDecision.NONE:
        state = state.after(4)  # A wins both games of every pair
    # 52 such pairs give LLR 2.907 < log 19 (fishtest's LLR_logistic agrees); the 53rd decides.
    assert state.pairs == 53 and state.decision is SprtDecision.H1
    assert state.after(0) is state
    assert state.summary() == f"SPRT: H1 accepted (LLR {state.llr:.2f} >= 2.94) after 53 pairs"
    lost = start(Sprt(0, 20))
    while lost.decision is SprtDecision.NONE:
        lost = lost.after(0)
    assert lost.summary().startswith("SPRT: H0 accepted (LLR -")


# -- pairs from game results -------------------------------------------------------------------
def result(game_id: str, seats: tuple[str, str], seed: int, winner: int | None) -> GameResult:
    return GameResult(game_id, seats, seed, winner, "goal", 3, (5, 5), (1.0, 1.0))


def test_pairs_are_games_of_one_deal_with_the_seats_swapped() -> None:
    results = [
        result("a-b-d0", ("a", "b"), 11, 0),  # a wins both: 2 points
        result("b-a-d0", ("b", "a"), 11, 1),
        result("b-a-d1", ("b", "a"), 12, None),  # a draws and loses: 0.5 points
        result("a-b-d1", ("a", "b"), 12, 1),
        result("a-b-d2", ("a", "b"), 13, 0),  # its partner is not finished
        result("a-c-d0", ("a", "c"), 14, 0),  # another pairing
    ]
    stats = pair_stats(results, "a", "b")
    assert (stats.wins, stats.losses, stats.draws, stats.unpaired) == (3, 1, 1, 1)
    assert stats.pentanomial.counts == (0, 1, 0, 0, 1)
    mirrored = pair_stats(results, "b", "a")
    assert mirrored.pentanomial.counts == (1, 0, 0, 1, 0)
    assert [(s.a, s.b) for s in all_pair_stats(results, ["a", "b", "c"])] == [
        ("a", "b"),
        ("a", "c"),
    ]


def test_pairs_count_in_plan_order_whatever_order_they_finish_in() -> None:
    plan = round_robin(["a", "b"], 6, 1, secret="")
    collector = PairsInPlanOrder(plan, "a")

    def finish(game_index: int, a_wins: bool) -> list[int]:
        game = plan[game_index]
        winner = game.seats.index("a") if a_wins else 1 - game.seats.index("a")
        return collector.add(result(game.game_id, game.seats, game.seed, winner))

    assert finish(2, True) == [] and finish(3, True) == []  # pair 1 done, pair 0 not yet
    assert finish(0, False) == [] and collector.complete == 0
    assert finish(1, True) == [2, 4]  # pair 0 (one win), then pair 1 (two wins)
    assert collector.complete == 2
    with pytest.raises(ValueError, match="not in the plan"):
        collector.add(result("x", ("a", "b"), 1, 0))


# -- sequential tests played in process --------------------------------------------------------
def half_points(game: Game, seat: int) -> int:
    assert game.outcome is not None
    winner = game.outcome.winner
    return 1 if winner is None else 2 * (winner == seat)


def run_sprt(
    sprt: Sprt, make_a: type[Policy] | object, make_b: object, *, seed: int, cap: int
) -> SprtState:
    """Duplicate pairs of A against B, in process, until the test decides or ``cap`` pairs."""
    rng = random.Random(seed)
    state = start(sprt)
    for _ in range(cap):
        deal = rng.getrandbits(64)
        first = play_game([make_a(rng), make_b(rng)], seed=deal)  # type: ignore[operator]
        second = play_game([make_b(rng), make_a(rng)], seed=deal)  # type: ignore[operator]
        state = state.after(half_points(first, 0) + half_points(second, 1))
        if state.decision is not SprtDecision.NONE:
            break
    return state


def greedy(rng: random.Random) -> Policy:
    return GreedyPolicy()


def uniform(rng: random.Random) -> Policy:
    return RandomPolicy(random.Random(rng.getrandbits(64)))


def test_greedy_against_random_accepts_h1_within_a_few_hundred_pairs() -> None:
    state = run_sprt(Sprt(0, 20), greedy, uniform, seed=1, cap=300)
    assert state.decision is SprtDecision.H1 and state.pairs < 300


def test_random_against_greedy_accepts_h0() -> None:
    state = run_sprt(Sprt(0, 20), uniform, greedy, seed=1, cap=300)
    assert state.decision is SprtDecision.H0 and state.pairs < 300


CAP = 80  # pairs per self-play trial


@pytest.mark.slow
def test_a_bot_against_itself_never_accepts_h1_in_20_seeded_trials() -> None:
    # Random against random: exactly equal, so H0 (elo 0) is true.  Run to completion, an SPRT
    # accepts H1 in up to alpha = 5% of such trials by design (Wald); the cap keeps the test
    # cheap, and with random's high pair variance (about 0.12) the LLR drifts down by only
    # about 0.0034 a pair, so most trials end at the cap.  That the test does reach H0 when H0
    # is clearly true is checked by test_random_against_greedy_accepts_h0.
    states = [run_sprt(Sprt(0, 20), uniform, uniform, seed=s, cap=CAP) for s in range(20)]
    decisions = Counter(state.decision for state in states)
    assert decisions[SprtDecision.H1] == 0, [s.summary() for s in states]
    assert all(s.decision is SprtDecision.H0 or s.pairs == CAP for s in states)
    assert all(state.llr < 2.0 for state in states)
