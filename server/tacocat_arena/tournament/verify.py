"""Re-verifying recorded games: ``tacocat-arena verify`` and the inputs ``replay`` reads.

A result table is only as trustworthy as the records anyone can re-check.  ``verify_path``
replays every game of a record file, a ``games.jsonl`` or a tournament's SQLite store from its
(ruleset, seed, actions), compares every event and the result, checks what the referee claims
(every substitution is the policy's default, every refused answer was refused for the rule it
cites, every forfeit is one the policy imposes: record_checks), re-runs each seat's clock
against the clock settings the record states, checks each games.jsonl line against its record,
and, for a tournament folder, that it holds exactly its plan (plan_check).  Each problem names
the game, the round and the rule ID (docs/game-record.md, "Checks").
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tacocat_arena.engine import RecordError, replay
from tacocat_arena.engine.record import FORMAT
from tacocat_arena.tournament.plan_check import check_plan
from tacocat_arena.tournament.record_checks import (
    StateChecks,
    check_line,
    check_marks,
    check_policy,
    check_referee_block,
    check_timing,
    clock_of,
)
from tacocat_arena.tournament.storage import DB_NAME, read_games

_SQLITE_HEADER = b"SQLite format 3\x00"


class InputError(ValueError):
    """A file that holds no game records we can read; the message says what it is instead."""


@dataclass(frozen=True)
class GameEntry:
    """One recorded game: its id, its bots' names (when known) and its record; ``line`` is
    the whole games.jsonl line it came from (or the store row's fields, named alike), whose
    own fields ``verify`` checks too."""

    game_id: str
    names: tuple[str, str] | None
    record: Mapping[str, Any]
    line: Mapping[str, Any] | None = None

    @property
    def seat_names(self) -> tuple[str, str]:
        """The bots' names, or "seat 0" and "seat 1" when the record has none."""
        return self.names or ("seat 0", "seat 1")


@dataclass(frozen=True)
class Problem:
    """One thing a record gets wrong."""

    game_id: str
    round: int | None
    rule: str
    message: str

    def __str__(self) -> str:
        where = "" if self.round is None else f" round {self.round}"
        return f"{self.game_id}{where} {self.rule}: {self.message}"


@dataclass(frozen=True)
class Verification:
    """What ``verify_path`` found."""

    games: int
    unplayed: int
    timed: int  # games whose timings were checked (records of version 2 with clock settings)
    problems: tuple[Problem, ...]
    #: For a folder whose plan could not be re-derived (no results.json, or an unfinished
    #: tournament's, without the deal secret): why.  Such a folder is not reported as OK.
    unchecked: str = ""

    @property
    def ok(self) -> bool:
        """No problem, and nothing that should have been checked left unchecked."""
        return not self.problems and not self.unchecked


def load_games(path: Path) -> list[GameEntry]:
    """Every game in ``path``: a tournament folder, its tournament.sqlite, a games.jsonl, or
    one game record (JSON); raise InputError naming what the file is otherwise.  A folder is
    read from its games.jsonl, the published file, else from its store."""
    if path.is_dir():
        for name in ("games.jsonl", DB_NAME):
            if (path / name).exists():
                return load_games(path / name)
        raise InputError(f"{path} is a folder without {DB_NAME} or games.jsonl")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror}") from None
    if data.startswith(_SQLITE_HEADER):
        try:
            return [
                GameEntry(gid, names, record, fields)
                for gid, names, record, fields in read_games(path)
            ]
        except ValueError as error:
            raise InputError(f"{path}: {error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(
            f"{path} is not text: give a game record (JSON), a games.jsonl or a tournament.sqlite"
        ) from None
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        return list(_json_lines(path, text))
    items = whole if isinstance(whole, list) else [whole]
    return [_entry(path, item, index) for index, item in enumerate(items, 1)]


def _json_lines(path: Path, text: str) -> Iterator[GameEntry]:
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"{path} line {number} is not valid JSON: {error.msg}") from None
        yield _entry(path, item, number)


