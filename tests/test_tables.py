"""Tests for standings, crosstable and the report writers."""

from __future__ import annotations

import csv
import itertools
import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from tacocat_arena.report.tables import (
    STANDINGS_COLUMNS,
    render_crosstable,
    render_standings,
    write_crosstable_csv,
    write_results_json,
    write_standings_csv,
)
from tacocat_arena.stats.ratings import fit_ratings
from tacocat_arena.stats.tables import (
    CrossCell,
    GameResult,
    StandingsRow,
    compute_crosstable,
    compute_standings,
    rating_games,
    tournament_bots,
)


def game(
    game_id: str,
    seat0: str,
    seat1: str,
    winner: int | None,
    reason: str = "goal",
    *,
    forfeit_by: int | None = None,
    decisions: tuple[int, int] = (1, 1),
    decision_ms: tuple[float, float] = (1.0, 1.0),
    fallbacks: tuple[int, int] = (0, 0),
) -> GameResult:
    return GameResult(
        game_id=game_id,
        seats=(seat0, seat1),
        seed=hash(game_id) % 1000,
        winner=winner,
        reason=reason,
        rounds=10,
        decisions=decisions,
        decision_ms=decision_ms,
        forfeit_by=forfeit_by,
        fallbacks=fallbacks,
    )


BOTS = ["alpha", "bravo", "charlie", "delta"]  # delta is entered but never plays

RESULTS = [
    game("g1", "alpha", "bravo", 0, decisions=(5, 4), decision_ms=(50.0, 8.0), fallbacks=(3, 0)),
    game("g2", "bravo", "alpha", None, "round_cap", decisions=(6, 6), decision_ms=(12.0, 60.0)),
    game(
        "g3", "alpha", "charlie", 1, "crash", forfeit_by=0, decisions=(2, 2), decision_ms=(4.0, 2.0)
    ),
    game("g4", "charlie", "bravo", 0, decisions=(3, 3), decision_ms=(9.0, 3.0)),
    game(
        "g5",
        "bravo",
        "charlie",
        0,
        "timeout",
        forfeit_by=1,
        decisions=(1, 1),
        decision_ms=(1.0, 7.0),
    ),
    game("g6", "charlie", "alpha", 1, decisions=(4, 5), decision_ms=(8.0, 25.0)),
]
# By hand, from the list above:
#   alpha:   W(g1) D(g2) L(g3, forfeit) W(g6)   -> 2-1-1, 2.5 points, 1 forfeit
#   bravo:   L(g1) D(g2) L(g4) W(g5)            -> 1-2-1, 1.5 points
#   charlie: W(g3) W(g4) L(g5, forfeit) L(g6)   -> 2-2-0, 2.0 points, 1 forfeit
#   thinking: alpha 139 ms / 18, bravo 24 ms / 14, charlie 26 ms / 10


@pytest.fixture
def rows() -> list[StandingsRow]:
    return compute_standings(RESULTS, BOTS)


@pytest.fixture
def cross() -> dict[str, dict[str, CrossCell]]:
    return compute_crosstable(RESULTS, BOTS)


# --- standings ------------------------------------------------------------------------


def test_standings_by_hand(rows: list[StandingsRow]) -> None:
    by_bot = {row.bot: row for row in rows}
    assert [row.bot for row in rows] == ["alpha", "charlie", "bravo", "delta"]
    assert [row.rank for row in rows] == [1, 2, 3, 4]
    expected = {
        # bot: games, wins, losses, draws, score, forfeits, mean ms per decision
        "alpha": (4, 2, 1, 1, 2.5, 1, 139 / 18),
        "bravo": (4, 1, 2, 1, 1.5, 0, 24 / 14),
        "charlie": (4, 2, 2, 0, 2.0, 1, 26 / 10),
    }
    for bot, (games, wins, losses, draws, score, forfeits, ms) in expected.items():
        row = by_bot[bot]
        assert (row.games, row.wins, row.losses, row.draws) == (games, wins, losses, draws)
        assert row.score == score
        assert row.forfeits == forfeits
        assert row.mean_decision_ms == pytest.approx(ms)
    # Errors: moves the SDK played by default because the bot's code failed (g1: alpha's 3).
    assert {row.bot: row.errors for row in rows} == {
        "alpha": 3,
        "bravo": 0,
        "charlie": 0,
        "delta": 0,
    }


