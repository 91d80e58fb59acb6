"""``bench bots`` and ``bench envs`` print their tables (figures are not asserted: the
machine is shared; only that every row is measured and well formed)."""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from tacocat_arena.bench.bots import bench_bots, render_table
from tacocat_arena.cli import main


def test_bench_bots_scores_every_pairing_over_duplicate_pairs():
    results = bench_bots(["random", "greedy", "builtin:search?budget=10"], pairs=3, seed=2)
    assert [(r.first, r.second) for r in results] == [
        ("random", "greedy"),
        ("random", "search-budget-10"),
        ("greedy", "search-budget-10"),
    ]
    for result in results:
        assert len(result.pair_scores) == 3
        assert all(score in (0.0, 0.25, 0.5, 0.75, 1.0) for score in result.pair_scores)
    table = render_table(results)
    assert table.splitlines()[0] == "| bot | random | greedy | search-budget-10 | mean |"
    assert len(table.splitlines()) == 5


@pytest.mark.slow
def test_bench_bots_over_the_wire_plays_the_very_games_it_plays_in_process():
    """Bot processes over a loopback referee, seeded as in process: the same moves (the
    parity of tests/test_parity.py), so the same pair scores, with no fallback or forfeit."""
    specs = ["random", "builtin:greedy?epsilon=0.3", "builtin:ismcts?iterations=20"]
    local = bench_bots(specs, pairs=2, seed=4)
    wire = bench_bots(specs, pairs=2, seed=4, over_wire=True)
    assert [r.pair_scores for r in wire] == [r.pair_scores for r in local]
    assert [(r.fallbacks, r.forfeits) for r in wire] == [(0, 0)] * 3
    assert render_table(wire, over_wire=True).endswith(
        "12 games, 0 fallback moves (a bot's code raised), 0 forfeits."
    )


def test_bench_bots_command_prints_the_table_and_refuses_a_bad_spec():
    runner = CliRunner()
    result = runner.invoke(
        main, ["bench", "bots", "--pairs", "2", "--bot", "random", "--bot", "greedy"]
    )
    assert result.exit_code == 0, result.output
    assert re.search(r"\| greedy \| \d\.\d\d ± \d\.\d\d \| — \|", result.output)
    bad = runner.invoke(main, ["bench", "bots", "--bot", "random", "--bot", "builtin:x"])
    assert bad.exit_code == 1 and "unknown 'builtin:x'" in bad.output


@pytest.mark.slow
def test_bench_envs_command_measures_the_engine_every_wrapper_and_the_peers():
    result = CliRunner().invoke(main, ["bench", "envs", "--steps", "200", "--rounds", "1"])
    assert result.exit_code == 0, result.output
    names = ("engine (decisions)", "StepGame", "PettingZoo raw_env", "Gymnasium", "OpenSpiel py")
    peers = ("leduc_holdem_v4 (peer)", "python_kuhn_poker (peer)", "python_null (the floor)")
    for name in (*names, *peers):
        line = next(line for line in result.output.splitlines() if name in line)
        assert re.search(r"[\d,]+ +\d+\.\d|not installed", line), line


@pytest.mark.slow
def test_bench_envs_against_another_commit_measures_both_trees_in_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--against HEAD: a worktree of this commit, driven by the same loops, so each ratio is
    about 1 (not asserted: figures are not tested) and the worktree is gone after.  Its
    temporary folder is this test's own, so other worktrees of the repository (another bench
    run at the same moment, another xdist worker's) are not mistaken for it."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = CliRunner().invoke(
        main, ["bench", "envs", "--steps", "100", "--rounds", "2", "--against", "HEAD"]
    )
    assert result.exit_code == 0, result.output
    assert re.search(r"against: +HEAD \([0-9a-f]{7}\), a worktree", result.output)
    for name in ("engine (decisions)", "StepGame", "PettingZoo raw_env", "OpenSpiel py"):
        line = next(line for line in result.output.splitlines() if name in line)
        assert re.search(r"\d\.\d\dx \(\d\.\d\d \d\.\d\d\)$", line), line
    listed = subprocess.run(["git", "worktree", "list"], capture_output=True, text=True).stdout
    assert str(tmp_path) not in listed
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_bench_envs_against_an_unknown_commit_says_so():
    result = CliRunner().invoke(main, ["bench", "envs", "--against", "no-such-rev"])
    assert result.exit_code == 1 and "--against no-such-rev: no such commit" in result.output


# -- bench arena --hosted --against: both trees in one run -------------------------------------
def _hosted_run(games: int, starts: int, cpu_s: float) -> object:
    from tacocat_arena.bench.hosted import HostedRun

    return HostedRun(1, 10.0, games, {"/": [1.0]}, 0.5, None, cpu_s, starts)


