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
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tacocat_arena.engine import RecordError, RulesetError, replay
from tacocat_arena.engine.record import FORMAT
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.commitments import check_commitment
from tacocat_arena.tournament.config import ConfigError, TournamentConfig, TournamentFormat
from tacocat_arena.tournament.games_log import GAMES_FILE
from tacocat_arena.tournament.plan_check import RESULTS_FILE, check_plan, config_from_metadata
from tacocat_arena.tournament.record_checks import (
    StateChecks,
    check_line,
    check_marks,
    check_policy,
    check_referee_block,
    check_timing,
    clock_of,
    forfeit_by,
    seat_fallbacks,
    seat_figures,
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
    #: What was checked of the folder beyond its games, for the summary ("" for a file).
    folder: str = ""
    #: The games read (the store's, for a folder that has one), for the checks of the
    #: folder's tables that rooms above this one make.
    entries: tuple[GameEntry, ...] = field(default=(), repr=False, compare=False)

    @property
    def ok(self) -> bool:
        """No problem, and nothing that should have been checked left unchecked."""
        return not self.problems and not self.unchecked


def load_games(path: Path) -> list[GameEntry]:
    """Every game in ``path``: a tournament folder, its tournament.sqlite, a games.jsonl, or
    one game record (JSON); raise InputError naming what the file is otherwise.  A folder is
    read from its store, which its tables are built from, else from its games.jsonl
    (``load_folder`` also compares the two)."""
    if path.is_dir():
        return load_folder(path)[0]
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


#: A games.jsonl line's fields that its store row holds too (``storage.read_games``).
_ROW_FIELDS = (
    "seats",
    "seed",
    "winner",
    "reason",
    "rounds",
    "decisions",
    "decision_ms",
    "fallbacks",
    "detail",
)


def load_folder(folder: Path) -> tuple[list[GameEntry], list[Problem]]:
    """A tournament folder's games and what its two copies of them disagree on (G2): the
    store (every committed game: the tables are built from it) and games.jsonl (the
    published file, which holds a game once its duplicate pair is committed).  Each line is
    its store row, record and fields alike; each row is a line unless its twin is not
    committed yet.  Without a store (a folder published without its private store), the
    games are read from games.jsonl alone; without games.jsonl (a store written by
    ``run_tournament`` called with no games log, as a library user may), from the store
    alone: there is no second copy to compare."""
    store, log = folder / DB_NAME, folder / GAMES_FILE
    if not store.exists() and not log.exists():
        raise InputError(f"{folder} is a folder without {DB_NAME} or {GAMES_FILE}")
    if not store.exists():
        return [_tagged(line, line) for line in load_games(log)], []
    rows = load_games(store)
    if not log.exists():
        return rows, []
    lines = load_games(log)
    published = {line.game_id: line for line in lines}
    tagged = [
        _tagged(row, published[row.game_id]) if row.game_id in published else row for row in rows
    ]
    return tagged, compare_copies(rows, lines)


def _tagged(entry: GameEntry, line: GameEntry) -> GameEntry:
    """``entry`` with the tag its games.jsonl ``line`` publishes (None if it has none), for
    the commitment check (``commitments.check_commitment``)."""
    tag = (line.line or {}).get("tag")
    return GameEntry(entry.game_id, entry.names, entry.record, {**(entry.line or {}), "tag": tag})


def compare_copies(rows: Sequence[GameEntry], lines: Sequence[GameEntry]) -> list[Problem]:
    """G2: the store's rows and games.jsonl's lines hold the same games (see ``load_folder``)."""
    found: list[Problem] = []
    by_id = {row.game_id: row for row in rows}
    logged = Counter(line.game_id for line in lines)
    for game_id, count in logged.items():
        if count > 1:
            found.append(Problem(game_id, None, "G2", f"appears {count} times in {GAMES_FILE}"))
    for line in lines:
        row = by_id.get(line.game_id)
        if row is None:
            found.append(Problem(line.game_id, None, "G2", f"is in {GAMES_FILE}, not in the store"))
            continue
        if line.record != row.record:
            found.append(
                Problem(line.game_id, None, "G2", f"its record in {GAMES_FILE} is not the store's")
            )
        fields, stored = line.line or {}, row.line or {}
        for key in _ROW_FIELDS:
            if key in fields and key in stored and not _same(key, fields[key], stored[key]):
                found.append(
                    Problem(
                        line.game_id,
                        None,
                        "G2",
                        f"its {key} in {GAMES_FILE} is {fields[key]!r}, the store's "
                        f"{stored[key]!r}",
                    )
                )
    pairs = Counter(_deal_of(row) for row in rows)
    for row in rows:
        if row.game_id not in logged and pairs[_deal_of(row)] > 1:
            found.append(
                Problem(
                    row.game_id,
                    None,
                    "G2",
                    f"is in the store with its duplicate twin, but not in {GAMES_FILE}",
                )
            )
    return found


def _same(key: str, logged: Any, stored: Any) -> bool:
    """Whether a line's field says what its row's does (``decision_ms``: the line's are the
    row's rounded to the microsecond, ``games_log.game_line``)."""
    if key == "decision_ms" and isinstance(stored, list) and isinstance(logged, list):
        return logged == [round(ms, 3) if isinstance(ms, float) else ms for ms in stored]
    return bool(logged == stored)


def _deal_of(entry: GameEntry) -> tuple[Any, tuple[str, ...]]:
    """What a game shares with its twin (``games_log.duplicate_key``)."""
    return (entry.record.get("seed"), tuple(sorted(entry.seat_names)))


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


def result_of(entry: GameEntry) -> GameResult:
    """The stored result of a game as its store row (or games.jsonl line) gives it, the
    record filling in what a line lacks: what the tables are computed from.  Raises
    ValueError for a game whose fields are no result (its own checks name why)."""
    fields, record = entry.line or {}, entry.record
    decisions, total = seat_figures(record)
    return GameResult(
        game_id=entry.game_id,
        seats=entry.seat_names,
        seed=fields.get("seed", record.get("seed")),
        winner=fields.get("winner", record.get("winner")),
        reason=fields.get("reason", record.get("termination")),
        rounds=fields.get("rounds", record.get("rounds")),
        decisions=tuple(fields.get("decisions", decisions)),
        decision_ms=tuple(fields.get("decision_ms", total)),
        forfeit_by=fields.get("forfeit_by", forfeit_by(record)),
        fallbacks=tuple(fields.get("fallbacks", seat_fallbacks(record))),
    )


def verify_path(path: Path) -> Verification:
    """Re-verify every game in ``path`` (see ``load_games``); for a folder, also that it holds
    exactly its tournament's plan (plan_check)."""
    entries, problems = load_folder(path) if path.is_dir() else (load_games(path), [])
    if not entries:
        raise InputError(f"{path} holds no game")
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
    unchecked = folder = ""
    if path.is_dir():
        plan = check_plan(path, [(e.game_id, e.names, e.record) for e in entries])
        unchecked = plan.unchecked
        problems += [
            Problem(game_id or str(path), None, rule, text) for game_id, rule, text in plan.found
        ]
        folder = "the store and games.jsonl agree, and the folder holds exactly its plan"
        if not (path / DB_NAME).exists():
            folder = "the folder holds exactly its plan (read from games.jsonl: no store)"
        committed, checked = commitment_problems(path, entries)
        problems += committed
        folder += f"; {checked}" if checked else ""
    return Verification(
        len(entries) - unplayed,
        unplayed,
        timed,
        tuple(problems),
        unchecked,
        folder,
        tuple(entries),
    )


def commitment_problems(folder: Path, entries: Sequence[GameEntry]) -> tuple[list[Problem], str]:
    """C1 of a folder (``commitments.check_commitment``) against its results.json."""
    try:
        metadata = json.loads((folder / RESULTS_FILE).read_text(encoding="utf-8"))["metadata"]
        dict(metadata)
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return [], ""  # plan_check says what is wrong with results.json
    try:
        # A round robin's or a gauntlet's committed plan follows from the config without its
        # seed (the seed and the secret decide only the deals), so an unfinished one's is
        # checked too; a Swiss event's first round may follow from the seed, kept back.
        config: TournamentConfig | None = config_from_metadata({"seed": 0, **metadata})
        if config is not None and config.format is TournamentFormat.SWISS:
            config = config if "seed" in metadata else None
    except (ConfigError, RulesetError, AttributeError, KeyError, TypeError, ValueError):
        config = None
    lines = [
        (e.game_id, e.seat_names, e.record, e.line if e.line and "tag" in e.line else None)
        for e in entries
    ]
    found, checked = check_commitment(folder, metadata, config, lines)
    return [
        Problem(game_id or str(folder), None, rule, text) for game_id, rule, text in found
    ], checked


def with_problems(result: Verification, found: Sequence[Problem], checked: str) -> Verification:
    """``result`` with ``found`` added, and ``checked`` said of the folder too."""
    folder = "; ".join(part for part in (result.folder, checked) if part)
    return replace(result, problems=(*result.problems, *found), folder=folder)


def verify_lines(result: Verification, path: Path) -> Iterator[str]:
    """What ``tacocat-arena verify`` prints: one line per problem, then a summary (``OK:``
    only when ``result.ok``)."""
    for problem in result.problems:
        yield str(problem)
    games = f"{result.games} game{'s' * (result.games != 1)}"
    unplayed = f" ({result.unplayed} not played)" if result.unplayed else ""
    timing = f"; timings checked in {result.timed}" if result.timed < result.games else ""
    plan = f"; {result.folder}" if result.folder else ""
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
