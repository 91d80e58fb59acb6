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
never from the sizes an archive's headers claim, which a zip bomb lies about.  Memory and time
are bounded before anything is trusted: a zip's central directory (its list of entries) is
measured and its records counted before ``zipfile`` reads it, a tar's decompressed stream is
counted as it is read (headers included), a link's target or a tar's long-name header is
read only up to its own small cap, names and paths have a length cap, and any error an entry
raises (corrupt deflate data, a name the filesystem refuses, 3,000 chained long-name headers)
is a ``PackageError`` naming the entry.  On any refusal the target folder is removed: nothing
half-unpacked stays.

The API is small on purpose (``grade`` reuses it): ``load_package``, ``open_package``,
``unpack``, ``pack`` and the values ``BotPackage``, ``PackageCaps``, ``PackageError``.
"""

from __future__ import annotations

import bz2
import contextlib
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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any

from tacocat_arena.launch.sandbox import env_refusal
from tacocat_arena.launch.spec import BotSpec

#: The file every package has at its root.
MANIFEST = "bot.toml"
#: What ``bot.toml`` may hold.
MANIFEST_KEYS = ("command", "build", "env")
#: Folders ``pack`` leaves out (caches and version control, never needed to run a bot).
PACK_SKIP = frozenset({".git", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"})

#: Longest ``bot.toml`` read (a manifest is a few lines; a 32 MiB one froze the arena's loop).
MANIFEST_BYTES = 64 * 1024
#: Longest entry path and path component, in bytes (Linux's own limits are 4,096 and 255).
MAX_PATH_BYTES = 1024
MAX_NAME_BYTES = 255
#: Longest symlink target, and longest tar long-name or pax header: read only up to this.
MAX_LINK_BYTES = 4096
TAR_HEADER_BYTES = 64 * 1024
#: Tar extension headers (long names, pax) in a row before a member: a chain of thousands
#: recursed in ``tarfile`` until RecursionError.
TAR_HEADER_CHAIN = 8
#: Decompressed tar bytes allowed per entry beyond the files' own bytes (its 512-byte header,
#: padding, a pax header of a few hundred bytes).
TAR_OVERHEAD_BYTES = 4096

_CHUNK = 64 * 1024
_MiB = 2**20
_ZIP_RECORD = 46  # a central directory record's fixed part


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
    #: Size of a zip's central directory (its list of entries), checked before it is read:
    #: ``zipfile`` reads it whole and makes an object per entry (a zip listing 1,000,000
    #: entries cost 380 MiB before any cap counted them).
    directory_bytes: int = 8 * _MiB

    def __post_init__(self) -> None:
        for name in ("archive_bytes", "unpacked_bytes", "files", "directory_bytes"):
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

    def spec(self, name: str, *, hosted: bool = False) -> BotSpec:
        """The bot to start from this package under ``name``: its command, run from its
        folder with its variables (the gate, a grade's tiers and the arena's games all start
        it so; ConfigError for a name or command ``BotSpec.checked`` refuses).  ``hosted``:
        ``name`` is an arena version's ladder name (``alice@v2``, ``BotSpec.checked``)."""
        return BotSpec.checked(name, self.command, dir=self.root, env=self.env, hosted=hosted)


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
    with open(manifest, "rb") as handle:
        raw = handle.read(MANIFEST_BYTES + 1)
    if len(raw) > MANIFEST_BYTES:
        raise PackageError(f"{MANIFEST}: over {MANIFEST_BYTES} bytes (a manifest is a few lines)")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise PackageError(f"{MANIFEST}: not valid TOML: {error}") from None
    except RecursionError:
        raise PackageError(f"{MANIFEST}: not valid TOML: nested too deeply") from None
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
    if "\x00" in value:
        raise PackageError(f"{MANIFEST}: {key} holds a NUL character")
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
        with open(archive, "rb") as handle:
            directory = _zip_directory(handle, caps)
        if directory is not None:
            _unpack_zip(archive, writer)
        else:
            _unpack_tar(archive, writer)
        writer.check_links()
    except BaseException:
        shutil.rmtree(into, ignore_errors=True)
        raise


def shown(name: str) -> str:
    """An entry's name as a message quotes it: ``repr``, cut to 100 characters (a refusal of
    a 4,200-character path need not repeat it)."""
    return repr(name) if len(name) <= 100 else repr(name[:100]) + f"... ({len(name)} characters)"