def test_bot_without_games(rows: list[StandingsRow]) -> None:
    delta = rows[-1]
    assert delta == StandingsRow(
        rank=4,
        bot="delta",
        games=0,
        wins=0,
        losses=0,
        draws=0,
        score=0.0,
        elo=0.0,
        elo_err=None,
        forfeits=0,
        errors=0,
        mean_decision_ms=None,
    )


def test_counts_add_up(rows: list[StandingsRow]) -> None:
    assert sum(row.games for row in rows) == 2 * len(RESULTS)
    assert sum(row.wins for row in rows) == sum(row.losses for row in rows)
    assert sum(row.score for row in rows) == len(RESULTS)
    for row in rows:
        assert row.wins + row.losses + row.draws == row.games


def test_elo_comes_from_the_rating_fit(rows: list[StandingsRow]) -> None:
    ratings = fit_ratings(BOTS, rating_games(RESULTS))
    for row in rows:
        assert row.elo == ratings[row.bot].elo
        if row.games:
            assert row.elo_err == ratings[row.bot].err
    assert rating_games(RESULTS)[:3] == [
        ("alpha", "bravo", 1.0),
        ("bravo", "alpha", 0.5),
        ("alpha", "charlie", 0.0),  # a forfeit is a loss in the rating fit too
    ]


def test_prior_is_passed_to_the_fit() -> None:
    results = [game("g1", "a", "b", 0), game("g2", "b", "a", 0), game("g3", "a", "b", None)]
    rows = compute_standings(results, prior_draws=0)
    assert rows[0].elo - rows[1].elo == pytest.approx(0.0, abs=1e-9)
    one_sided = [game("g1", "a", "b", 0)]
    with pytest.raises(ValueError, match="won every game"):
        compute_standings(one_sided, prior_draws=0)


def test_equal_score_is_broken_by_elo() -> None:
    # A and B both score 1 point, but A drew its points from the strong S, B from
    # the weak W: A's Elo is higher, so A ranks first among the three 1-pointers.
    results = [game(f"sw{i}", "S", "W", 0) for i in range(4)]
    results += [game("as1", "A", "S", 0), game("as2", "A", "S", 1)]
    results += [game("bw1", "B", "W", 0), game("bw2", "B", "W", 1)]
    rows = compute_standings(results)
    assert [row.score for row in rows] == [5.0, 1.0, 1.0, 1.0]
    assert rows[0].bot == "S"
    assert rows[1].bot == "A"
    assert rows[1].elo > rows[2].elo > rows[3].elo
    assert [row.rank for row in rows] == [1, 2, 3, 4]


def test_exact_ties_share_a_rank() -> None:
    results = [game("g1", "b", "a", 0), game("g2", "a", "b", 0)]
    rows = compute_standings(results, ["a", "b", "c"])
    assert [(row.rank, row.bot) for row in rows] == [(1, "a"), (1, "b"), (3, "c")]


def test_default_bots_are_the_ones_that_played() -> None:
    assert tournament_bots(RESULTS) == ["alpha", "bravo", "charlie"]
    assert [row.bot for row in compute_standings(RESULTS)] == ["alpha", "charlie", "bravo"]
    assert compute_standings([]) == []


def test_no_decisions_gives_no_mean() -> None:
    results = [game("g1", "a", "b", 0, decisions=(0, 2), decision_ms=(0.0, 3.0))]
    by_bot = {row.bot: row for row in compute_standings(results)}
    assert by_bot["a"].mean_decision_ms is None
    assert by_bot["b"].mean_decision_ms == pytest.approx(1.5)


def test_inconsistent_inputs_are_rejected() -> None:
    with pytest.raises(ValueError, match="'charlie', which is not in bots"):
        compute_standings(RESULTS, ["alpha", "bravo"])
    with pytest.raises(ValueError, match="'g1' appears more than once"):
        compute_standings([*RESULTS, RESULTS[0]])
    with pytest.raises(ValueError, match="duplicate"):
        compute_crosstable(RESULTS, ["alpha", "alpha", "bravo", "charlie"])


