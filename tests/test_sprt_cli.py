"""``tacocat-arena play --sprt``: real bot processes, the stopping rule, the exit codes.

Also the match monitor behind the progress line, fed results by hand.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from verify_support import assert_verifies  # tests/ (pytest pythonpath)

from tacocat_arena.cli import main
from tacocat_arena.stats.live import EXIT_CODES, MatchMonitor
from tacocat_arena.stats.pair_report import sprt_closing
from tacocat_arena.stats.pairs import pair_stats
from tacocat_arena.stats.sprt import Sprt, SprtDecision
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.schedule import round_robin


def play(*args: str) -> tuple[int, str]:
    result = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["play", *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


@pytest.mark.slow
def test_greedy_against_random_accepts_h1_and_stops_early(tmp_path: Path) -> None:
    out = tmp_path / "m"
    # Elo1 100, not 20: greedy is far stronger than that (the tables say +800 or more), so the
    # test decides in about 12 pairs, within the first phase of 16 (its two processes a bot),
    # where 0,20 took about 53 pairs and 4 phases; the stopping rule is the same.
    code, output = play("builtin:greedy", "builtin:random", "--sprt", "0,100", "--out", str(out))
    assert code == EXIT_CODES[SprtDecision.H1] == 0, output
    last = output.strip().splitlines()[-1]
    assert last.startswith("SPRT: H1 accepted (LLR "), last
    results = json.loads((out / "results.json").read_text())
    sprt = results["sprt"]
    assert sprt["decision"] == "H1" and sprt["llr"] >= sprt["upper"] == pytest.approx(2.944, 1e-3)
    assert last.startswith(sprt["summary"] + " ("), last
    # It stopped early: far fewer games than the 2000 of the cap.  Every pair the test counted
    # is in the results; games that finished out of plan order, or were in flight at the
    # decision, are in the results too but not in the test.
    played = results["metadata"]["games_played"]
    assert 2 * sprt["pairs"] <= played < 300
    (pairing,) = results["pairings"]
    assert (pairing["a"], pairing["b"]) == ("greedy", "random")
    assert pairing["pairs"] >= sprt["pairs"] and pairing["elo"] > 100 and pairing["los"] > 0.99
    assert len((out / "games.jsonl").read_text().splitlines()) == played  # the match is over
    # The closing line counts what the tables count (the summary once said 161 pairs where
    # the tables had 327 games and 163 pairs): the test's pairs, and the tables' too.
    if pairing["pairs"] == sprt["pairs"] and not pairing["unpaired_games"]:
        assert last.endswith(f"({played} games, as in the tables)"), last
    else:
        assert f"{pairing['pairs']} pairs and {played} games" in last, last
    assert_verifies(out)  # whole pairs of the plan only, every game re-verified


@pytest.mark.slow
def test_no_decision_within_the_cap_exits_4(tmp_path: Path) -> None:
    out = tmp_path / "m"
    code, output = play(
        "builtin:greedy", "builtin:random", "--sprt", "0,20", "--games", "4", "--out", str(out)
    )
    assert code == EXIT_CODES[SprtDecision.NONE] == 4, output
    assert "SPRT: no decision (LLR " in output and "after 2 pairs" in output
    assert json.loads((out / "results.json").read_text())["sprt"]["decision"] == "none"
    assert_verifies(out)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sprt", "20,0"], "elo0 must be below elo1"),
        (["--sprt", "20"], "expected ELO0,ELO1"),
        (["--sprt", "0,20", "--alpha", "0"], "alpha and beta must be in (0, 1)"),
    ],
)
def test_bad_sprt_flags_are_usage_errors(args: list[str], message: str, tmp_path: Path) -> None:
    code, output = play("greedy", "random", *args, "--out", str(tmp_path / "m"))
    assert code == 2 and message in output, output
    assert not (tmp_path / "m").exists()  # refused before anything started


def test_exit_codes_do_not_collide_with_click_or_an_interrupt() -> None:
    assert sorted(EXIT_CODES.values()) == [0, 3, 4]
    assert os.EX_OK == EXIT_CODES[SprtDecision.H1]


def test_the_monitor_counts_pairs_in_plan_order_and_stops_on_a_decision() -> None:
    plan = round_robin(["new", "old"], 200, 5, secret="")
    monitor = MatchMonitor(plan, "new", "old", Sprt(0, 20))
    assert monitor.progress_text() == "new 0-0 old, Elo ?, LLR 0.00 (-2.94, 2.94)"
    # new wins every game; games arrive two pairs at a time, the later pair first.
    for index in range(0, len(plan), 4):
        for game in plan[index + 2 : index + 4] + plan[index : index + 2]:
            monitor.add(GameResult(game.game_id, game.seats, game.seed, game.seats.index("new"),
                                   "goal", 2, (3, 3), (1.0, 1.0)))  # fmt: skip
        if monitor.is_decided:
            break
    assert monitor.sprt is not None and monitor.sprt.decision is SprtDecision.H1
    assert monitor.sprt.pairs == 53  # as many as in order (test_pairs_sprt), not 54
    assert monitor.pentanomial.counts == (0, 0, 0, 0, 54)
    assert monitor.progress_text().startswith("new 108-0 old, Elo +1200 ± ")


def test_the_closing_line_counts_the_pairs_and_games_the_tables_count() -> None:
    """The test stops at 53 pairs; the games in flight finish: the tables have 54 pairs and
    one unpaired game, and the closing line says both (it said only the test's 53)."""
    plan = round_robin(["new", "old"], 200, 5, secret="s")
    monitor = MatchMonitor(plan, "new", "old", Sprt(0, 20))
    results = [
        GameResult(game.game_id, game.seats, game.seed, game.seats.index("new"), "goal", 2,
                   (3, 3), (1.0, 1.0))
        for game in plan[:109]
    ]  # fmt: skip
    for result in results:
        monitor.add(result)
    assert monitor.sprt is not None and monitor.sprt.pairs == 53
    line = sprt_closing(monitor.sprt, [pair_stats(results, "new", "old")])
    assert line.startswith(monitor.sprt.summary() + " (106 games); "), line
    assert line.endswith(
        "the tables count every finished game: 54 pairs and 109 games, as 1 more pair and "
        "1 unpaired game finished after the decision, in flight"
    ), line
    level = sprt_closing(monitor.sprt, [pair_stats(results[:106], "new", "old")])
    assert level == monitor.sprt.summary() + " (106 games, as in the tables)"
