"""Submitted bots: each upload is its player's next version, kept for good.

A version's archive is stored **content-addressed**: ``packages/SHA256`` in the arena's folder,
written once (to a temporary name, then linked into place) and never overwritten; the same
bytes uploaded twice share one file.  Its package is unpacked into the version's own folder,
``versions/PLAYER/vN``, which is all its processes see of the disk.  ``arena.sqlite`` holds a
row per version: hash, size, time, status and why (``reason``), and the gate's log (build
output and check results).

A version's life (``Status``): ``checking`` while the gate builds and checks it; then
``active`` (it plays on the ladder, as ``PLAYER@vN``) or ``rejected`` (it never plays).  A
player has at most one active version: a new one passing the gate **retires** the previous
one, which keeps its games and rating history.  ``suspended`` is a version taken off the
ladder for its health (its own crashes or forfeits, ``HEALTH_STREAK`` in a row).

Only the arena process writes these rows (the loop, synchronously between two awaits, so two
uploads of one player cannot take the same number).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tacocat_arena.arena.players import hash_token
from tacocat_arena.arena.store import ArenaError, ArenaStore
from tacocat_arena.launch.package import (
    DEFAULT_CAPS,
    BotPackage,
    PackageCaps,
    PackageError,
    load_package,
    package_root,
    unpack,
)

#: Folders of the arena's folder: the archives by hash, and the unpacked versions.
PACKAGES_DIR = "packages"
VERSIONS_DIR = "versions"
UPLOADS_DIR = "uploads"  # bodies being received (removed at start-up: none is half a version)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS versions (
    player TEXT NOT NULL,
    version INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    submitted_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    status TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    log TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (player, version)
);
"""
_IDENTITY = re.compile(r"(?P<player>.+)@v(?P<version>[0-9]+)")


class Status(enum.StrEnum):
    """Where a version is in its life (module docstring)."""

    CHECKING = "checking"
    ACTIVE = "active"
    REJECTED = "rejected"
    RETIRED = "retired"
    SUSPENDED = "suspended"


#: Statuses a version does not leave by itself (``submit --wait`` stops at them).
SETTLED = frozenset({Status.ACTIVE, Status.REJECTED, Status.RETIRED, Status.SUSPENDED})


@dataclass(frozen=True)
class Version:
    """One stored version of a player's bot."""

    player: str
    version: int
    sha256: str
    size: int
    submitted_at: str
    status: Status
    reason: str = ""
    log: str = ""

    @property
    def identity(self) -> str:
        """The name it plays under on the ladder (``alice@v2``: ``@`` is in no player's
        name, so no connected bot can take it)."""
        return identity(self.player, self.version)


def identity(player: str, version: int) -> str:
    """The ladder name of ``player``'s version ``version``."""
    return f"{player}@v{version}"


def parse_identity(name: str) -> tuple[str, int] | None:
    """``(player, version)`` of a hosted version's ladder name, None for a connected bot's."""
    match = _IDENTITY.fullmatch(name)
    return None if match is None else (match["player"], int(match["version"]))