@contextlib.contextmanager
def _entry(name: str) -> Iterator[None]:
    """Any error while unpacking entry ``name`` is a PackageError naming it: corrupt deflate
    data, a bad CRC, an encrypted entry, a name the filesystem refuses."""
    try:
        yield
    except PackageError:
        raise
    except RecursionError:
        raise PackageError(f"{shown(name)}: nested too deeply to unpack") from None
    except Exception as error:  # whatever zipfile, tarfile, zlib or the disk raise
        raise PackageError(f"{shown(name)}: cannot be unpacked: {error}") from None


def _zip_directory(handle: IO[bytes], caps: PackageCaps) -> int | None:
    """The number of entries of the zip archive ``handle``, None if it is no zip; PackageError
    if its central directory is over ``directory_bytes`` or lists more than ``files`` entries
    (counted here, record by record, before ``zipfile`` reads the directory whole)."""
    try:
        end = zipfile._EndRecData(handle)  # type: ignore[attr-defined]  # zipfile's own finder
    except OSError:
        return None
    if end is None:
        return None
    size, location = end[zipfile._ECD_SIZE], end[zipfile._ECD_LOCATION]  # type: ignore[attr-defined]
    if size > caps.directory_bytes:
        raise PackageError(
            f"the zip's list of entries is {size} bytes, over the cap of {caps.directory_bytes} "
            "(package caps: directory_bytes)"
        )
    start = location - size
    if end[zipfile._ECD_SIGNATURE] == zipfile.stringEndArchive64:  # type: ignore[attr-defined]
        start -= zipfile.sizeEndCentDir64 + zipfile.sizeEndCentDir64Locator  # type: ignore[attr-defined]
    if start < 0:
        raise PackageError("not a readable zip archive: its list of entries is cut off")
    handle.seek(start)
    data = handle.read(size)
    count = offset = 0
    while offset + _ZIP_RECORD <= len(data):
        if data[offset : offset + 4] != zipfile.stringCentralDir:  # type: ignore[attr-defined]
            break
        name, extra, comment = (
            int.from_bytes(data[offset + at : offset + at + 2], "little") for at in (28, 30, 32)
        )
        count += 1
        if count > caps.files:
            raise PackageError(
                f"the zip lists more than {caps.files} entries (package caps: files)"
            )
        if name > MAX_PATH_BYTES:
            start = offset + _ZIP_RECORD
            text = data[start : start + name].decode("utf-8", errors="replace")
            raise PackageError(f"{shown(text)}: a path over {MAX_PATH_BYTES} bytes")
        offset += _ZIP_RECORD + name + extra + comment
    return count


def _unpack_zip(archive: Path, writer: _Writer) -> None:
    try:
        zipped = zipfile.ZipFile(archive)
    except Exception as error:  # BadZipFile, LargeZipFile, a struct error on a lying header
        raise PackageError(f"not a readable zip archive: {error}") from None
    with zipped:
        for info in zipped.infolist():
            with _entry(info.filename):
                mode = (info.external_attr >> 16) & 0xFFFF
                kind = stat.S_IFMT(mode)
                if info.is_dir():
                    writer.folder(info.filename)
                elif kind == stat.S_IFLNK:
                    with zipped.open(info) as source:
                        raw = source.read(MAX_LINK_BYTES + 1)  # never the whole entry
                    if len(raw) > MAX_LINK_BYTES:
                        raise PackageError(
                            f"{shown(info.filename)}: a symlink target over {MAX_LINK_BYTES} bytes"
                        )
                    writer.count(len(raw), info.filename)
                    writer.symlink(info.filename, raw.decode("utf-8", errors="replace"))
                elif kind in (0, stat.S_IFREG):
                    with zipped.open(info) as source:
                        writer.file(info.filename, source, mode or 0o644)
                else:
                    raise PackageError(f"{shown(info.filename)}: {_kind_name(kind)} is not allowed")


