"""``play --sprt`` says how long it may take before its first game (issue 37, point 6: a
gap of 194 Elo took 104 pairs at 0,10, and nothing had said it would)."""

from __future__ import annotations

import math

import pytest

from tacocat_arena.cli.run import sprt_estimate
from tacocat_arena.stats.sprt import Sprt


def test_the_estimate_is_wald_s_bound_over_the_drift() -> None:
    test = Sprt(0, 10)
    far = test.expected_pairs(194)
    assert 80 < far < 130  # issue 37 measured 104 pairs for 194 Elo at 0,10
    assert test.expected_pairs(10) > 1000  # a 10 Elo difference needs thousands
    # At H1 and at H0 alike (Wald's bounds are equal for alpha = beta): the same count.
    assert test.expected_pairs(10) == pytest.approx(test.expected_pairs(0), rel=1e-3)
    assert test.expected_pairs(5.0) > 100 * test.expected_pairs(10)  # halfway: the cap decides
    assert math.isinf(Sprt(-10, 10).expected_pairs(0))  # exactly halfway: no drift at all
    assert Sprt(0, 100).expected_pairs(194) < far / 4  # wider bounds: sooner


def test_the_line_names_the_cap_and_suggests_wider_bounds() -> None:
    line = sprt_estimate(Sprt(0, 10), 2000)
    assert "(over the cap of 1000) if A - B is 10 Elo" in line
    assert "--sprt 0,100 decides one of 200 Elo in ~14 pairs" in line
    assert "--sprt" not in sprt_estimate(Sprt(0, 150), 30)  # already wide
