"""The arena's database: players (token hashes only), every finished game, the submitted
versions (``arena/submissions.py`` reads and writes their rows), the refused connections.

One file, ``arena.sqlite`` in the arena's folder, in WAL mode with synchronous=FULL: a game's
row is durable once ``save_game`` returns, so a kill -9 of the server loses no finished game,
and ``serve`` started again on the folder carries the ladder on from what is stored.  WAL
also lets ``tacocat-arena players`` add or revoke a player while the server runs: the server
reads a player's token hash at each connection, so the change counts at once.

The folder is private (mode 0700) and the database too (0600, its WAL files alike), set when
they are created and set back on every open: the store holds the deal secret
(``arena/deals.py``), which predicts every deal, and the records of games not yet published.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.storage import (
    GAME_COLUMNS_DDL,
    RESULT_COLUMNS,
    add_missing_columns,
    private_database,
    private_folder,
    result_from_row,
    result_values,
    stored_secret,
)

DB_NAME = "arena.sqlite"
LADDER = "ladder"
"""The ``event`` of games the ladder pairs (round-robin events are named by the organizer)."""

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS players (
    name TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL,
    added_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    revoked_at TEXT
);
CREATE TABLE IF NOT EXISTS games (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id TEXT NOT NULL UNIQUE,
    event TEXT NOT NULL,
    pair INTEGER NOT NULL,{GAME_COLUMNS_DDL});
CREATE INDEX IF NOT EXISTS games_seat0 ON games (seat0, seq);
CREATE INDEX IF NOT EXISTS games_seat1 ON games (seat1, seq);
CREATE TABLE IF NOT EXISTS refusals (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    name TEXT NOT NULL,
    peer TEXT NOT NULL,
    reason TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS versions (
    player TEXT NOT NULL,
    version INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    submitted_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    status TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    log TEXT NOT NULL DEFAULT '',
    public_reason TEXT NOT NULL DEFAULT '',
    manifest TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (player, version)
);
"""
#: The columns ``versions`` gained since it was first made (a store from before issue 34).
_ADDED_VERSION_COLUMNS = ("public_reason", "manifest")
#: Refused connections the store keeps (the newest); older ones are deleted as new ones come.
REFUSALS_KEPT = 200


class ArenaError(RuntimeError):
    """A request the arena cannot carry out; the message says what to do instead.

    Each kind carries the HTTP status that answers it on the web page (web/access.py's
    ``arena_error`` is the one place that maps it): by default the request conflicts with the
    arena's state (409: a name taken, an action that does not apply now)."""

    http_status = 409


class NotFound(ArenaError):
    """What the request names does not exist (no such player, no such version)."""

    http_status = 404


class TooLarge(ArenaError):
    """The request's body is over its cap."""

    http_status = 413


@dataclass(frozen=True)
class Player:
    """A registered player (its token is never stored, only its hash)."""

    name: str
    added_at: str
    revoked_at: str | None

    @property
    def is_active(self) -> bool:
        """False once revoked: its bot can no longer connect."""
        return self.revoked_at is None


@dataclass(frozen=True)
class StoredGame:
    """A finished game as the store holds it: result, the event it belongs to, when."""

    seq: int
    result: GameResult
    event: str
    pair: int
    detail: str
    finished_at: str


