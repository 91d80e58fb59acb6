"""The tournament database: every finished game is committed to SQLite before it counts.

One file, ``tournament.sqlite`` in the output folder, in WAL mode with synchronous=FULL: a
game's row is durable once ``save`` returns, so ``--resume`` after a crash or kill -9 replays
no finished game and loses none.  The ``meta`` table holds the config fingerprint, so a resume
with a different config is refused instead of mixing two tournaments, and the tournament's
deal secret (``deal_secret``), drawn once and kept by ``--resume``.  The file is private to
its owner (``private_database``: mode 0600, as are its WAL files): the secret predicts every
deal, so another user of the machine must not read it while the tournament runs.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from tacocat_arena.engine import Termination
from tacocat_arena.stats.tables import GameResult

DB_NAME = "tournament.sqlite"
#: The columns of a finished game after its id, in this store and in the arena's
#: (``arena/store.py``): the result, the detail, the record and when it was committed.
GAME_COLUMNS_DDL = """
    seat0 TEXT NOT NULL,
    seat1 TEXT NOT NULL,
    seed INTEGER NOT NULL,
    winner INTEGER,
    reason TEXT NOT NULL,
    rounds INTEGER NOT NULL,
    decisions0 INTEGER NOT NULL,
    decisions1 INTEGER NOT NULL,
    ms0 REAL NOT NULL,
    ms1 REAL NOT NULL,
    forfeit_by INTEGER,
    fallbacks0 INTEGER NOT NULL DEFAULT 0,
    fallbacks1 INTEGER NOT NULL DEFAULT 0,
    detail TEXT NOT NULL,
    record TEXT NOT NULL,
    finished_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
"""
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (game_id TEXT PRIMARY KEY,{GAME_COLUMNS_DDL});
"""


#: Columns added to ``GAME_COLUMNS_DDL`` after stores were first written, with their DDL:
#: a store from before gets them on opening (their defaults say "none recorded").
ADDED_GAME_COLUMNS = {
    "fallbacks0": "INTEGER NOT NULL DEFAULT 0",
    "fallbacks1": "INTEGER NOT NULL DEFAULT 0",
}


def add_missing_columns(db: sqlite3.Connection, table: str) -> None:
    """Give an older store's ``table`` the ``ADDED_GAME_COLUMNS`` it lacks."""
    present = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
    for name, ddl in ADDED_GAME_COLUMNS.items():
        if name not in present:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {ddl}")


#: The meta key prefix of a bot folder's copy (``record_snapshot``).
_SNAPSHOT_KEY = "snapshot:"


class StorageError(RuntimeError):
    """The output folder holds another tournament, or cannot be used."""


