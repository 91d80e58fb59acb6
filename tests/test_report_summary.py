"""The report's words, figures and plot, without a browser: values in, presentation out."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tacocat_arena.engine import Ruleset, Termination, TieRule
from tacocat_arena.referee.settings import FailurePolicy
from tacocat_arena.report.plot import elo_plot
from tacocat_arena.report.summary import board_words, bot_kind, config_settings, deck_words
from tacocat_arena.report.templating import fixed, md, score_colour
from tacocat_arena.stats.figures import compute_bot_figures, decision_times, percentile
from tacocat_arena.stats.tables import CrossCell, GameResult, compute_standings
from tacocat_arena.tournament.config import BotSpec, TournamentConfig


def a_config(**fields: object) -> TournamentConfig:
    bots = (BotSpec("a", "builtin:random"), BotSpec("b", "/abs/path/bot --token x"))
    return TournamentConfig(bots=bots, out=Path("/somewhere/league-7"), **fields)  # type: ignore[arg-type]


def test_the_event_is_named_by_the_config_or_else_by_its_folder() -> None:
    assert a_config().event_name == "league-7"
    assert a_config(name="Spring league").event_name == "Spring league"


def test_settings_read_as_sentences_and_hide_the_seed_until_the_end() -> None:
    config = a_config(
        seed=424242,
        time_bank_s=2.5,
        failure_policy=FailurePolicy.DEFAULT_ACTION,
        games_per_pairing=6,
    )
    during = {s.label: s.words for s in config_settings(config, complete=False)}
    after = {s.label: s.words for s in config_settings(config, complete=True)}
    assert during["Games"].startswith("6 per pairing: 3 deals, each played twice")
    assert "1 s per decision, plus a time bank of 2.5 s per bot per game" in during["Clock"]
    assert "default legal move" in during["Failures"]
    assert "424242" not in " ".join(during.values())
    assert after["Seed"].startswith("424242")


def test_bots_are_described_without_their_command_lines() -> None:
    assert bot_kind(BotSpec("a", "builtin:random")) == "an example bot, builtin:random"
    assert bot_kind(BotSpec("b", "/abs/path/bot --token x")) == "a program started by the arena"
    assert bot_kind(BotSpec("c", "")) == "connects to the referee by itself"


def test_ruleset_words_follow_the_ruleset() -> None:
    assert deck_words(Ruleset()).startswith("38 cards (value×copies: 1×2, 2×3,")
    assert "4 5 6 7 6 5 4; on the centre both replace" in board_words(Ruleset())
    odd = Ruleset.from_dict({"hand_sizes": [5, 6, 5], "arrows": [[1], [0, 1], [1]]})
    assert board_words(odd).endswith("who replaces first on each space: seat 1 both seat 1")
    arrow = a_config(ruleset=Ruleset.from_dict({"tie_rule": TieRule.ARROW.value}))
    ties = {s.label: s.words for s in config_settings(arrow, complete=True)}["Ties"]
    assert "arrow points to" in ties


def result(game_id: str, seats: tuple[str, str], winner: int | None, reason: str, by=None):  # type: ignore[no-untyped-def]
    return GameResult(game_id, seats, 1, winner, reason, 3, (10, 10), (100.0, 300.0), by)


def test_bot_figures_count_forfeits_by_kind_and_take_p95_from_timed_records() -> None:
    results = [
        result("g1", ("a", "b"), 1, "timeout", 0),
        result("g2", ("b", "a"), 0, "crash", 1),
        result("g3", ("a", "b"), 0, "goal"),
    ]
    timed = {"actions": [{"seat": 0, "duel": 3, "ms": ms} for ms in range(1, 21)]}
    untimed = {"actions": [{"seat": 0, "duel": 3}]}
    figures = compute_bot_figures(results, ["a", "b"], [(results[0], timed), (results[1], untimed)])
    a = figures["a"]
    assert a.forfeits[Termination.FORFEIT_TIMEOUT] == 1
    assert a.forfeits[Termination.FORFEIT_CRASH] == 1
    assert a.forfeits[Termination.FORFEIT_ILLEGAL] == 0
    assert a.mean_decision_ms == pytest.approx((100 + 300 + 100) / 30)
    assert a.p95_decision_ms == 19.0 and a.timed_decisions == 20  # nearest rank: 19th of 20
    assert figures["b"].p95_decision_ms is None  # no timed decision of b's
    assert decision_times(untimed) is None
    assert percentile([5.0], 0.95) == 5.0


def test_the_elo_plot_puts_each_interval_around_its_rating() -> None:
    results = [result(f"g{i}", ("a", "b"), 0 if i % 3 else 1, "goal") for i in range(12)]
    rows = compute_standings(results, ["a", "b", "c"])
    plot = elo_plot(rows)
    assert [r.bot for r in plot.rows] == [row.bot for row in rows]
    for row, drawn in zip(rows, plot.rows, strict=True):
        if row.elo_err is None:
            assert drawn.low is None and "no games" in drawn.label
        else:
            assert plot.left <= drawn.low < drawn.x < drawn.high <= plot.right  # type: ignore[operator]
    assert any(t.label == "0" for t in plot.ticks)
    assert [t.x for t in plot.ticks] == sorted(t.x for t in plot.ticks)


def test_presentation_filters() -> None:
    assert fixed(None, 1) == "—" and fixed(12.345, 1) == "12.3"
    assert md("a|b") == "a\\|b"
    assert score_colour(CrossCell(wins=4)).startswith("hsl(120,")
    assert score_colour(CrossCell(losses=4)).startswith("hsl(0,")
    assert score_colour(CrossCell(wins=1, losses=1)) == "hsl(60, 20%, 82%)"


def test_bench_report_prints_its_figures() -> None:
    from click.testing import CliRunner

    from tacocat_arena.cli import main

    result = CliRunner().invoke(main, ["bench", "report", "--games", "12", "--bots", "3"])
    assert result.exit_code == 0, result.output
    assert "games: 12 over 3 bots" in result.output
    assert re.search(r"report.html \+ report.md: \d+\.\d\d s CPU", result.output)
    assert re.search(r"with every replay: +\d+\.\d\d s CPU .* replays [\d.]+ MB", result.output)


def test_a_name_in_report_md_is_shown_as_written_never_as_markup() -> None:
    markdown_it = pytest.importorskip("markdown_it", reason="markdown-it-py renders the check")
    hostile = (
        "<script>alert(1)</script> <img src=x onerror=alert(2)> [click](javascript:alert(3)) "
        "![i](http://example.invalid/x.png) `code` *em* __strong__ # | a\\b &amp;"
    )
    html = markdown_it.MarkdownIt().render(f"# {md(hostile)}\n")
    for markup in ("<script", "<img", "<a ", "<em>", "<strong>", "<code>"):
        assert markup not in html, (markup, html)
    text = re.sub(r"<[^>]+>", "", html).strip()
    assert (
        text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
        == hostile
    )
