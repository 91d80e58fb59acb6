"""``verify`` refuses records and lines the referee could not have written (issue 38, pt 3).

Each test changes one claim of a golden record (or of the line and the store row beside it)
that the replay alone cannot catch, and requires the one rule of docs/game-record.md,
"Checks", that the change breaks.  In process: records, lines and stores are fabricated.
"""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tacocat_arena.engine import Outcome, Termination, replay
from tacocat_arena.referee.match import MAX_FALLBACK_CHARS, GameReport
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.games_log import game_line
from tacocat_arena.tournament.record_checks import record_detail, seat_figures
from tacocat_arena.tournament.storage import TournamentStore
from tacocat_arena.tournament.verify import GameEntry, verify_game, verify_path

GOLDEN = Path(__file__).parent / "golden"


def golden(name: str) -> dict[str, Any]:
    return json.loads((GOLDEN / name).read_text())


def result_of(record: dict[str, Any], game_id: str = "g") -> GameResult:
    """The stored result of ``record``, as the runner would store it."""
    decisions, total = seat_figures(record)
    winner = record["winner"]
    reason = Termination(record["termination"])
    fallbacks = [0, 0]
    for entry in record["actions"]:
        if entry.get("fallback"):
            fallbacks[entry["seat"]] += 1
    return GameResult(
        game_id,
        tuple(record["players"]),  # type: ignore[arg-type]
        record["seed"],
        winner,
        reason,
        record["rounds"],
        (decisions[0], decisions[1]),
        (total[0], total[1]),
        forfeit_by=1 - winner if reason.is_forfeit and winner is not None else None,
        fallbacks=(fallbacks[0], fallbacks[1]),
    )


def line_of(record: dict[str, Any]) -> dict[str, Any]:
    """The games.jsonl line the runner writes for ``record``."""
    return game_line(result_of(record), record_detail(record), record)


def rules(record: dict[str, Any], line: dict[str, Any] | None = None) -> set[str]:
    return {p.rule for p in verify_game(GameEntry("g", None, record, line))}


def with_fallback(text: str) -> dict[str, Any]:
    record = golden("default.json")
    entry = next(e for e in record["actions"] if e.get("seat") == 1 and "ms" in e)
    entry["fallback"] = text
    return record


@pytest.mark.parametrize("name", [p.name for p in sorted(GOLDEN.glob("*.json"))])
def test_control_every_golden_record_and_its_line_verify(name: str) -> None:
    record = golden(name)
    assert rules(record, line_of(record)) == set()


def test_F1_a_fallback_of_many_lines_and_300_characters() -> None:
    text = ("decide() raised ValueError\n" * 12)[:300]
    assert rules(with_fallback(text)) == {"F1"}


def test_F1_a_fallback_one_character_past_the_referees_bound() -> None:
    assert rules(with_fallback("x" * MAX_FALLBACK_CHARS)) == set()
    assert rules(with_fallback("x" * (MAX_FALLBACK_CHARS + 1))) == {"F1"}
    assert rules(with_fallback("two  spaces")) == {"F1"}  # the referee makes runs single


def test_G1_a_lines_detail_blaming_the_winner() -> None:
    record = golden("forfeit-crash.json")
    line = line_of(record)
    winner = record["winner"]
    line["detail"] = f"{record['players'][winner]} (seat {winner}): its process died"
    assert rules(record, line) == {"G1"}


def test_G1_a_detail_on_a_game_that_ended_by_the_rules() -> None:
    record = golden("default.json")
    line = line_of(record)
    line["detail"] = "seat 1 crashed"
    assert rules(record, line) == {"G1"}


def test_E1_a_referee_block_with_a_clock_rule_the_referee_has_not() -> None:
    record = golden("forfeit-timeout.json")
    record["referee"]["late_credit_ms"] = 40
    assert rules(record) == {"E1"}


def test_E1_a_referee_block_without_its_allowance_escapes_no_timing() -> None:
    record = golden("forfeit-timeout.json")
    del record["referee"]["decision_ms"]
    assert rules(record) == {"E1"}


@pytest.mark.parametrize("key", ["decisions", "decision_ms"])
def test_G1_a_refereed_line_without_its_counts(key: str) -> None:
    record = golden("default-action.json")
    line = line_of(record)
    del line[key]
    assert rules(record, line) == {"G1"}


@pytest.mark.parametrize(
    ("column", "value"),
    [("fallbacks0", 3), ("forfeit_by", "1 - forfeit_by"), ("detail", "'made up'")],
)
def test_G1_a_store_rows_fallbacks_forfeit_or_detail_not_the_records(
    tmp_path: Path, column: str, value: object
) -> None:
    record = golden("forfeit-crash.json")
    store = TournamentStore(tmp_path)
    store.save(result_of(record), record_detail(record), record)
    store.close()
    assert not verify_path(tmp_path / "tournament.sqlite").problems
    with sqlite3.connect(tmp_path / "tournament.sqlite") as db:
        db.execute(f"UPDATE games SET {column} = {value}")
    problems = verify_path(tmp_path / "tournament.sqlite").problems
    assert {p.rule for p in problems} == {"G1"}, problems


def test_a_crashs_exit_reaches_the_record_as_well_as_the_line() -> None:
    """The runner adds how the process ended to a crash's detail: the record's forfeit (entry
    and event) says it too, and the record still replays and matches its line."""
    source = golden("forfeit-crash.json")
    game = replay(copy.deepcopy(source))
    assert game.outcome is not None and game.outcome.termination is Termination.FORFEIT_CRASH
    loser = 1 - game.outcome.winner  # type: ignore[operator]
    forfeit = next(e for e in source["actions"] if "forfeit" in e)
    report = GameReport(
        "g",
        ("a", "b"),
        game.seed,
        Outcome(game.outcome.termination, game.outcome.winner),
        forfeit["detail"],
        game.round,
        game=game,
        referee=source["referee"],
        players=tuple(source["players"]),  # type: ignore[arg-type]
        action_ms={i: e["ms"] for i, e in enumerate(source["actions"]) if "ms" in e},
    )
    report.add_to_detail("exited with code 3")
    record = report.record
    assert report.detail.endswith("(exited with code 3)")
    assert record_detail(record) == report.detail
    events = [e for e in record["events"] if e["type"] == "forfeit"]
    assert [e["detail"] for e in events] == [report.detail] and events[0]["seat"] == loser
    line = line_of(record)
    assert line["detail"] == report.detail
    assert rules(record, line) == set()
    for item in (forfeit, *(e for e in source["events"] if e["type"] == "forfeit")):
        item["detail"] = report.detail
    assert record == source  # nothing else changed