def _entry(path: Path, item: Any, number: int) -> GameEntry:
    """A games.jsonl line ({"id", "seats", "record"}) or a bare record."""
    line = None
    if isinstance(item, Mapping) and isinstance(item.get("record"), Mapping):
        record, game_id, names, line = item["record"], item.get("id"), item.get("seats"), item
    elif isinstance(item, Mapping) and item.get("format") == FORMAT:
        record, game_id, names = item, item.get("id"), item.get("players")
    elif isinstance(item, Mapping) and "standings" in item:
        raise InputError(
            f"{path} is a results file (standings and crosstable), not game records: give "
            "the tournament's games.jsonl or tournament.sqlite, or one game's record"
        )
    else:
        raise InputError(
            f"{path} entry {number} is not a game record "
            f'(no "format": "{FORMAT}" field and no "record")'
        )
    return GameEntry(
        str(game_id) if game_id is not None else f"#{number}",
        _names(names),
        record,
        line,
    )


def _names(names: Any) -> tuple[str, str] | None:
    if isinstance(names, Sequence) and not isinstance(names, str) and len(names) == 2:
        return (str(names[0]), str(names[1]))
    return None


def verify_game(entry: GameEntry) -> list[Problem]:
    """Every problem of one recorded game (empty when it re-verifies): its replay, then what
    the referee claims of it (record_checks) and, for a games.jsonl line, the line's fields."""
    record = entry.record
    rounds: list[int] = []
    state = StateChecks(record, rounds)
    try:
        replay(record, rounds=rounds, before=state)
    except RecordError as error:
        return [Problem(entry.game_id, error.round, error.rule, str(error))]
    found = [
        *check_referee_block(record),
        *check_marks(record, rounds),
        *state.found,
        *check_policy(record, rounds),
        *check_timing(record, rounds),
        *(check_line(entry.line, record) if entry.line is not None else ()),
    ]
    return [Problem(entry.game_id, r, rule, text) for r, rule, text in found]


def verify_path(path: Path) -> Verification:
    """Re-verify every game in ``path`` (see ``load_games``); for a folder, also that it holds
    exactly its tournament's plan (plan_check)."""
    entries = load_games(path)
    if not entries:
        raise InputError(f"{path} holds no game")
    problems: list[Problem] = []
    unplayed = timed = 0
    for entry in entries:
        if entry.record.get("unplayed"):
            unplayed += 1
            if entry.line is not None:
                problems += [
                    Problem(entry.game_id, r, rule, text)
                    for r, rule, text in check_line(entry.line, entry.record)
                ]
            continue
        problems += verify_game(entry)
        timed += clock_of(entry.record) is not None
    unchecked = ""
    if path.is_dir():
        plan = check_plan(path, [(e.game_id, e.names, e.record) for e in entries])
        unchecked = plan.unchecked
        problems += [
            Problem(game_id or str(path), None, rule, text) for game_id, rule, text in plan.found
        ]
    return Verification(len(entries) - unplayed, unplayed, timed, tuple(problems), unchecked)


def verify_lines(result: Verification, path: Path) -> Iterator[str]:
    """What ``tacocat-arena verify`` prints: one line per problem, then a summary (``OK:``
    only when ``result.ok``)."""
    for problem in result.problems:
        yield str(problem)
    games = f"{result.games} game{'s' * (result.games != 1)}"
    unplayed = f" ({result.unplayed} not played)" if result.unplayed else ""
    timing = f"; timings checked in {result.timed}" if result.timed < result.games else ""
    plan = "; the folder holds exactly its plan" if path.is_dir() else ""
    if result.problems:
        yield f"{len(result.problems)} problem(s) in {games} of {path}{unplayed}"
    elif result.unchecked:
        yield (
            f"NOT CHECKED: {games} of {path} re-verified{unplayed}, but not the folder: "
            f"{result.unchecked}"
        )
    else:
        yield (
            f"OK: {games} of {path} re-verified{unplayed}: every action legal, every event "
            f"and result as replayed, every substitution the policy's default, every refusal "
            f"and forfeit as the rules and the policy rule, every timing within its clock"
            f"{timing}{plan}"
        )