def output_folder(folder: Path) -> Path:
    """``folder``, made if missing; StorageError naming it and why if this user cannot make
    it or write in it (a user's unwritable working folder, a path it may not enter), so the
    commands say so before anything starts (``play human`` before it prints its page)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
    except OSError as error:
        raise StorageError(
            f"the output folder {folder} cannot be written ({error.strerror or error}): "
            "choose another with --out"
        ) from None
    return folder


class TournamentStore:
    """Finished games of one tournament."""

    def __init__(self, folder: Path) -> None:
        self.path = output_folder(folder) / DB_NAME
        private_database(self.path)
        self.db = sqlite3.connect(self.path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(_SCHEMA)
        add_missing_columns(self.db, "games")
        #: Called with (result, detail, record) after each game is committed.
        self.on_commit: list[Callable[[GameResult, str, dict[str, Any]], None]] = []

    def close(self) -> None:
        """Close the database."""
        self.db.close()

    def claim(self, fingerprint: str, *, resume: bool) -> int:
        """Bind this database to a tournament; return how many games it already holds.

        A fresh run refuses a folder that already holds games (``--resume`` continues them),
        and a run refuses a folder holding games of another tournament.
        """
        row = self.db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        done = self.count()
        if row is None or (row[0] != fingerprint and done == 0):
            # A database without games (say, a run whose bot failed to start) binds to nothing
            # yet: the corrected config takes it over.
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?)", (fingerprint,))
            # A new tournament: a new secret (nothing was dealt with the old one).
            self.db.execute("DELETE FROM meta WHERE key = 'deal_secret'")
        elif row[0] != fingerprint:
            raise StorageError(
                f"{self.path} belongs to another tournament (config fingerprint {row[0]}, "
                f"this one {fingerprint}): use another --out folder, or the same config"
            )
        if done and not resume:
            raise StorageError(
                f"{self.path} already holds {done} finished games of this tournament: add "
                "--resume to continue it, or choose another --out folder"
            )
        return done

    def record_snapshot(self, bot: str, sha256: str) -> None:
        """Keep the hash of the private copy of ``bot``'s folder that a root runner played
        (``launch.folder.readable_copy``): the code that played is known.  The last one
        counts (a resumed run copies the folder again)."""
        key = _SNAPSHOT_KEY + bot
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, sha256))

    def snapshots(self) -> dict[str, str]:
        """Bot name -> sha256 of every folder copy recorded (``record_snapshot``)."""
        rows = self.db.execute(
            "SELECT key, value FROM meta WHERE key LIKE ? ORDER BY key", (_SNAPSHOT_KEY + "%",)
        )
        return {key.removeprefix(_SNAPSHOT_KEY): value for key, value in rows}

    def deal_secret(self) -> str:
        """The secret mixed into every deal seed (``schedule.deal_seed``): drawn from
        ``secrets`` on first use, then kept, so a resumed tournament deals the same cards."""
        return stored_secret(self.db)

    def adopt_secret(self, secret: str) -> None:
        """Deal with ``secret`` instead of a drawn one (``grade`` deals every student's
        games from its grading run's secret); refused once games were dealt with another."""
        if self.count() and self.deal_secret() != secret:
            raise StorageError(f"{self.path} holds games dealt with another secret")
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('deal_secret', ?)", (secret,))

    def save(self, result: GameResult, detail: str, record: dict[str, Any]) -> None:
        """Commit one finished game (durable on return)."""
        self.db.execute(
            f"INSERT INTO games ({RESULT_COLUMNS}, detail, record) VALUES ({_PLACES}, ?, ?)",
            (*result_values(result), detail, json.dumps(record, separators=(",", ":"))),
        )
        for listener in self.on_commit:
            listener(result, detail, record)

    def finished_ids(self) -> set[str]:
        """Ids of the games already played."""
        return {row[0] for row in self.db.execute("SELECT game_id FROM games")}

    def count(self) -> int:
        """Number of finished games."""
        return int(self.db.execute("SELECT COUNT(*) FROM games").fetchone()[0])

    def results(self) -> list[GameResult]:
        """Every finished game, in the order they finished."""
        query = f"SELECT {RESULT_COLUMNS} FROM games ORDER BY rowid"
        return [result_from_row(row) for row in self.db.execute(query)]

    def rows(self) -> Iterator[tuple[GameResult, str, dict[str, Any]]]:
        """Every finished game with its detail and full record, in finishing order."""
        query = f"SELECT {RESULT_COLUMNS}, detail, record FROM games ORDER BY rowid"
        for row in self.db.execute(query):
            yield result_from_row(row), row[-2], json.loads(row[-1])


def stored_secret(db: sqlite3.Connection, key: str = "deal_secret") -> str:
    """The secret under ``key`` in ``db``'s ``meta`` table, drawn from ``secrets`` (128 bits)
    the first time: the deal secret of a tournament store and of the arena's store."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    if row is not None:
        return str(row[0])
    secret = secrets.token_hex(16)
    db.execute("INSERT INTO meta VALUES (?, ?)", (key, secret))
    return secret


#: Modes of what only the server's own user may read: a store, its WAL files, its folder.
PRIVATE_FILE_MODE = 0o600
PRIVATE_FOLDER_MODE = 0o700


def private_database(path: Path) -> None:
    """Make the SQLite file ``path`` (and its ``-wal``/``-shm`` files) readable by its owner
    only: created with mode 0600 if missing (SQLite gives the WAL files the database's mode),
    set back to 0600 if a copy from an older version, a ``cp`` or a umask left it wider."""
    os.close(os.open(path, os.O_CREAT | os.O_RDWR, PRIVATE_FILE_MODE))
    for part in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if part.exists() and part.stat().st_mode & 0o777 != PRIVATE_FILE_MODE:
            os.chmod(part, PRIVATE_FILE_MODE)


def private_folder(folder: Path) -> None:
    """Make ``folder`` (created if missing) enterable by its owner only (mode 0700)."""
    folder.mkdir(mode=PRIVATE_FOLDER_MODE, parents=True, exist_ok=True)
    if folder.stat().st_mode & 0o777 != PRIVATE_FOLDER_MODE:
        os.chmod(folder, PRIVATE_FOLDER_MODE)


#: A ``GameResult``'s columns, in the order of ``result_values`` and ``result_from_row``.
RESULT_COLUMNS = (
    "game_id, seat0, seat1, seed, winner, reason, rounds, decisions0, decisions1, ms0, ms1,"
    " forfeit_by, fallbacks0, fallbacks1"
)
_PLACES = ", ".join("?" * len(RESULT_COLUMNS.split(",")))


def read_games(
    path: Path,
) -> Iterator[tuple[str, tuple[str, str], dict[str, Any], dict[str, Any]]]:
    """(game id, bot names, record, the row's own fields) of every game in the store at
    ``path``, in finishing order; opened read-only, so a tournament still running is never
    disturbed.  The fields are the row's as games.jsonl names them (``seed``, ``winner``,
    ``reason``, ``rounds``, ``decisions``, ``decision_ms``, ``fallbacks``, ``detail``, and
    ``forfeit_by``), for ``verify`` to check against the record.  Raises ValueError when the
    file is an SQLite database but not a tournament store."""
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise ValueError(f"cannot open the SQLite database: {error}") from None
    try:
        rows = db.execute(f"SELECT {RESULT_COLUMNS}, detail, record FROM games ORDER BY rowid")
        for row in rows.fetchall():
            seed = row[3]
            fields = {
                "seats": [row[1], row[2]],
                "seed": seed + 2**64 if isinstance(seed, int) and seed < 0 else seed,
                "winner": row[4],
                "reason": row[5],
                "rounds": row[6],
                "decisions": [row[7], row[8]],
                "decision_ms": [row[9], row[10]],
                "forfeit_by": row[11],
                "fallbacks": [row[12], row[13]],
                "detail": row[-2],
            }
            yield row[0], (row[1], row[2]), json.loads(row[-1]), fields
    except sqlite3.Error as error:
        raise ValueError(f"not a tournament store ({error})") from None
    finally:
        db.close()


def result_values(result: GameResult) -> tuple[Any, ...]:
    """``result`` as the values of ``RESULT_COLUMNS``."""
    return (
        result.game_id,
        result.seats[0],
        result.seats[1],
        # Deal seeds are unsigned 64-bit, SQLite integers signed: store the two's complement.
        result.seed - 2**64 if result.seed >= 2**63 else result.seed,
        result.winner,
        result.reason.value,  # the enum's value only in the row
        result.rounds,
        result.decisions[0],
        result.decisions[1],
        result.decision_ms[0],
        result.decision_ms[1],
        result.forfeit_by,
        result.fallbacks[0],
        result.fallbacks[1],
    )


def result_from_row(row: Sequence[Any]) -> GameResult:
    """The ``GameResult`` of a row that starts with ``RESULT_COLUMNS``."""
    return GameResult(
        game_id=row[0],
        seats=(row[1], row[2]),
        seed=row[3] + 2**64 if row[3] < 0 else row[3],
        winner=row[4],
        reason=Termination(row[5]),
        rounds=row[6],
        decisions=(row[7], row[8]),
        decision_ms=(row[9], row[10]),
        forfeit_by=row[11],
        fallbacks=(row[12], row[13]),
    )
