"""A bot package: a folder (or a ``.zip`` / ``.tar.gz`` of one) with ``bot.toml`` at its root.

``bot.toml`` says how to run the bot::

    command = "python bot.py"        # required: run from the package's folder
    build = "make"                   # optional: run once, sandboxed, network off, time-limited
    [env]                            # optional: extra environment variables
    BOT_LEVEL = "3"

Any other key is an error naming it, so a typo (``comand``) fails at once, not as a bot that
never starts.  A package brings what it needs (a Node package its ``node_modules``); the
arena's Python with the SDK is there for Python packages.

An archive comes from a stranger, so ``unpack`` trusts none of it: every entry's path must
stay inside the target folder (no absolute path, no ``..``, no backslash, nothing written
through a symlink), links must point inside the package, devices and FIFOs are refused, and
the caps (``PackageCaps``) are counted on the bytes actually written as they are written --
never from the sizes an archive's headers claim, which a zip bomb lies about.  On any refusal
the target folder is removed: nothing half-unpacked stays.

The API is small on purpose (``grade`` reuses it): ``load_package``, ``open_package``,
``unpack``, ``pack`` and the values ``BotPackage``, ``PackageCaps``, ``PackageError``.
"""

from __future__ import annotations

import gzip
import io
import lzma
import os
import re
import shlex
import shutil
import stat
import tarfile
import tomllib
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any

from tacocat_arena.launch.sandbox import env_refusal