def test_the_hosted_comparison_prints_each_round_and_the_ratios():
    """Counted figures in, the per-round table and the ratios over all rounds out."""
    from tacocat_arena.bench.hosted import HostedComparison

    comparison = HostedComparison(
        "this", "REV (abcdef0)",
        (_hosted_run(40, 10, 2.0), _hosted_run(32, 8, 2.0)),  # type: ignore[arg-type]
        (_hosted_run(8, 8, 1.6), _hosted_run(16, 16, 3.2)),  # type: ignore[arg-type]
        (1.0, 1.0, 1.0), (2.0, 2.0, 2.0),
    )  # fmt: skip
    text = comparison.summary()
    assert "    1 this         4.00     40         0.25           50" in text
    assert "    2 against      1.60     16         1.00          200" in text
    assert "this 3.60 games/s, 0.25 starts a game, 56 ms CPU a game" in text
    assert "against 1.20 games/s, 1.00 starts a game, 200 ms CPU a game" in text
    assert "this/against games/s: 3.00 over all rounds (each round: 5.00, 2.00)" in text


def test_a_tree_that_committed_no_game_gets_no_ratio_and_is_named():
    """A 10 s window in which REV's tree committed nothing (its first batch still playing)
    printed 'this/against games/s: 1599979214.19' and '1280 ms CPU a game' of no game."""
    from tacocat_arena.bench.hosted import HostedComparison

    comparison = HostedComparison(
        "this", "REV (abcdef0)",
        (_hosted_run(16, 4, 1.1),),  # type: ignore[arg-type]
        (_hosted_run(0, 32, 12.8),),  # type: ignore[arg-type]
        (1.0, 1.0, 1.0), (2.0, 2.0, 2.0),
    )  # fmt: skip
    text = comparison.summary()
    assert "    1 against      0.00      0            -            -" in text
    assert "against 0.00 games/s (no game committed)" in text
    assert "this/against games/s: n/a over all rounds (each round: n/a); CPU a game n/a" in text
    assert "against committed no hosted game in any window: no ratio; give it longer" in text
    assert "1599979214" not in text and "e+" not in text


def test_bench_arena_refuses_against_without_hosted_and_with_a_batch_size():
    runner = CliRunner()
    result = runner.invoke(main, ["bench", "arena", "--against", "HEAD"])
    assert result.exit_code == 2 and "add --hosted" in result.output
    result = runner.invoke(
        main, ["bench", "arena", "--hosted", "--against", "HEAD", "--pairs-per-batch", "2"]
    )
    assert result.exit_code == 2 and "each tree's default batch size" in result.output


@pytest.mark.slow
def test_a_trees_environment_imports_that_tree_and_no_editable_install(tmp_path: Path) -> None:
    """The environment ``--hosted --against`` runs a worktree in imports the worktree's
    packages (the bots in their sandboxes too: it is their interpreter), not this checkout's
    through the editable install."""
    from tacocat_arena.bench.trees import tree_python, worktree

    with worktree("HEAD") as other:
        assert other is not None
        python = tree_python(other[1], tmp_path / "venv")
        done = subprocess.run(
            [python, "-c", "import sys, tacocat_bot, example_bots; print(tacocat_bot.__file__,"
             " example_bots.__file__, any('editable' in repr(f) for f in sys.meta_path))"],
            capture_output=True, text=True, cwd=tmp_path, check=True,
        )  # fmt: skip
        sdk, examples, finder = done.stdout.split()
        assert Path(sdk).is_relative_to(other[1]) and Path(examples).is_relative_to(other[1])
        assert finder == "False"


# -- bench referee --against: the runs in both orders ----------------------------------------
def test_bench_referee_against_makes_an_even_number_of_runs():
    from tacocat_arena.bench.referee import runs_in_both_orders

    assert [runs_in_both_orders(n) for n in (1, 2, 3, 5, 6)] == [2, 2, 4, 6, 6]


def test_the_referee_ratio_cancels_the_first_measured_trees_handicap():
    """Two equal trees, the one measured first in a run at 0.9 of its figure (as a loaded
    machine showed): the ratio over runs in both orders is 1.0, where the median of five
    runs, this tree first in three of them, said 0.9."""
    from tacocat_arena.bench.referee import CostPair, RefereeComparison

    def run(index: int) -> CostPair:
        first, second = (900.0, 1800.0), (1000.0, 2000.0)
        return CostPair(first, second) if index % 2 == 0 else CostPair(second, first)

    pairs = tuple(run(index) for index in range(6))
    assert abs(RefereeComparison.ratio(pairs, 0) - 1.0) < 1e-9
    assert abs(RefereeComparison.ratio(pairs, 1) - 1.0) < 1e-9
    odd = pairs[:5]
    assert sorted(p.cpu_ratio for p in odd)[2] == 0.9
    assert RefereeComparison.ratio((CostPair((500.0, 1.0), (1000.0, 1.0)),) * 2, 0) == 0.5