class ArenaStore:
    """The arena's SQLite database (one connection; the server's loop is its only user)."""

    def __init__(self, folder: Path) -> None:
        private_folder(folder)
        self.folder = folder
        self.path = folder / DB_NAME
        private_database(self.path)
        self.db = self._connect()
        self.db.executescript(_SCHEMA)
        add_missing_columns(self.db, "games")
        present = {row[1] for row in self.db.execute("PRAGMA table_info(versions)")}
        for column in _ADDED_VERSION_COLUMNS:
            if column not in present:
                self.db.execute(
                    f"ALTER TABLE versions ADD COLUMN {column} TEXT NOT NULL DEFAULT ''"
                )
        #: ``commit_game`` writes from this one thread, on its own connection: the commit's
        #: fsync then never stalls the event loop (and the pages) it would otherwise block.
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="arena-store")
        self._writer_db = threading.local()
        self._refusals_waiting = 0

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None, timeout=10.0)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
        return db

    def close(self) -> None:
        """Close the database (after any commit in progress)."""
        self._writer.submit(self._close_writer).result()
        self._writer.shutdown()
        self.db.close()

    def _close_writer(self) -> None:
        db = getattr(self._writer_db, "db", None)
        if db is not None:
            db.close()

    # -- meta -----------------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        """A stored setting (the arena's seed, the organizer token's hash), or None."""
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Store a setting."""
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def secret(self, key: str) -> str:
        """The secret under ``key``, drawn from ``secrets`` on first use (as ``run``'s store
        draws its deal secret)."""
        return stored_secret(self.db, key)

    # -- players --------------------------------------------------------------------------
    def add_player(self, name: str, token_hash: str, *, replace: bool = False) -> None:
        """Register ``name`` with ``token_hash``; a revoked name may be added again.

        ``replace`` sets a new hash for an active player too (a tokens file that changed).
        """
        row = self.db.execute("SELECT revoked_at FROM players WHERE name = ?", (name,)).fetchone()
        if row is not None and row[0] is None and not replace:
            raise ArenaError(
                f"player {name!r} already exists: revoke it first to give it a new token"
            )
        self.db.execute(
            "INSERT INTO players (name, token_hash) VALUES (?, ?) ON CONFLICT (name) DO UPDATE"
            " SET token_hash = excluded.token_hash, revoked_at = NULL,"
            " added_at = excluded.added_at",
            (name, token_hash),
        )

    def revoke_player(self, name: str) -> None:
        """Revoke ``name``: its token stops working; its games stay on the ladder."""
        changed = self.db.execute(
            "UPDATE players SET revoked_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')"
            " WHERE name = ? AND revoked_at IS NULL",
            (name,),
        ).rowcount
        if not changed:
            raise NotFound(f"no active player {name!r}: see `tacocat-arena players list`")

    def players(self) -> list[Player]:
        """Every player ever registered, by name."""
        rows = self.db.execute("SELECT name, added_at, revoked_at FROM players ORDER BY name")
        return [Player(*row) for row in rows]

    def active_hashes(self) -> dict[str, str]:
        """Every active player's token hash, by name (a re-added player's is its new one)."""
        rows = self.db.execute("SELECT name, token_hash FROM players WHERE revoked_at IS NULL")
        return {str(name): str(token_hash) for name, token_hash in rows}

    def revoked_hash(self, name: str) -> str | None:
        """The token hash ``name`` had when it was revoked (None if it is not revoked)."""
        row = self.db.execute(
            "SELECT token_hash FROM players WHERE name = ? AND revoked_at IS NOT NULL", (name,)
        ).fetchone()
        return None if row is None else str(row[0])

    def data_version(self) -> int:
        """Changes when another connection (``tacocat-arena players`` in another process)
        commits to the database: a cheap way to notice a revocation at once."""
        return int(self.db.execute("PRAGMA data_version").fetchone()[0])

    def player_with_hash(self, token_hash: str) -> str | None:
        """The active player whose token hashes to ``token_hash``, or None."""
        row = self.db.execute(
            "SELECT name FROM players WHERE token_hash = ? AND revoked_at IS NULL", (token_hash,)
        ).fetchone()
        return None if row is None else str(row[0])

    def token_hash(self, name: str) -> str | None:
        """The token hash of an active player, or None."""
        row = self.db.execute(
            "SELECT token_hash FROM players WHERE name = ? AND revoked_at IS NULL", (name,)
        ).fetchone()
        return None if row is None else str(row[0])

    # -- games ----------------------------------------------------------------------------
    # -- refused connections -----------------------------------------------------------------
    def note_refusal(self, at: float, name: str, peer: str, reason: str) -> None:
        """Keep a refused connection (the newest ``REFUSALS_KEPT``), written by the writer
        thread without waiting: a flood of refusals never stalls the loop on the disk, and
        past ``REFUSALS_KEPT`` writes waiting the newest are dropped (memory stays bounded)."""
        if self._refusals_waiting >= REFUSALS_KEPT:
            return
        self._refusals_waiting += 1
        try:
            self._writer.submit(self._refusal_in_writer, at, name, peer, reason)
        except RuntimeError:  # the store is closing: the pages' memory still has it
            self._refusals_waiting -= 1

    def _refusal_in_writer(self, at: float, name: str, peer: str, reason: str) -> None:
        self._refusals_waiting -= 1
        db = getattr(self._writer_db, "db", None)
        if db is None:
            db = self._writer_db.db = self._connect()
        db.execute(
            "INSERT INTO refusals (at, name, peer, reason) VALUES (?, ?, ?, ?)",
            (at, name[:200], peer[:200], reason[:1000]),
        )
        db.execute(
            "DELETE FROM refusals WHERE seq <= (SELECT MAX(seq) FROM refusals) - ?",
            (REFUSALS_KEPT,),
        )

    def refusals(self) -> list[tuple[float, str, str, str]]:
        """The refused connections kept, oldest first: ``(at, name, peer, reason)``."""
        rows = self.db.execute("SELECT at, name, peer, reason FROM refusals ORDER BY seq")
        return [(float(at), str(n), str(p), str(r)) for at, n, p, r in rows]

    async def commit_game(
        self, result: GameResult, detail: str, record: dict[str, Any], *, event: str, pair: int
    ) -> StoredGame:
        """``save_game`` in the store's writer thread: durable once it returns, and the loop
        serves other work while the commit waits for the disk."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._writer, self._save_in_writer, result, detail, record, event, pair
        )

    def _save_in_writer(
        self, result: GameResult, detail: str, record: dict[str, Any], event: str, pair: int
    ) -> StoredGame:
        db = getattr(self._writer_db, "db", None)
        if db is None:
            db = self._writer_db.db = self._connect()
        return self.save_game(result, detail, record, event=event, pair=pair, db=db)

    def save_game(
        self,
        result: GameResult,
        detail: str,
        record: dict[str, Any],
        *,
        event: str,
        pair: int,
        db: sqlite3.Connection | None = None,
    ) -> StoredGame:
        """Commit one finished game (durable on return) and return it as stored."""
        cursor = (db or self.db).execute(
            f"INSERT INTO games ({RESULT_COLUMNS}, event, pair, detail, record)"
            f" VALUES ({', '.join('?' * (len(RESULT_COLUMNS.split(',')) + 4))})"
            " RETURNING seq, finished_at",
            (
                *result_values(result),
                event,
                pair,
                detail,
                json.dumps(record, separators=(",", ":")),
            ),
        )
        seq, finished_at = cursor.fetchone()
        return StoredGame(seq, result, event, pair, detail, finished_at)

    def games(
        self,
        *,
        bot: str | None = None,
        event: str | None = None,
        limit: int | None = None,
        exclude: Collection[str] = (),
    ) -> list[StoredGame]:
        """Finished games, newest first (all of them unless ``limit``), but those ``exclude``
        names (games held back until their twin ends)."""
        where, args = _filters(bot, event, exclude)
        query = f"SELECT {_COLUMNS} FROM games{where} ORDER BY seq DESC"
        if limit is not None:
            query += " LIMIT ?"
            args.append(limit)
        return [_stored(row) for row in self.db.execute(query, args)]

    def results(self, *, event: str | None = None) -> list[GameResult]:
        """Every finished game's result, oldest first."""
        where, args = _filters(None, event, ())
        query = f"SELECT {_COLUMNS} FROM games{where} ORDER BY seq"
        return [_stored(row).result for row in self.db.execute(query, args)]

    def game(self, game_id: str) -> tuple[StoredGame, dict[str, Any]] | None:
        """One finished game and its full record, or None."""
        row = self.db.execute(
            f"SELECT {_COLUMNS}, record FROM games WHERE game_id = ?", (game_id,)
        ).fetchone()
        if row is None:
            return None
        return _stored(row), json.loads(row[-1])

    def last_pair(self, event: str) -> int:
        """The highest pair number stored for ``event`` (-1 if none)."""
        row = self.db.execute("SELECT MAX(pair) FROM games WHERE event = ?", (event,)).fetchone()
        return -1 if row[0] is None else int(row[0])

    def count(self) -> int:
        """Number of finished games."""
        return int(self.db.execute("SELECT COUNT(*) FROM games").fetchone()[0])


