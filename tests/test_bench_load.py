"""bench load and bench soak: they run end to end and print their figures."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from tacocat_arena.bench.load import ClockHistogram
from tacocat_arena.cli import main


def test_clock_histogram_quantiles_match_the_sorted_times() -> None:
    histogram = ClockHistogram()
    times = [0.05 * i for i in range(1, 1001)] + [7_000.0]  # one beyond the buckets
    for ms in times:
        histogram.add(ms)
    assert histogram.total == 1001
    assert histogram.largest == 7_000.0
    assert abs(histogram.quantile(0.5) - sorted(times)[500]) <= 0.1
    assert abs(histogram.quantile(0.99) - sorted(times)[990]) <= 0.1
    assert histogram.quantile(1.0) == 7_000.0


@pytest.mark.slow
def test_bench_load_prints_every_figure_for_each_level() -> None:
    result = CliRunner().invoke(
        main, ["bench", "load", "--games-at-once", "1,4", "--seconds", "1"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    for level in (1, 4):
        line = next(ln for ln in result.output.splitlines() if f"{level} games at once" in ln)
        assert re.search(r"[\d,]+ decisions/s", line), line
        assert re.search(r"clock p50 [\d.]+ p99 [\d.]+ max [\d.]+ ms", line), line
        assert re.search(r"longest untimed gap [\d.]+ ms", line), line
        assert re.search(r"worst ruling lag [\d.]+ ms", line), line
        assert "false timeouts 0" in line, line
    assert result.output.count("RSS MiB over time:") == 2
    assert "load average" in result.output


@pytest.mark.slow
def test_bench_soak_prints_the_rss_curve() -> None:
    result = CliRunner().invoke(main, ["bench", "soak", "--games", "20", "--games-at-once", "4"])
    assert result.exit_code == 0, result.output
    slices = re.findall(
        r"games  RSS +[\d.]+ MiB  longest untimed gap +[\d.]+ ms  GC pause +[\d.]+ ms",
        result.output,
    )
    assert len(slices) >= 10, result.output
    assert re.search(r"longest untimed gap [\d.]+ ms, longest GC pause [\d.]+ ms", result.output)
    assert "over the second" in result.output and "false timeouts 0" in result.output


def test_bench_load_refuses_a_bad_level_list() -> None:
    result = CliRunner().invoke(main, ["bench", "load", "--games-at-once", "64,x"])
    assert result.exit_code != 0
    assert "comma-separated list of positive integers" in result.output


def test_bench_load_takes_its_clock_in_seconds_and_the_old_flag_with_a_warning() -> None:
    result = CliRunner().invoke(main, ["bench", "load", "--move-timeout", "0"])
    assert result.exit_code != 0
    assert "--move-timeout at least 0.001 s" in result.output
    result = CliRunner().invoke(main, ["bench", "load", "--move-timeout-ms", "0"])
    assert "--move-timeout-ms is deprecated; use --move-timeout SECONDS" in result.output
    assert "--move-timeout at least 0.001 s" in result.output
