"""Submitted bots: each upload is its player's next version, kept for good (a rejected one
keeps its row and reason; its archive and folder are removed).

A version's archive is stored **content-addressed**: ``packages/SHA256`` in the arena's folder,
written once (to a temporary name, then linked into place) and never overwritten; the same
bytes uploaded twice share one file.  Its package is unpacked into the version's own folder,
``versions/PLAYER/vN``, which is all its processes see of the disk.  ``arena.sqlite`` holds a
row per version: hash, size, time, status and why (``reason``, and ``public_reason``, what
anyone may read of it), and the gate's log (build output and check results).

An upload is unpacked (in a thread) into a folder of ``uploads/`` first; only a whole package
becomes a version: its folder is renamed into place and its row written in one step on the
loop, ``checking`` -- or the row is written ``rejected`` with the reason, and the archive
removed (unless a kept version shares it).  So no version is ever half-unpacked, and none is
``checking`` without a gate to come (``arena.gates`` queues every one, at start-up too).

What a player may read (the public list, pages) is the status and ``public_reason`` (the first
failing step's name); the full reason and the gate's log only its owner and the organizer
read, and every stored text has the arena's absolute folders replaced (``redact``).

Uploads are limited per player and hour (``UploadQuota``: count and bytes).

A version's life (``Status``): ``checking`` while the gate builds and checks it; then
``active`` (it plays on the ladder, as ``PLAYER@vN``) or ``rejected`` (it never plays).  A
player has at most one active version: a new one passing the gate **retires** the previous
one, which keeps its games and rating history.  ``suspended`` is a version taken off the
ladder for its health (its own crashes or forfeits, ``HostedSettings.health_streak`` in a
row) or by the
organizer; ``probation`` a version that passed the gate while its player has an active one,
playing its probation games beside it; ``revoked`` a version whose player was revoked.  The
moves between these (probation, suspensions, roll-backs) are ``arena/moderation.py``'s.

Only the arena process writes these rows (the loop, synchronously between two awaits, so two
uploads of one player cannot take the same number).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import enum
import hashlib
import json
import os
import re
import secrets
import shutil
import sys
import tempfile
import threading
import tomllib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tacocat_arena.arena.store import ArenaStore, TooLarge
from tacocat_arena.launch.package import (
    DEFAULT_CAPS,
    MANIFEST,
    MANIFEST_BYTES,
    BotPackage,
    PackageCaps,
    PackageError,
    load_package,
    package_root,
    parse_manifest,
    unpack,
)

#: Folders of the arena's folder: the archives by hash, and the unpacked versions.
PACKAGES_DIR = "packages"
VERSIONS_DIR = "versions"
UPLOADS_DIR = "uploads"  # bodies being received (removed at start-up: none is half a version)

#: A version number: 1 to 999,999,999 (a 400-digit one in a URL or a name is no version).
_NUMBER = "[1-9][0-9]{0,8}"
_IDENTITY = re.compile(rf"(?P<player>.+)@v(?P<version>{_NUMBER})")
_VERSION_IN_URL = re.compile(rf"v?(?P<version>{_NUMBER})")
#: What anyone reads of a version rejected before its gate: its upload was no package.
NOT_A_PACKAGE = "not a valid package"
_MiB = 2**20


class Status(enum.StrEnum):
    """Where a version is in its life (module docstring)."""

    CHECKING = "checking"
    ACTIVE = "active"
    REJECTED = "rejected"
    RETIRED = "retired"
    SUSPENDED = "suspended"
    PROBATION = "probation"
    REVOKED = "revoked"


#: Statuses a version does not leave by itself (``submit --wait`` stops at them).
SETTLED = frozenset(
    {Status.ACTIVE, Status.REJECTED, Status.RETIRED, Status.SUSPENDED, Status.PROBATION,
     Status.REVOKED}
)  # fmt: skip
#: Statuses of versions that play on the ladder.
PLAYING = frozenset({Status.ACTIVE, Status.PROBATION})


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
    #: What anyone may read of ``reason`` (a rejection: the first failing step's name).
    public_reason: str = ""

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


def parse_version_number(text: str) -> int | None:
    """A version number as a URL gives it (``2`` or ``v2``), None unless it is one (a
    400-digit number included: no version has it, so it is a 404, never a 500)."""
    match = _VERSION_IN_URL.fullmatch(text)
    return None if match is None else int(match["version"])


@dataclass(frozen=True)
class UploadQuota:
    """How much one player may upload (``serve``'s settings): rejected uploads count too,
    since their unpacking and gate cost the arena as much."""

    #: Uploads a player may make in any hour.
    uploads_per_hour: int = 20
    #: Archive bytes a player may upload in any hour.
    bytes_per_hour: int = 256 * _MiB

    def __post_init__(self) -> None:
        for name in ("uploads_per_hour", "bytes_per_hour"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"upload quota: {name} must be an integer >= 1, got {value!r}")


@dataclass(frozen=True)
class OverQuota:
    """An upload refused by the quota: why, and in how many seconds one would be taken."""

    message: str
    retry_after_s: int


def redact(text: str, replacements: list[tuple[str, str]]) -> str:
    """``text`` with each absolute folder of ``replacements`` (longest first) replaced by its
    stand-in: what a player reads names no folder of the arena's machine."""
    for folder, stand_in in sorted(replacements, key=lambda pair: -len(pair[0])):
        if folder and folder != "/":
            text = text.replace(folder, stand_in)
    return text


def _code_folders() -> list[tuple[str, str]]:
    """The arena's own install (its Python, its code) and the temporary folder, as stand-ins."""
    import tacocat_arena

    found = [(tempfile.gettempdir(), "<tmp>")]
    code = Path(tacocat_arena.__file__).resolve().parent.parent
    found.append((str(code), "<arena code>"))
    if (code.parent / "example_bots").is_dir():  # a checkout: the SDK and example bots too
        found.append((str(code.parent), "<arena code>"))
    for prefix in {sys.prefix, sys.exec_prefix}:
        if prefix not in ("/usr", "/usr/local", "/"):
            found.append((prefix, "<arena python>"))
    return found


class Submissions:
    """The versions of an arena: their rows in ``store`` and their files in its folder."""

    def __init__(
        self,
        store: ArenaStore,
        caps: PackageCaps = DEFAULT_CAPS,
        quota: UploadQuota = UploadQuota(),
        *,
        server: bool = True,
    ) -> None:
        """``server``: this is the arena process (it clears bodies a stop left half
        received); a command beside a running arena (``submissions suspend``) passes False."""
        self.store = store
        self.caps = caps
        self.quota = quota
        self.folder = store.folder  # its ``versions`` table is the store's (``arena.store``)
        if server:
            shutil.rmtree(self.folder / UPLOADS_DIR, ignore_errors=True)
        #: Each version's package as read when it was unpacked (``bot.toml`` is parsed once,
        #: off the loop; a build that rewrites it changes nothing).
        self._packages: dict[tuple[str, int], BotPackage] = {}
        #: Players whose upload is being received or unpacked (``web.uploads`` takes one at
        #: a time from each: a player's parallel uploads would all pass the quota at once).
        self.busy: set[str] = set()
        self._stand_ins = [*_code_folders(), (str(self.folder.resolve()), "<arena>")]
        if str(self.folder) != str(self.folder.resolve()):
            self._stand_ins.append((str(self.folder), "<arena>"))

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
        """One version, or None (a number out of SQLite's range included)."""
        if not 0 < version < 2**31:
            return None
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
        """The version's package as it was read when unpacked (cached: never parsed again on
        the loop); a version unpacked by an earlier run is parsed once from the ``bot.toml``
        its row kept (its folder's copy may have been rewritten by its build), or from its
        folder for a row from before that."""
        key = (version.player, version.version)
        found = self._packages.get(key)
        if found is None:
            row = self.store.db.execute(
                "SELECT manifest FROM versions WHERE player = ? AND version = ?", key
            ).fetchone()
            folder = self.folder_of(version)
            if row and row[0]:  # bot.toml as it was unpacked: a build may have rewritten it
                kept = json.loads(row[0])
                found = parse_manifest(tomllib.loads(kept["toml"]), folder.resolve() / kept["root"])
            else:
                found = load_package(package_root(folder))
            self._packages[key] = found
        return found

    async def load_packages(self, versions: list[Version]) -> None:
        """Read the packages of ``versions`` (an earlier run's active ones) in a thread, so
        ``package`` never parses a ``bot.toml`` on the loop."""
        for version in versions:
            if (version.player, version.version) not in self._packages:
                with contextlib.suppress(PackageError, OSError):
                    await asyncio.to_thread(self.package, version)

    def has_package(self, version: Version) -> bool:
        """Whether this run unpacked (or read) the version's package already."""
        return (version.player, version.version) in self._packages

    def redact(self, version: Version | None, text: str) -> str:
        """``text`` with the version's folder as ``.`` and the arena's folders as stand-ins
        (module ``redact``)."""
        pairs = list(self._stand_ins)
        if version is not None:
            folder = self.folder_of(version)
            pairs += [(str(folder.resolve()), "."), (str(folder), ".")]
        return redact(text, pairs)

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

    def over_quota(self, player: str, incoming: int = 0) -> OverQuota | None:
        """Why ``player`` may not upload ``incoming`` more bytes now, or None: its uploads of
        the last hour against ``UploadQuota`` (rejected ones included)."""
        count, total, oldest = self.store.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(size), 0),"
            " CAST(strftime('%s', MIN(submitted_at)) AS INTEGER)"
            " - CAST(strftime('%s', 'now') AS INTEGER) + 3600"
            " FROM versions WHERE player = ?"
            " AND submitted_at > strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-3600 seconds')",
            (player,),
        ).fetchone()
        wait = max(1, int(oldest or 1))
        quota = self.quota
        if count >= quota.uploads_per_hour:
            return OverQuota(
                f"{count} uploads in the last hour: the quota is {quota.uploads_per_hour} an "
                f"hour (upload quota: uploads_per_hour); try again in {wait} s",
                wait,
            )
        if total + incoming > quota.bytes_per_hour:
            return OverQuota(
                f"{total} bytes uploaded in the last hour, and {incoming} more would pass the "
                f"quota of {quota.bytes_per_hour} (upload quota: bytes_per_hour); try again in "
                f"{wait} s",
                wait,
            )
        return None

    async def add(self, player: str, body: Path) -> Version:
        """Make a received body ``player``'s next version: store the archive under its hash,
        unpack it (in a thread) into a folder of its own, then -- on the loop, with no await
        between -- take the next number, move the folder into place and write the row
        ``checking``; or write it ``rejected`` with the reason if it is no package (and drop
        the archive).  The body file is consumed."""
        sha256, size = await asyncio.to_thread(self._keep_archive, body)
        staging = self.folder / UPLOADS_DIR / f"unpack-{secrets.token_hex(8)}"
        package, text, problem = await asyncio.to_thread(self._unpack_into, sha256, staging)
        # From here to the INSERT nothing awaits: the number is this upload's alone.
        row = self.store.db.execute(
            "SELECT COALESCE(MAX(version), 0) + 1 FROM versions WHERE player = ?", (player,)
        ).fetchone()
        number = int(row[0])
        status, reason, public, manifest = Status.CHECKING, "", "", ""
        target = self.folder / VERSIONS_DIR / player / f"v{number}"
        if package is None:
            status, public = Status.REJECTED, NOT_A_PACKAGE
            reason = f"{NOT_A_PACKAGE}: {self.redact(None, problem)}"
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            if os.path.lexists(target):  # a folder a kill left between rename and row
                self._trash(target)
            os.rename(staging, target)
            package, manifest = self._moved(package, text, staging, target)
            self._packages[(player, number)] = package
        self.store.db.execute(
            "INSERT INTO versions (player, version, sha256, size, status, reason, public_reason,"
            " manifest) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (player, number, sha256, size, str(status), reason, public, manifest),
        )
        version = self.get(player, number)
        assert version is not None
        if status is Status.REJECTED:
            self._drop_archive(sha256)
        return version

    async def unpack(self, version: Version) -> Version:
        """Unpack a version's stored archive afresh (a stop may have left its folder
        half-built) and put it in place of its folder: the version as it is, or rejected if
        it is no package (or its archive is gone)."""
        staging = self.folder / UPLOADS_DIR / f"unpack-{secrets.token_hex(8)}"
        (self.folder / UPLOADS_DIR).mkdir(parents=True, exist_ok=True)
        package, text, problem = await asyncio.to_thread(self._unpack_into, version.sha256, staging)
        if package is None:
            reason = f"{NOT_A_PACKAGE}: {problem}"
            return self.settle(version, Status.REJECTED, reason, public=NOT_A_PACKAGE)
        target = self.folder_of(version)
        target.parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(target):
            self._trash(target)
        os.rename(staging, target)
        package, manifest = self._moved(package, text, staging, target)
        self._packages[(version.player, version.version)] = package
        self.store.db.execute(
            "UPDATE versions SET manifest = ? WHERE player = ? AND version = ?",
            (manifest, version.player, version.version),
        )
        return version

    @staticmethod
    def _moved(
        package: BotPackage, text: str, staging: Path, target: Path
    ) -> tuple[BotPackage, str]:
        """The package unpacked in ``staging`` as it is once moved to ``target``, and what the
        row keeps of it (its ``bot.toml`` and where it is in the folder, as JSON)."""
        inside = package.root.relative_to(staging.resolve())
        manifest = json.dumps({"root": inside.as_posix(), "toml": text})
        return dataclasses.replace(package, root=target.resolve() / inside), manifest

    def _keep_archive(self, body: Path) -> tuple[str, int]:
        sha256, size = _digest(body)
        target = self.archive_path(sha256)
        target.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.link(body, target)  # never overwrites: the same bytes are already there
        body.unlink()
        return sha256, size

    def _unpack_into(self, sha256: str, folder: Path) -> tuple[BotPackage | None, str, str]:
        """Unpack the archive ``sha256`` into the new folder ``folder``: its package and its
        ``bot.toml``'s text, or None and why it is refused (``folder`` then removed).  Any
        error at all is a refusal: a stranger's archive must never leave a version without a
        status."""
        try:
            unpack(self.archive_path(sha256), folder, self.caps)
            package = load_package(package_root(folder))
            text = (package.root / MANIFEST).read_bytes()[: MANIFEST_BYTES + 1].decode()
            return package, text, ""
        except PackageError as error:
            problem = str(error)
        except FileNotFoundError:
            problem = "its archive is no longer stored"
        except Exception as error:  # a bug of ours must not leave it checking for ever
            problem = f"it could not be unpacked ({type(error).__name__}: {error})"
        shutil.rmtree(folder, ignore_errors=True)
        return None, "", problem.replace(str(folder.resolve()), ".").replace(str(folder), ".")

    def _trash(self, folder: Path) -> None:
        """Move ``folder`` out of the way at once (a rename) and remove it in a thread."""
        trash = self.folder / UPLOADS_DIR / f"trash-{secrets.token_hex(8)}"
        trash.parent.mkdir(parents=True, exist_ok=True)
        os.rename(folder, trash)
        threading.Thread(target=shutil.rmtree, args=(trash, True), daemon=True).start()

    def _drop_archive(self, sha256: str) -> None:
        """Remove archive ``sha256`` unless a version that is not rejected shares it."""
        kept = self.store.db.execute(
            "SELECT 1 FROM versions WHERE sha256 = ? AND status != ? LIMIT 1",
            (sha256, str(Status.REJECTED)),
        ).fetchone()
        if kept is None:
            self.archive_path(sha256).unlink(missing_ok=True)

    def settle(
        self,
        version: Version,
        status: Status,
        reason: str = "",
        log: str = "",
        public: str | None = None,
    ) -> Version:
        """Set a version's status, why (``reason``; ``public``: what anyone may read of it,
        the reason itself unless given) and the gate's log when given, all redacted.  A
        rejected version's folder and archive are removed once its reason is recorded."""
        reason = self.redact(version, reason)
        shown = reason if public is None else self.redact(version, public)
        if log:
            self.store.db.execute(
                "UPDATE versions SET status = ?, reason = ?, public_reason = ?, log = ?"
                " WHERE player = ? AND version = ?",
                (str(status), reason, shown, self.redact(version, log), version.player,
                 version.version),
            )  # fmt: skip
        else:
            self.store.db.execute(
                "UPDATE versions SET status = ?, reason = ?, public_reason = ?"
                " WHERE player = ? AND version = ?",
                (str(status), reason, shown, version.player, version.version),
            )
        found = self.get(version.player, version.version)
        assert found is not None
        if status is Status.REJECTED:
            self._packages.pop((version.player, version.version), None)
            folder = self.folder_of(version)
            if os.path.lexists(folder):
                self._trash(folder)
            self._drop_archive(version.sha256)
        return found

    def activate(self, version: Version, log: str) -> Version:
        """``version`` passed the gate: active, and the player's previous active version
        retired (a suspended one stays suspended)."""
        for old in self.versions(version.player):
            if old.version != version.version and old.status is Status.ACTIVE:
                self.settle(old, Status.RETIRED, f"replaced by v{version.version}")
        return self.settle(version, Status.ACTIVE, "passed the gate", log)