def _unpack_tar(archive: Path, writer: _Writer) -> None:
    caps = writer.caps
    limit = caps.unpacked_bytes + TAR_OVERHEAD_BYTES * (caps.files + 1)
    try:
        with _decompressed(archive, limit) as stream, tarfile.open(
            fileobj=stream, mode="r:", tarinfo=_BoundedTarInfo
        ) as tar:  # fmt: skip
            for member in _members(tar):
                name = member.name
                with _entry(name):
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
                        raise PackageError(f"{shown(name)}: a device file is not allowed")
                    elif member.isfifo():
                        raise PackageError(f"{shown(name)}: a FIFO is not allowed")
                    else:
                        raise PackageError(
                            f"{shown(name)}: entry type {member.type!r} is not allowed"
                        )
    except PackageError:
        raise
    except RecursionError:
        raise PackageError("not a readable archive: its headers nest too deeply") from None
    except Exception as error:  # TarError, EOFError, zlib, lzma or bz2 errors, OSError
        raise PackageError(
            f"not a readable archive (a package is a .zip or .tar.gz): {error}"
        ) from None


@contextlib.contextmanager
def _decompressed(archive: Path, limit: int) -> Iterator[_Counted]:
    """``archive`` as a tar stream (gunzipped, or xz/bz2-decompressed, by its magic bytes),
    counted against ``limit`` decompressed bytes (``_Counted``)."""
    with open(archive, "rb") as raw:
        magic = raw.read(6)
        raw.seek(0)
        inner: Any
        if magic[:2] == b"\x1f\x8b":
            inner = gzip.GzipFile(fileobj=raw, mode="rb")
        elif magic == b"\xfd7zXZ\x00":
            inner = lzma.LZMAFile(raw)
        elif magic[:3] == b"BZh":
            inner = bz2.BZ2File(raw)
        else:
            inner = raw
        with contextlib.closing(_Counted(inner, limit)) as counted:
            yield counted


class _Counted(io.RawIOBase):
    """A read-only stream that counts the bytes read (and skipped by a forward seek: tarfile
    skips a member's data by seeking) and raises PackageError past ``limit``, so a tar.gz of
    zeros behind a header that claims a 60 GiB folder is never read to its end."""

    def __init__(self, inner: IO[bytes], limit: int) -> None:
        super().__init__()
        self.inner = inner
        self.limit = limit
        self.position = 0
        self.name = getattr(inner, "name", "")

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def _advance(self, count: int) -> None:
        self.position += count
        if self.position > self.limit:
            raise PackageError(
                f"unpacked, the archive's tar stream is over {self.limit} bytes "
                "(package caps: unpacked_bytes, and 4 KiB of headers an entry)"
            )

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            size = self.limit + 1 - self.position  # never more than the cap allows
        data = self.inner.read(size)
        self._advance(len(data))
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        target = offset if whence == os.SEEK_SET else self.position + offset
        if whence not in (os.SEEK_SET, os.SEEK_CUR) or target < self.position:
            raise OSError("a tar stream is read forward only")
        while self.position < target:  # skipped bytes are read, so they count
            if not self.read(min(_CHUNK, target - self.position)):
                break
        return self.position


class _BoundedTarInfo(tarfile.TarInfo):
    """A tar header that refuses a long-name or pax header over ``TAR_HEADER_BYTES`` before
    ``tarfile`` reads it whole, and a chain of more than ``TAR_HEADER_CHAIN`` of them."""

    _EXTENSIONS = frozenset(
        {tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE, tarfile.XGLTYPE,
         tarfile.SOLARIS_XHDTYPE}
    )  # fmt: skip

    def _proc_member(self, tar: tarfile.TarFile) -> tarfile.TarInfo:
        if self.type not in self._EXTENSIONS:
            return super()._proc_member(tar)  # type: ignore[misc]
        if self.size > TAR_HEADER_BYTES:
            raise PackageError(
                f"a tar extension header (long name or pax) of {self.size} bytes, over "
                f"{TAR_HEADER_BYTES}"
            )
        depth = getattr(tar, "_tacocat_chain", 0)
        if depth >= TAR_HEADER_CHAIN:
            raise PackageError(
                f"more than {TAR_HEADER_CHAIN} tar extension headers (long names, pax) in a row"
            )
        tar._tacocat_chain = depth + 1  # type: ignore[attr-defined]
        try:
            return super()._proc_member(tar)  # type: ignore[misc]
        finally:
            tar._tacocat_chain = depth  # type: ignore[attr-defined]


