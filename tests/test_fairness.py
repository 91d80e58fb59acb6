"""The duplicate-deal measurement: consistent figures on a small run."""

from __future__ import annotations

import math
import random

import pytest

from tacocat_arena.bench.fairness import (
    EpsilonGreedyPolicy,
    FairnessReport,
    measure_duplicate_efficiency,
    variance_ratio,
)
from tacocat_arena.engine import Game, build_view
from tacocat_arena.play.policies import GreedyPolicy


@pytest.fixture(scope="module")
def report() -> FairnessReport:
    return measure_duplicate_efficiency(pairs=60, seed=3)


def test_report_fields_are_consistent(report: FairnessReport) -> None:
    assert report.pairs == 60 and report.seed == 3 and report.games == 240
    assert report.epsilon == 0.02
    for score in (report.duplicate_score, report.alternation_score, report.seat0_score):
        assert 0.0 <= score <= 1.0
    for share in (report.draw_rate, report.split_rate):
        assert 0.0 <= share <= 1.0
    # Pair means are multiples of 1/4 in [0, 1]: a variance of at most 1/4 (n/(n-1) aside).
    for variance in (report.duplicate_variance, report.alternation_variance):
        assert 0.0 <= variance <= 0.25 * report.pairs / (report.pairs - 1)
    assert report.duplicate_variance > 0  # the bots are close, not identical
    assert report.ratio == pytest.approx(report.alternation_variance / report.duplicate_variance)
    low, high = report.ratio_ci95
    assert 0 < low < report.ratio < high
    assert report.duplicate_ci95 == pytest.approx(
        1.96 * math.sqrt(report.duplicate_variance / report.pairs), rel=1e-3
    )
    assert report.alternation_ci95 == pytest.approx(
        1.96 * math.sqrt(report.alternation_variance / report.pairs), rel=1e-3
    )
    dup_games, alt_games = report.games_needed(0.05)
    assert dup_games % 2 == 0 and alt_games % 2 == 0
    assert alt_games / dup_games == pytest.approx(report.ratio, rel=0.1)


def test_summary_states_the_ratio(report: FairnessReport) -> None:
    text = report.summary()
    assert f"ratio {report.ratio:.2f}" in text
    assert f"1/{report.ratio:.1f}" in text
    assert "60 pairs" in text


def test_measurement_is_deterministic(report: FairnessReport) -> None:
    assert measure_duplicate_efficiency(pairs=60, seed=3) == report
    assert measure_duplicate_efficiency(pairs=60, seed=4) != report


def test_identical_deterministic_bots_split_every_deal() -> None:
    """With epsilon 0 both bots are GreedyPolicy: each deal's twin games are the same game
    with the seats swapped, so A scores exactly 1/2 per pair and duplicate has no variance."""
    report = measure_duplicate_efficiency(pairs=10, seed=1, epsilon=0.0)
    assert report.duplicate_score == 0.5
    assert report.duplicate_variance == 0.0
    assert report.split_rate == 1.0 or report.draw_rate > 0  # a drawn deal is not split
    assert report.ratio == math.inf
    assert all(math.isnan(bound) for bound in report.ratio_ci95)
    assert "cannot be compared" in report.summary()


def test_variance_ratio_edge_cases() -> None:
    assert variance_ratio(0.5, 0.1) == pytest.approx(5.0)
    assert variance_ratio(0.5, 0.0) == math.inf
    assert math.isnan(variance_ratio(0.0, 0.0))


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="pairs"):
        measure_duplicate_efficiency(pairs=1, seed=1)
    with pytest.raises(ValueError, match="epsilon"):
        EpsilonGreedyPolicy(1.5, random.Random(0))


def test_epsilon_greedy_is_greedy_at_zero_and_legal_at_one() -> None:
    game = Game(seed=5)
    views = [build_view(game, seat) for seat in sorted(game.pending)]
    greedy = GreedyPolicy()
    for view in views:
        assert EpsilonGreedyPolicy(0.0, random.Random(1)).act(view) == greedy.act(view)
        always_random = EpsilonGreedyPolicy(1.0, random.Random(1))
        game_copy = Game(seed=5)
        game_copy.apply(view.seat, always_random.act(view))  # legal: no exception