class Submissions:
    """The versions of an arena: their rows in ``store`` and their files in its folder."""

    def __init__(self, store: ArenaStore, caps: PackageCaps = DEFAULT_CAPS) -> None:
        self.store = store
        self.caps = caps
        self.folder = store.folder
        store.db.executescript(_SCHEMA)
        shutil.rmtree(self.folder / UPLOADS_DIR, ignore_errors=True)

    # -- reading ----------------------------------------------------------------------------
    def versions(self, player: str | None = None) -> list[Version]:
        """Every version (of ``player``), oldest first."""
        query = f"SELECT {_COLUMNS} FROM versions"
        args: tuple[Any, ...] = ()
        if player is not None:
            query += " WHERE player = ?"
            args = (player,)
        rows = self.store.db.execute(query + " ORDER BY submitted_at, player, version", args)
        return [_version(row) for row in rows]

    def get(self, player: str, version: int) -> Version | None:
        """One version, or None."""
        row = self.store.db.execute(
            f"SELECT {_COLUMNS} FROM versions WHERE player = ? AND version = ?", (player, version)
        ).fetchone()
        return None if row is None else _version(row)

    def with_status(self, *statuses: Status) -> list[Version]:
        """The versions in any of ``statuses``, oldest first."""
        marks = ", ".join("?" * len(statuses))
        rows = self.store.db.execute(
            f"SELECT {_COLUMNS} FROM versions WHERE status IN ({marks})"
            " ORDER BY submitted_at, player, version",
            tuple(str(s) for s in statuses),
        )
        return [_version(row) for row in rows]

    def folder_of(self, version: Version) -> Path:
        """Where the version's archive is unpacked."""
        return self.folder / VERSIONS_DIR / version.player / f"v{version.version}"

    def package(self, version: Version) -> BotPackage:
        """The version's package (its ``bot.toml`` read again from its folder)."""
        return load_package(package_root(self.folder_of(version)))

    def archive_path(self, sha256: str) -> Path:
        """Where the archive with this hash is kept."""
        return self.folder / PACKAGES_DIR / sha256

    # -- writing ----------------------------------------------------------------------------
    def receiving(self) -> Path:
        """A fresh temporary file for an upload's body (removed if the upload fails)."""
        folder = self.folder / UPLOADS_DIR
        folder.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=folder, prefix="body-")
        os.close(handle)
        return Path(name)

    async def add(self, player: str, body: Path) -> Version:
        """Make a received body ``player``'s next version: store the archive under its hash,
        unpack it into the version's folder (``checking``), or ``rejected`` with the reason
        if it is no package.  The body file is consumed.  The file work runs in a thread;
        the rows are written here, on the loop, between awaits."""
        sha256, size = await asyncio.to_thread(self._keep_archive, body)
        row = self.store.db.execute(
            "SELECT COALESCE(MAX(version), 0) + 1 FROM versions WHERE player = ?", (player,)
        ).fetchone()
        number = int(row[0])
        self.store.db.execute(
            "INSERT INTO versions (player, version, sha256, size, status) VALUES (?, ?, ?, ?, ?)",
            (player, number, sha256, size, str(Status.CHECKING)),
        )
        version = self.get(player, number)
        assert version is not None
        return await self.unpack(version)

    async def unpack(self, version: Version) -> Version:
        """(Re-)unpack a version's stored archive into its folder (a fresh one: a stop may
        have left it half-written): the version as it is, or rejected if it is no package."""
        problem = await asyncio.to_thread(self._unpack, version)
        if problem:
            return self.settle(version, Status.REJECTED, f"not a valid package: {problem}")
        return version

    def _keep_archive(self, body: Path) -> tuple[str, int]:
        sha256, size = _digest(body)
        target = self.archive_path(sha256)
        target.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.link(body, target)  # never overwrites: the same bytes are already there
        body.unlink()
        return sha256, size

    def _unpack(self, version: Version) -> str:
        """Unpack the version's archive into its folder; "" or why it is refused."""
        folder = self.folder_of(version)
        shutil.rmtree(folder, ignore_errors=True)  # what a stop mid-unpack (or mid-build) left
        try:
            unpack(self.archive_path(version.sha256), folder, self.caps)
            load_package(package_root(folder))
        except PackageError as error:
            shutil.rmtree(folder, ignore_errors=True)
            return str(error)
        return ""

    def settle(self, version: Version, status: Status, reason: str = "", log: str = "") -> Version:
        """Set a version's status (and why, and the gate's log when given)."""
        if log:
            self.store.db.execute(
                "UPDATE versions SET status = ?, reason = ?, log = ? WHERE player = ? AND"
                " version = ?",
                (str(status), reason, log, version.player, version.version),
            )
        else:
            self.store.db.execute(
                "UPDATE versions SET status = ?, reason = ? WHERE player = ? AND version = ?",
                (str(status), reason, version.player, version.version),
            )
        found = self.get(version.player, version.version)
        assert found is not None
        return found

    def activate(self, version: Version, log: str) -> Version:
        """``version`` passed the gate: active, and the player's previous active (or
        suspended) version retired."""
        for old in self.versions(version.player):
            if old.version != version.version and old.status in (Status.ACTIVE,):
                self.settle(old, Status.RETIRED, f"replaced by v{version.version}")
        return self.settle(version, Status.ACTIVE, "passed the gate", log)


def player_for_token(store: ArenaStore, token: str) -> str | None:
    """The active player whose token this is, or None.  Tokens are 192 random bits, so
    looking one up by its SHA-256 leaks nothing worth a constant-time scan."""
    row = store.db.execute(
        "SELECT name FROM players WHERE token_hash = ? AND revoked_at IS NULL",
        (hash_token(token),),
    ).fetchone()
    return None if row is None else str(row[0])


async def receive_body(chunks: AsyncIterator[bytes], into: Path, cap: int) -> int:
    """Write an upload's body to ``into`` as it arrives; ArenaError (and ``into`` removed) once
    it passes ``cap`` bytes or if the stream breaks off (an upload cut mid-way)."""
    size = 0
    try:
        with open(into, "wb") as out:
            async for chunk in chunks:
                size += len(chunk)
                if size > cap:
                    raise ArenaError(
                        f"the upload is over the cap of {cap} bytes (package caps: archive_bytes)"
                    )
                out.write(chunk)
    except BaseException:
        into.unlink(missing_ok=True)
        raise
    return size


def _digest(path: Path) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 16):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


_COLUMNS = "player, version, sha256, size, submitted_at, status, reason, log"


def _version(row: tuple[Any, ...]) -> Version:
    player, version, sha256, size, submitted_at, status, reason, log = row
    return Version(player, version, sha256, size, submitted_at, Status(status), reason, log)


def version_summary(version: Version, games: int) -> dict[str, Any]:
    """A version as ``GET /api/submissions`` lists it (and the pages show it)."""
    return {
        "player": version.player,
        "version": version.version,
        "bot": version.identity,
        "sha256": version.sha256,
        "size": version.size,
        "submitted_at": version.submitted_at,
        "status": str(version.status),
        "games": games,
        "reason": version.reason,
    }