#: The file every package has at its root.
MANIFEST = "bot.toml"
#: What ``bot.toml`` may hold.
MANIFEST_KEYS = ("command", "build", "env")
#: Folders ``pack`` leaves out (caches and version control, never needed to run a bot).
PACK_SKIP = frozenset({".git", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"})

_CHUNK = 64 * 1024
_MiB = 2**20


class PackageError(ValueError):
    """A package (or an archive of one) is refused; the message says which entry or key, and
    why, in words the uploader can act on."""


@dataclass(frozen=True)
class PackageCaps:
    """How big a package may be.  The defaults fit a Node bot with its ``node_modules`` or a
    small compiled bot with its sources, with room to spare; an organizer may change them
    (``serve``'s settings)."""

    #: Size of the archive itself (an upload's body).
    archive_bytes: int = 64 * _MiB
    #: Bytes written while unpacking, all files together.
    unpacked_bytes: int = 256 * _MiB
    #: Entries (files, folders, links) written while unpacking.
    files: int = 20_000

    def __post_init__(self) -> None:
        for name in ("archive_bytes", "unpacked_bytes", "files"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"package caps: {name} must be an integer >= 1, got {value!r}")


DEFAULT_CAPS = PackageCaps()


@dataclass(frozen=True)
class BotPackage:
    """A package as ``bot.toml`` describes it, rooted at ``root`` (an absolute folder)."""

    root: Path
    command: str
    build: str | None = None
    env: tuple[tuple[str, str], ...] = ()

    def argv(self) -> list[str]:
        """The command as an argument list (run with ``root`` as working directory)."""
        return shlex.split(self.command)

    def build_argv(self) -> list[str] | None:
        """The build command as an argument list, or None when there is nothing to build."""
        return None if self.build is None else shlex.split(self.build)


# -- bot.toml -----------------------------------------------------------------------------
def load_package(folder: Path) -> BotPackage:
    """The package in ``folder`` (read from its ``bot.toml``); PackageError if there is none
    or it is malformed."""
    root = folder.resolve()
    manifest = root / MANIFEST
    if not root.is_dir():
        raise PackageError(f"{folder}: not a folder (a package is a folder with {MANIFEST})")
    if manifest.is_symlink() or not manifest.is_file():
        raise PackageError(f"{folder}: no {MANIFEST} at the package's root")
    try:
        data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise PackageError(f"{MANIFEST}: not valid TOML: {error}") from None
    return parse_manifest(data, root)


def parse_manifest(data: dict[str, Any], root: Path) -> BotPackage:
    """A ``BotPackage`` from ``bot.toml``'s parsed contents; PackageError naming the key."""
    for key in data:
        if key not in MANIFEST_KEYS:
            raise PackageError(
                f"{MANIFEST}: unknown key {key!r} (a package has {', '.join(MANIFEST_KEYS)})"
            )
    if "command" not in data:
        raise PackageError(f'{MANIFEST}: command is required, e.g. command = "python bot.py"')
    command = _command(data, "command")
    assert command is not None
    build = _command(data, "build") if "build" in data else None
    return BotPackage(root, command, build, _env(data.get("env", {})))


def _command(data: dict[str, Any], key: str) -> str | None:
    value = data[key]
    if not isinstance(value, str) or not value.strip():
        raise PackageError(f"{MANIFEST}: {key} must be a non-empty string, got {value!r}")
    try:
        shlex.split(value)
    except ValueError as error:
        raise PackageError(f"{MANIFEST}: cannot parse {key} {value!r}: {error}") from None
    return value.strip()


def _env(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict):
        raise PackageError(f'{MANIFEST}: env must be a table of NAME = "value", got {value!r}')
    pairs = []
    for name, text in sorted(value.items()):
        # One rule for bot.toml and a config's env (launch.sandbox): names, the arena's
        # own, NUL, size, and the loader's and interpreters' variables, refused by name.
        if why := env_refusal(name, text):
            raise PackageError(f"{MANIFEST}: {why}")
        pairs.append((name, text))
    return tuple(pairs)


# -- archives -----------------------------------------------------------------------------
def open_package(path: Path, into: Path, caps: PackageCaps = DEFAULT_CAPS) -> BotPackage:
    """The package at ``path``: a folder is read where it is; an archive is unpacked into
    ``into`` (which must not exist yet) first."""
    if path.is_dir():
        return load_package(path)
    unpack(path, into, caps)
    return load_package(package_root(into))


def package_root(folder: Path) -> Path:
    """Where ``bot.toml`` is in an unpacked archive: its root, or the one folder it holds
    (an archive made by zipping the package's folder rather than its contents)."""
    if (folder / MANIFEST).exists():
        return folder
    entries = list(folder.iterdir())
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink():
        if (entries[0] / MANIFEST).exists():
            return entries[0]
    return folder


def unpack(archive: Path, into: Path, caps: PackageCaps = DEFAULT_CAPS) -> None:
    """Unpack ``archive`` (zip, or tar, gzipped or not) into the new folder ``into``,
    refusing anything unsafe (module docstring); on refusal ``into`` is removed and
    PackageError says which entry and why."""
    size = archive.stat().st_size
    if size > caps.archive_bytes:
        raise PackageError(
            f"the archive is {size} bytes, over the cap of {caps.archive_bytes} "
            "(package caps: archive_bytes)"
        )
    into.mkdir(parents=True, exist_ok=False)
    writer = _Writer(into.resolve(), caps)
    try:
        if zipfile.is_zipfile(archive):
            _unpack_zip(archive, writer)
        else:
            _unpack_tar(archive, writer)
        writer.check_links()
    except BaseException:
        shutil.rmtree(into, ignore_errors=True)
        raise


def _unpack_zip(archive: Path, writer: _Writer) -> None:
    try:
        with zipfile.ZipFile(archive) as zipped:
            for info in zipped.infolist():
                mode = (info.external_attr >> 16) & 0xFFFF
                kind = stat.S_IFMT(mode)
                if info.is_dir():
                    writer.folder(info.filename)
                elif kind == stat.S_IFLNK:
                    target = zipped.read(info)[:4096].decode("utf-8", errors="replace")
                    writer.symlink(info.filename, target)
                elif kind in (0, stat.S_IFREG):
                    with zipped.open(info) as source:
                        writer.file(info.filename, source, mode or 0o644)
                else:
                    raise PackageError(f"{info.filename!r}: {_kind_name(kind)} is not allowed")
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError) as error:
        raise PackageError(f"not a readable zip archive: {error}") from None


def _unpack_tar(archive: Path, writer: _Writer) -> None:
    try:
        with tarfile.open(archive, "r:*") as tar:
            for member in _members(tar):
                name = member.name
                if member.isdir():
                    writer.folder(name)
                elif member.issym():
                    writer.symlink(name, member.linkname)
                elif member.islnk():
                    writer.hardlink(name, member.linkname)
                elif member.isreg():
                    source = tar.extractfile(member)
                    assert source is not None
                    writer.file(name, source, member.mode)
                elif member.ischr() or member.isblk():
                    raise PackageError(f"{name!r}: a device file is not allowed")
                elif member.isfifo():
                    raise PackageError(f"{name!r}: a FIFO is not allowed")
                else:
                    raise PackageError(f"{name!r}: entry type {member.type!r} is not allowed")
    except (tarfile.TarError, EOFError, gzip.BadGzipFile, zlib.error, lzma.LZMAError) as error:
        raise PackageError(
            f"not a readable archive (a package is a .zip or .tar.gz): {error}"
        ) from None


def _members(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    """The members one at a time, as the stream is read (never the whole list first)."""
    while (member := tar.next()) is not None:
        yield member


def _kind_name(kind: int) -> str:
    if kind in (stat.S_IFCHR, stat.S_IFBLK):
        return "a device file"
    if kind == stat.S_IFIFO:
        return "a FIFO"
    if kind == stat.S_IFSOCK:
        return "a socket"
    return f"file type {oct(kind)}"


def _parts(name: str) -> list[str]:
    """The components of entry path ``name``; PackageError unless it is a plain relative
    path that stays where it is put (no absolute path, drive, ``..``, backslash or NUL)."""
    if not name or "\x00" in name or "\\" in name:
        raise PackageError(f"{name!r}: not a plain relative path")
    pure = PurePosixPath(name)
    if pure.is_absolute() or re.match(r"[A-Za-z]:", name):
        raise PackageError(f"{name!r}: an absolute path is not allowed")
    parts = [part for part in pure.parts if part != "."]
    if ".." in parts:
        raise PackageError(f"{name!r}: '..' is not allowed in a path")
    if not parts:
        raise PackageError(f"{name!r}: not a file name")
    return parts


class _Writer:
    """Writes entries under ``root``, checking each path and counting against the caps."""

    def __init__(self, root: Path, caps: PackageCaps) -> None:
        self.root = root
        self.caps = caps
        self.written = 0
        self.entries = 0
        self.links: list[Path] = []

    def _place(self, name: str) -> Path:
        """Where entry ``name`` goes; PackageError unless it stays inside ``root``, and no
        folder on the way is a symlink (nothing is ever written through one)."""
        parts = _parts(name)
        self.entries += 1
        if self.entries > self.caps.files:
            raise PackageError(
                f"the archive holds more than {self.caps.files} entries (package caps: files)"
            )
        here = self.root
        for part in parts[:-1]:
            here = here / part
            if here.is_symlink():
                raise PackageError(f"{name!r}: goes through the symlink {part!r}")
            if not here.exists():
                here.mkdir()
            elif not here.is_dir():
                raise PackageError(f"{name!r}: {part!r} is a file, not a folder")
        return here / parts[-1]

    def folder(self, name: str) -> None:
        path = self._place(name.rstrip("/"))
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            raise PackageError(f"{name!r}: a folder over another entry")
        path.mkdir(exist_ok=True)

    def file(self, name: str, source: IO[bytes], mode: int) -> None:
        path = self._place(name)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        try:
            handle = os.open(path, flags, 0o755 if mode & 0o111 else 0o644)
        except FileExistsError:
            raise PackageError(f"{name!r}: appears twice in the archive") from None
        with os.fdopen(handle, "wb") as out:
            while chunk := source.read(_CHUNK):
                self.written += len(chunk)
                if self.written > self.caps.unpacked_bytes:
                    raise PackageError(
                        f"unpacked, the archive is over {self.caps.unpacked_bytes} bytes "
                        f"(package caps: unpacked_bytes; stopped at {name!r})"
                    )
                out.write(chunk)

    def symlink(self, name: str, target: str) -> None:
        path = self._place(name)
        if not target or target.startswith("/") or "\x00" in target:
            raise PackageError(f"{name!r}: a symlink to {target!r} points outside the package")
        if os.path.lexists(path):
            raise PackageError(f"{name!r}: appears twice in the archive")
        os.symlink(target, path)
        self.links.append(path)

    def hardlink(self, name: str, target: str) -> None:
        """A hard link is written as a copy of its target, which must be a file already
        unpacked from this archive (it counts against the caps again)."""
        try:
            source = self.root.joinpath(*_parts(target))
        except PackageError:
            raise PackageError(f"{name!r}: a hard link to {target!r} points outside") from None
        real = Path(os.path.realpath(source))
        if real != source or not source.is_file():
            raise PackageError(
                f"{name!r}: a hard link to {target!r}, which is not a file of the package"
            )
        with open(source, "rb") as handle:
            self.file(name, handle, source.stat().st_mode)

    def check_links(self) -> None:
        """Every symlink, resolved for real (through other links), lands inside ``root``."""
        for link in self.links:
            resolved = Path(os.path.realpath(link))
            if resolved != self.root and self.root not in resolved.parents:
                name = link.relative_to(self.root).as_posix()
                raise PackageError(
                    f"{name!r}: a symlink to {os.readlink(link)!r} points outside the package"
                )


# -- packing ------------------------------------------------------------------------------
def pack(folder: Path, caps: PackageCaps = DEFAULT_CAPS) -> bytes:
    """A ``.tar.gz`` of the package in ``folder`` (checked with ``load_package`` first), as
    ``submit`` uploads it: its files and folders, owners and times zeroed, caches
    (``PACK_SKIP``) left out; PackageError if it would pass a cap.

    A symlink to somewhere inside the package stays a link; one pointing outside it is packed
    as what it points at (a file, or a folder's files), so a package can share a file with
    the repository it lives in (the example bots link the repository's ``proto`` folder)."""
    package = load_package(folder)
    buffer = io.BytesIO()
    count = total = 0
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for path, name, inside_link in _walk(package.root, package.root, ""):
            if inside_link:
                info = tarfile.TarInfo(name)
                info.type, info.linkname = tarfile.SYMTYPE, os.readlink(path)
            else:
                info = tar.gettarinfo(str(path.resolve()), arcname=name)
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = 0
            count += 1
            total += info.size if info.isreg() else 0
            if count > caps.files or total > caps.unpacked_bytes:
                raise PackageError(
                    f"{folder}: over the package caps ({caps.files} entries, "
                    f"{caps.unpacked_bytes} bytes)"
                )
            if info.isreg():
                with open(path, "rb") as handle:
                    tar.addfile(info, handle)
            elif info.isdir() or info.issym():
                tar.addfile(info)
            else:
                kind = _kind_name(stat.S_IFMT(path.stat().st_mode))
                raise PackageError(f"{name!r}: {kind} cannot go in a package")
    data = buffer.getvalue()
    if len(data) > caps.archive_bytes:
        raise PackageError(
            f"{folder}: packed, it is {len(data)} bytes, over the cap of {caps.archive_bytes}"
        )
    return data


def _walk(root: Path, folder: Path, prefix: str) -> Iterator[tuple[Path, str, bool]]:
    """``(path, name in the archive, is a link inside the package)`` for every entry under
    ``folder``, sorted (the same folder packs to the same bytes); links pointing outside
    ``root`` are followed (``pack``)."""
    for entry in sorted(folder.iterdir()):
        if entry.name in PACK_SKIP:
            continue
        name = prefix + entry.name
        if entry.is_symlink():
            target = entry.resolve()
            if target == root or root in target.parents:
                yield entry, name, True
                continue
            if not target.exists():
                raise PackageError(f"{name!r}: a symlink to {os.readlink(entry)!r}, missing")
        yield entry, name, False
        if entry.is_dir():
            yield from _walk(root, entry, name + "/")