def _members(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    """The members one at a time, as the stream is read (never the whole list first; the
    list ``tarfile`` keeps is emptied as it goes)."""
    while (member := tar.next()) is not None:
        tar.members.clear()  # type: ignore[attr-defined]
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
    path that stays where it is put (no absolute path, drive, ``..``, backslash or NUL) and
    fits the length caps."""
    if not name or "\x00" in name or "\\" in name:
        raise PackageError(f"{shown(name)}: not a plain relative path")
    if len(os.fsencode(name)) > MAX_PATH_BYTES:
        raise PackageError(f"{shown(name)}: a path over {MAX_PATH_BYTES} bytes")
    pure = PurePosixPath(name)
    if pure.is_absolute() or re.match(r"[A-Za-z]:", name):
        raise PackageError(f"{shown(name)}: an absolute path is not allowed")
    parts = [part for part in pure.parts if part != "."]
    if ".." in parts:
        raise PackageError(f"{shown(name)}: '..' is not allowed in a path")
    if not parts:
        raise PackageError(f"{shown(name)}: not a file name")
    for part in parts:
        if len(os.fsencode(part)) > MAX_NAME_BYTES:
            raise PackageError(f"{shown(name)}: a name over {MAX_NAME_BYTES} bytes")
    return parts


class _Writer:
    """Writes entries under ``root``, checking each path and counting against the caps."""

    def __init__(self, root: Path, caps: PackageCaps) -> None:
        self.root = root
        self.caps = caps
        self.written = 0
        self.entries = 0
        self.links: list[Path] = []

    def _entries(self) -> None:
        self.entries += 1
        if self.entries > self.caps.files:
            raise PackageError(
                f"the archive holds more than {self.caps.files} entries (package caps: files)"
            )

    def count(self, size: int, name: str) -> None:
        """``size`` more bytes written for entry ``name``; PackageError past the cap."""
        self.written += size
        if self.written > self.caps.unpacked_bytes:
            raise PackageError(
                f"unpacked, the archive is over {self.caps.unpacked_bytes} bytes "
                f"(package caps: unpacked_bytes; stopped at {shown(name)})"
            )

    def _place(self, name: str) -> Path:
        """Where entry ``name`` goes; PackageError unless it stays inside ``root``, and no
        folder on the way is a symlink (nothing is ever written through one).  A folder made
        on the way counts as an entry (a path of 500 components is 500 folders)."""
        parts = _parts(name)
        self._entries()
        here = self.root
        for part in parts[:-1]:
            here = here / part
            if here.is_symlink():
                raise PackageError(f"{shown(name)}: goes through the symlink {part!r}")
            if not here.exists():
                self._entries()
                here.mkdir()
            elif not here.is_dir():
                raise PackageError(f"{shown(name)}: {part!r} is a file, not a folder")
        return here / parts[-1]

    def folder(self, name: str) -> None:
        path = self._place(name.rstrip("/"))
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            raise PackageError(f"{shown(name)}: a folder over another entry")
        path.mkdir(exist_ok=True)

    def file(self, name: str, source: IO[bytes], mode: int) -> None:
        path = self._place(name)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        try:
            handle = os.open(path, flags, 0o755 if mode & 0o111 else 0o644)
        except FileExistsError:
            raise PackageError(f"{shown(name)}: appears twice in the archive") from None
        with os.fdopen(handle, "wb") as out:
            while chunk := source.read(_CHUNK):
                self.count(len(chunk), name)
                out.write(chunk)

    def symlink(self, name: str, target: str) -> None:
        path = self._place(name)
        if not target or target.startswith("/") or "\x00" in target:
            raise PackageError(
                f"{shown(name)}: a symlink to {shown(target)} points outside the package"
            )
        if len(os.fsencode(target)) > MAX_LINK_BYTES:
            raise PackageError(f"{shown(name)}: a symlink target over {MAX_LINK_BYTES} bytes")
        if os.path.lexists(path):
            raise PackageError(f"{shown(name)}: appears twice in the archive")
        os.symlink(target, path)
        self.links.append(path)

    def hardlink(self, name: str, target: str) -> None:
        """A hard link is written as a copy of its target, which must be a file already
        unpacked from this archive (it counts against the caps again)."""
        try:
            source = self.root.joinpath(*_parts(target))
        except PackageError:
            raise PackageError(
                f"{shown(name)}: a hard link to {shown(target)} points outside"
            ) from None
        real = Path(os.path.realpath(source))
        if real != source or not source.is_file():
            raise PackageError(
                f"{shown(name)}: a hard link to {shown(target)}, which is not a file of the package"
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
                    f"{shown(name)}: a symlink to {os.readlink(link)!r} points outside the package"
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