_COLUMNS = f"{RESULT_COLUMNS}, seq, event, pair, detail, finished_at"


def read_results(path: Path) -> list[GameResult]:
    """Every stored game's result, oldest first, on a connection of its own (for a worker
    thread: the store's connections belong to the server's loop and its writer)."""
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        rows = db.execute(f"SELECT {RESULT_COLUMNS} FROM games ORDER BY seq")
        return [result_from_row(row) for row in rows]
    finally:
        db.close()


def _filters(bot: str | None, event: str | None, exclude: Collection[str]) -> tuple[str, list[Any]]:
    clauses, args = [], []
    if bot is not None:
        clauses.append("(seat0 = ? OR seat1 = ?)")
        args += [bot, bot]
    if event is not None:
        clauses.append("event = ?")
        args.append(event)
    if exclude:
        clauses.append(f"game_id NOT IN ({', '.join('?' * len(exclude))})")
        args += list(exclude)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), args


_RESULT_WIDTH = len(RESULT_COLUMNS.split(","))


def _stored(row: tuple[Any, ...]) -> StoredGame:
    seq, event, pair, detail, finished_at = row[_RESULT_WIDTH : _RESULT_WIDTH + 5]
    return StoredGame(seq, result_from_row(row), event, pair, detail, finished_at)