# --- game records ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"seats": ("a", "a")}, "two different bots"),
        ({"winner": 2}, "winner must be"),
        ({"reason": "resign"}, "unknown reason"),
        ({"reason": "timeout"}, "forfeit_by must be 0 or 1"),
        ({"reason": "crash", "forfeit_by": 0, "winner": 0}, "winner must be seat 1"),
        ({"reason": "disconnect", "forfeit_by": 1, "winner": None}, "winner must be seat 0"),
        ({"forfeit_by": 1}, "not a forfeit"),
        ({"rounds": -1}, "rounds"),
        ({"decisions": (1, -1)}, "decisions"),
        ({"decision_ms": (1.0, math.nan)}, "decision_ms"),
        ({"decision_ms": (-1.0, 1.0)}, "decision_ms"),
    ],
)
def test_game_result_validation(changes: dict[str, object], message: str) -> None:
    fields: dict[str, object] = {
        "game_id": "g",
        "seats": ("a", "b"),
        "seed": 1,
        "winner": 0,
        "reason": "goal",
        "rounds": 3,
        "decisions": (1, 1),
        "decision_ms": (1.0, 1.0),
        "forfeit_by": None,
    }
    fields.update(changes)
    with pytest.raises(ValueError, match=message):
        GameResult(**fields)  # type: ignore[arg-type]


def test_forfeit_record_is_valid() -> None:
    result = game("g", "a", "b", 0, "illegal_action", forfeit_by=1)
    assert (result.score(0), result.score(1)) == (1.0, 0.0)
    assert game("d", "a", "b", None, "round_cap").score(1) == 0.5


# --- crosstable -----------------------------------------------------------------------


def test_crosstable_by_hand(cross: dict[str, dict[str, CrossCell]]) -> None:
    assert cross["alpha"]["bravo"] == CrossCell(wins=1, losses=0, draws=1)
    assert cross["alpha"]["bravo"].record == "1-0-1"
    assert cross["alpha"]["bravo"].points == 1.5
    assert cross["alpha"]["charlie"] == CrossCell(1, 1, 0)
    assert cross["charlie"]["bravo"] == CrossCell(1, 1, 0)
    assert cross["delta"]["alpha"] == CrossCell(0, 0, 0)
    assert "alpha" not in cross["alpha"]


def test_crosstable_is_consistent_with_itself_and_standings(
    rows: list[StandingsRow], cross: dict[str, dict[str, CrossCell]]
) -> None:
    for a in BOTS:
        for b in BOTS:
            if a != b:
                assert cross[a][b].wins == cross[b][a].losses
                assert cross[a][b].draws == cross[b][a].draws
                assert cross[a][b].points + cross[b][a].points == cross[a][b].games
    for row in rows:
        assert sum(c.points for c in cross[row.bot].values()) == row.score
        assert sum(c.games for c in cross[row.bot].values()) == row.games


# --- writers --------------------------------------------------------------------------


def test_standings_csv(tmp_path: Path, rows: list[StandingsRow]) -> None:
    path = tmp_path / "out" / "standings.csv"  # missing folders are created
    write_standings_csv(path, rows)
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        body = list(reader)
    assert header == [
        "rank", "bot", "games", "wins", "losses", "draws", "score",
        "elo", "elo_err", "forfeits", "errors", "mean_decision_ms",
    ]  # fmt: skip
    assert tuple(header) == STANDINGS_COLUMNS
    assert [line[1] for line in body] == ["alpha", "charlie", "bravo", "delta"]
    first = dict(zip(header, body[0], strict=True))
    assert first["score"] == "2.5"
    assert first["forfeits"] == "1"
    assert float(first["elo"]) == pytest.approx(rows[0].elo, abs=0.05)
    assert float(first["mean_decision_ms"]) == pytest.approx(139 / 18, abs=5e-4)
    last = dict(zip(header, body[-1], strict=True))
    assert last["elo_err"] == "" and last["mean_decision_ms"] == ""
    assert last["elo"] == "0.0"


def test_crosstable_csv(tmp_path: Path, cross: dict[str, dict[str, CrossCell]]) -> None:
    path = tmp_path / "crosstable.csv"
    order = ["alpha", "charlie", "bravo", "delta"]
    write_crosstable_csv(path, order, cross)
    with path.open(newline="", encoding="utf-8") as handle:
        table = list(csv.reader(handle))
    assert table[0] == ["bot", *order, "score"]
    assert table[1] == ["alpha", "", "1-1-0 (1)", "1-0-1 (1.5)", "", "2.5"]
    assert table[3] == ["bravo", "0-1-1 (0.5)", "1-1-0 (1)", "", "", "1.5"]
    assert table[4] == ["delta", "", "", "", "", "0"]


