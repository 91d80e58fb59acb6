"""Re-verifying recorded games: ``tacocat-arena verify`` and the inputs ``replay`` reads.

A result table is only as trustworthy as the records anyone can re-check.  ``verify_path``
replays every game of a record file, a ``games.jsonl`` or a tournament's SQLite store from its
(ruleset, seed, actions), compares every event and the result, checks every substitution mark
and refused answer, and re-runs each seat's clock from the timings the record holds against
the clock settings it states (docs/game-record.md, "Checks").  Each problem names the game, the
round and the rule ID.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tacocat_arena.engine import Failure, RecordError, replay
from tacocat_arena.engine.record import FORMAT
from tacocat_arena.tournament.storage import DB_NAME, read_games

#: Slack for timings rounded to the microsecond in the record.
_EPSILON_MS = 0.01
_SQLITE_HEADER = b"SQLite format 3\x00"


class InputError(ValueError):
    """A file that holds no game records we can read; the message says what it is instead."""


@dataclass(frozen=True)
class GameEntry:
    """One recorded game: its id, its bots' names (when known) and its record."""

    game_id: str
    names: tuple[str, str] | None
    record: Mapping[str, Any]

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


def load_games(path: Path) -> list[GameEntry]:
    """Every game in ``path``: a tournament folder, its tournament.sqlite, a games.jsonl, or
    one game record (JSON); raise InputError naming what the file is otherwise."""
    if path.is_dir():
        for name in (DB_NAME, "games.jsonl"):
            if (path / name).exists():
                return load_games(path / name)
        raise InputError(f"{path} is a folder without {DB_NAME} or games.jsonl")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror}") from None
    if data.startswith(_SQLITE_HEADER):
        try:
            return [GameEntry(gid, names, record) for gid, names, record in read_games(path)]
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
    if isinstance(item, Mapping) and isinstance(item.get("record"), Mapping):
        record, game_id, names = item["record"], item.get("id"), item.get("seats")
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
    )


def _names(names: Any) -> tuple[str, str] | None:
    if isinstance(names, Sequence) and not isinstance(names, str) and len(names) == 2:
        return (str(names[0]), str(names[1]))
    return None


def verify_game(entry: GameEntry) -> list[Problem]:
    """Every problem of one recorded game (empty when it re-verifies)."""
    record = entry.record
    rounds: list[int] = []
    try:
        replay(record, rounds=rounds)
    except RecordError as error:
        return [Problem(entry.game_id, error.round, error.rule, str(error))]
    found = [Problem(entry.game_id, r, rule, text) for r, rule, text in check_marks(record, rounds)]
    found += [
        Problem(entry.game_id, r, rule, text) for r, rule, text in check_timing(record, rounds)
    ]
    return found


def verify_path(path: Path) -> Verification:
    """Re-verify every game in ``path`` (see ``load_games``)."""
    entries = load_games(path)
    if not entries:
        raise InputError(f"{path} holds no game")
    problems: list[Problem] = []
    unplayed = timed = 0
    for entry in entries:
        if entry.record.get("unplayed"):
            unplayed += 1
            continue
        problems += verify_game(entry)
        timed += _clock(entry.record) is not None
    return Verification(len(entries) - unplayed, unplayed, timed, tuple(problems))


def check_marks(
    record: Mapping[str, Any], rounds: Sequence[int]
) -> Iterator[tuple[int | None, str, str]]:
    """F1: substitutions and refused answers are recorded as docs/game-record.md says."""
    policy = (record.get("referee") or {}).get("failure_policy")
    for index, entry in enumerate(record["actions"]):
        where = rounds[index] if index < len(rounds) else None
        substituted, refused = entry.get("substituted"), entry.get("refused")
        if substituted is not None and policy == "forfeit":
            yield where, "F1", f"action {index} is a substitution under the forfeit policy"
        if substituted in (Failure.ILLEGAL.value, Failure.MALFORMED.value) and not refused:
            yield where, "F1", f"action {index} replaced a refused answer that is not recorded"
        if refused is None:
            continue
        then = "forfeit" if "forfeit" in entry else "default_action"
        if not isinstance(refused, Mapping) or refused.get("then") != then:
            yield where, "F1", f"action {index}: its refused answer does not say it led to {then}"
        elif "forfeit" not in entry and substituted is None:
            yield where, "F1", f"action {index} holds a refused answer but is the bot's own"


def _clock(record: Mapping[str, Any]) -> tuple[float, float, float] | None:
    referee = record.get("referee")
    if not isinstance(referee, Mapping):
        return None
    try:
        return (
            float(referee["decision_ms"]),
            float(referee["bank_ms"]),
            float(referee["grace_ms"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


def check_timing(
    record: Mapping[str, Any], rounds: Sequence[int]
) -> Iterator[tuple[int | None, str, str]]:
    """T1-T3: every measured time against the record's clock, each seat's bank re-run."""
    clock = _clock(record)
    if clock is None:
        return  # version 1, or a game played without a referee: nothing to check
    allowance, bank_ms, grace = clock
    bank = [bank_ms, bank_ms]
    for index, entry in enumerate(record["actions"]):
        seat = entry.get("seat")
        if seat not in (0, 1):
            continue
        where = rounds[index] if index < len(rounds) else None
        ms = entry.get("ms")
        timeout = Failure.TIMEOUT.value in (entry.get("substituted"), entry.get("forfeit"))
        own = "forfeit" not in entry and "substituted" not in entry
        answered = own or "refused" in entry  # an illegal or malformed answer came in time
        if ms is None:
            if own:
                yield where, "T3", f"action {index} (seat {seat}) has no measured time"
            continue
        if not isinstance(ms, int | float) or isinstance(ms, bool) or ms < 0:
            yield where, "T3", f"action {index} (seat {seat}): {ms!r} is not a time in ms"
            continue
        limit = allowance + bank[seat] + grace
        if answered and allowance and ms > limit + _EPSILON_MS:
            yield (
                where,
                "T1",
                (
                    f"action {index} (seat {seat}) took {ms:g} ms, past its {allowance:g} ms "
                    f"allowance + {bank[seat]:g} ms of bank left + {grace:g} ms grace, "
                    "yet it was applied instead of timing out"
                ),
            )
        if answered and allowance and ms > allowance:
            bank[seat] = max(0.0, bank[seat] - (ms - allowance))
        if timeout:
            if not allowance:
                yield where, "T2", f"action {index} (seat {seat}): a timeout with no clock"
            elif ms + _EPSILON_MS < allowance + bank[seat]:
                yield (
                    where,
                    "T2",
                    (
                        f"action {index} (seat {seat}) timed out after {ms:g} ms, before its "
                        f"{allowance:g} ms allowance + {bank[seat]:g} ms of bank had run out"
                    ),
                )
            bank[seat] = 0.0


def verify_lines(result: Verification, path: Path) -> Iterator[str]:
    """What ``tacocat-arena verify`` prints: one line per problem, then a summary."""
    for problem in result.problems:
        yield str(problem)
    games = f"{result.games} game{'s' * (result.games != 1)}"
    unplayed = f" ({result.unplayed} not played)" if result.unplayed else ""
    timing = f"; timings checked in {result.timed}" if result.timed < result.games else ""
    if result.problems:
        yield f"{len(result.problems)} problem(s) in {games} of {path}{unplayed}"
    else:
        yield (
            f"OK: {games} of {path} re-verified{unplayed}: every action legal, every event "
            f"and result as replayed, every substitution marked, every timing within its clock"
            f"{timing}"
        )