async def receive_body(chunks: AsyncIterator[bytes], into: Path, cap: int) -> int:
    """Write an upload's body to ``into`` as it arrives; TooLarge (and ``into`` removed) once
    it passes ``cap`` bytes or if the stream breaks off (an upload cut mid-way)."""
    size = 0
    try:
        with open(into, "wb") as out:
            async for chunk in chunks:
                size += len(chunk)
                if size > cap:
                    raise TooLarge(
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


_COLUMNS = "player, version, sha256, size, submitted_at, status, reason, log, public_reason"


def _version(row: tuple[Any, ...]) -> Version:
    player, version, sha256, size, submitted_at, status, reason, log, public = row
    status = Status(status)
    if not public:  # a row from before public_reason: only a rejection's detail is private
        public = "rejected" if status is Status.REJECTED else reason
    return Version(player, version, sha256, size, submitted_at, status, reason, log, public)


def version_summary(version: Version, games: int, private: bool = False) -> dict[str, Any]:
    """A version as ``GET /api/submissions`` lists it (and the pages show it): ``reason`` is
    the public one unless ``private`` (its owner, the organizer), then the full one."""
    return {
        "player": version.player,
        "version": version.version,
        "bot": version.identity,
        "sha256": version.sha256,
        "size": version.size,
        "submitted_at": version.submitted_at,
        "status": str(version.status),
        "games": games,
        "reason": version.reason if private else version.public_reason,
    }