def test_results_json(
    tmp_path: Path, rows: list[StandingsRow], cross: dict[str, dict[str, CrossCell]]
) -> None:
    path = tmp_path / "results.json"
    order = [row.bot for row in rows]
    metadata = {"tournament_seed": 42, "games": len(RESULTS), "output": tmp_path}

    def reject(constant: str) -> None:
        raise AssertionError(f"non-standard JSON constant {constant}")

    write_results_json(path, rows, order, cross, metadata)
    document = json.loads(path.read_text(encoding="utf-8"), parse_constant=reject)
    assert document["metadata"] == {
        "tournament_seed": 42,
        "games": len(RESULTS),
        "output": str(tmp_path),
    }
    assert [list(row) for row in document["standings"]] == [list(STANDINGS_COLUMNS)] * 4
    assert document["standings"][0]["bot"] == "alpha"
    assert document["standings"][-1]["elo_err"] is None
    assert document["crosstable"]["bots"] == order
    cell = document["crosstable"]["cells"]["alpha"]["bravo"]
    assert cell == {
        "wins": 1,
        "losses": 0,
        "draws": 1,
        "games": 2,
        "points": 1.5,
        "record": "1-0-1",
    }
    assert "alpha" not in document["crosstable"]["cells"]["alpha"]


def test_rich_tables(rows: list[StandingsRow], cross: dict[str, dict[str, CrossCell]]) -> None:
    console = Console(record=True, width=200, color_system=None)
    console.print(render_standings(rows))
    console.print(render_crosstable([row.bot for row in rows], cross))
    text = console.export_text()
    for bot in BOTS:
        assert bot in text
    assert "1-0-1 (1.5)" in text
    assert render_standings(rows).row_count == 4
    assert len(render_crosstable(BOTS, cross).columns) == len(BOTS) + 2


# --- properties -----------------------------------------------------------------------

NAMES = ["n0", "n1", "n2", "n3", "n4"]


@st.composite
def game_results(draw: st.DrawFn) -> list[GameResult]:
    results = []
    for index in range(draw(st.integers(0, 25))):
        a, b = draw(st.permutations(NAMES))[:2]
        reason = draw(st.sampled_from(["goal", "round_cap", "timeout", "crash"]))
        forfeit_by = draw(st.sampled_from([0, 1])) if reason in {"timeout", "crash"} else None
        winner = 1 - forfeit_by if forfeit_by is not None else draw(st.sampled_from([0, 1, None]))
        results.append(game(f"g{index}", a, b, winner, reason, forfeit_by=forfeit_by))
    return results


def rate(row: StandingsRow) -> float:
    """Points per game, -1 for a bot without games."""
    return row.score / row.games if row.games else -1.0


@settings(max_examples=80, deadline=None)
@given(game_results())
def test_properties(results: list[GameResult]) -> None:
    rows = compute_standings(results, NAMES)
    cross = compute_crosstable(results, NAMES)
    assert sorted(row.bot for row in rows) == NAMES
    assert sum(row.games for row in rows) == 2 * len(results)
    assert sum(row.wins for row in rows) == sum(row.losses for row in rows)
    assert sum(row.score for row in rows) == len(results)
    assert sum(row.forfeits for row in rows) == sum(r.forfeit_by is not None for r in results)
    assert rows[0].rank == 1
    for position, (previous, row) in enumerate(itertools.pairwise(rows), start=2):
        # Ordered by points per game (no games: last), then Elo; a shared rank only for
        # equal rate and Elo.
        assert rate(previous) > rate(row) or (
            rate(previous) == rate(row) and previous.elo >= row.elo - 1e-6
        )
        if row.rank != position:
            assert row.rank == previous.rank
            assert rate(row) == rate(previous)
            assert row.elo == pytest.approx(previous.elo, abs=1e-6)
    for row in rows:
        assert sum(c.points for c in cross[row.bot].values()) == row.score
        for other, cell in cross[row.bot].items():
            assert cross[other][row.bot] == CrossCell(cell.losses, cell.wins, cell.draws)


def test_unequal_games_rank_by_points_per_game_not_raw_points() -> None:
    # An interrupted tournament: "busy" played 8 games for 5 points, "idle" 4 games for 4.
    results = [game(f"b{i}", "busy", "x", 0 if i < 5 else 1) for i in range(8)]
    results += [game(f"i{i}", "idle", "y", 0) for i in range(4)]
    rows = compute_standings(results, ["busy", "idle", "x", "y", "absent"])
    assert [(row.bot, row.games, row.score) for row in rows[:2]] == [
        ("idle", 4, 4.0),
        ("busy", 8, 5.0),
    ]
    assert rows[-1].bot == "absent" and rows[-1].games == 0
