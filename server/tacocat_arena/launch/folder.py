"""A bot's folder, and the pre-flight look at its command before any game.

A sandboxed bot sees of the disk only its folder, the system (read-only) and the arena's
Python; so where its folder is decides whether its command can work at all.  The rule, the
same for ``run``, ``play``, ``check``, workers and the arena (every launcher goes through
``place``):

- the bot's ``dir`` when it is given (a config's ``dir = ...``);
- else, when the command names an existing file (``node ../other/bot.js``,
  ``./build/bot``), that file's folder, the command's paths then made absolute;
- else the config file's folder (the current folder for ``--bot``); a ``builtin:`` bot's is
  the installed example_bots package's (``builtins_folder``): it needs nothing else, and
  the runner's current folder may be one a root runner's bots (uid 65534) cannot read, or
  hold the organizer's files.

``preflight`` then catches, before any game and before anything is written, any path the
command names that the sandbox will not show, and says the two fixes: a ``dir`` holding
everything the bot needs, or ``--sandbox none`` for code you trust.

A root runner's bot runs as uid 65534, which cannot read a folder that only root may (any
Docker container, where the bot sits in /root).  ``readable_copy`` then copies the folder
into the runner's private scratch, readable by that uid, up to ``SNAPSHOT_CAP_BYTES`` (over
it, the start fails with the sandbox's message, as before), and hashes what it copied: the
code that played is known (``run`` records the hash in results.json).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from tacocat_arena.launch import sandbox
from tacocat_arena.launch.builtins import builtins_folder, is_builtin
from tacocat_arena.launch.sandbox import SandboxMode
from tacocat_arena.launch.spec import BotSpec

#: The host's top folders every sandbox shows (read-only), besides the bot's own folder.
_SHOWN_TOPS = (*sandbox.SYSTEM_FOLDERS, "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/dev")


class FolderError(RuntimeError):
    """A bot's command names a path its sandbox will not show; the message says the fixes."""


@dataclass(frozen=True)
class Placement:
    """Where a bot runs and with what command line: its folder and its arguments."""

    folder: Path
    argv: tuple[str, ...]


def place(spec: BotSpec, base_dir: Path) -> Placement:
    """The bot's folder and command line by the module's rule."""
    argv = spec.argv()
    if spec.dir is not None:
        return Placement(spec.dir, tuple(argv))
    if is_builtin(spec.command):
        return Placement(builtins_folder(), tuple(argv))
    named = [_existing(word, base_dir) for word in argv]
    system = _system_paths()
    first = next(
        (p for p in named if p is not None and p.is_file() and not _inside(p, system)), None
    )
    if first is None or first.parent == base_dir.resolve():
        return Placement(base_dir, tuple(argv))
    absolute = [
        _absolute(word, base_dir) if path is not None else word
        for word, path in zip(argv, named, strict=True)
    ]
    return Placement(first.parent, tuple(absolute))


#: The most a root runner copies of a bot folder its bot cannot read (files' bytes).
SNAPSHOT_CAP_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class Snapshot:
    """A private copy of a bot's folder, made for a root runner's bot (``readable_copy``)."""

    source: Path
    folder: Path
    #: sha256 over the copy's sorted entries: each path, its kind and its bytes (or target).
    sha256: str
    size: int
    files: int

    def describe(self, name: str | None) -> str:
        """The one line that says it (said once, before the games); ``name`` None: a bot
        not yet named (``check`` without ``--name``)."""
        files = f"{self.files} file" + ("" if self.files == 1 else "s")
        return (
            f"{'the bot' if name is None else f'bot {name!r}'}: its folder {self.source} is "
            f"not readable by uid {sandbox.SANDBOX_UID} (the runner is root), so it plays a "
            f"private copy: {files}, {self.size / 1024:.0f} KiB, sha256 {self.sha256[:16]}"
        )


def readable_copy(
    spec: BotSpec,
    placement: Placement,
    mode: SandboxMode,
    into: Path,
    cap_bytes: int = SNAPSHOT_CAP_BYTES,
) -> tuple[Placement, Snapshot | None]:
    """``placement`` as it is, or, for a root runner's sandboxed bot whose folder its uid
    cannot read, a copy of the folder in ``into`` (a private folder of the runner's) that it
    can, with the command's paths into the folder moved to the copy.  Not for a
    ``writable_dir`` bot (its writes must land in its own folder) nor over ``cap_bytes``:
    the bot's start then says what to do, as before."""
    source = placement.folder
    if mode is not SandboxMode.BWRAP or spec.writable_dir:
        return placement, None
    if sandbox.unreachable_by_bot(source, write=False) is None:
        return placement, None
    entries = _entries(source)
    size = sum(entry.stat(follow_symlinks=False).st_size for entry in entries)
    if size > cap_bytes:
        return placement, None
    target = into / f"{spec.name}-{hashlib.sha256(str(source).encode()).hexdigest()[:8]}"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target, symlinks=True)
    digest = hashlib.sha256()
    files = 0
    for path in [target, *_entries(target)]:
        info = path.lstat()
        relative = path.relative_to(target).as_posix()
        if stat.S_ISLNK(info.st_mode):
            digest.update(f"L {relative} {os.readlink(path)}\0".encode())
            continue
        if stat.S_ISDIR(info.st_mode):
            digest.update(f"D {relative}\0".encode())
            path.chmod(0o755)
            continue
        files += 1
        digest.update(f"F {relative} {info.st_size}\0".encode())
        digest.update(path.read_bytes())
        path.chmod(0o755 if info.st_mode & 0o100 else 0o644)
    root = str(source.resolve())
    argv = tuple(
        str(target) + word[len(root) :] if word == root or word.startswith(root + "/") else word
        for word in placement.argv
    )
    snapshot = Snapshot(source, target, digest.hexdigest(), size, files)
    return Placement(target, argv), snapshot


def _entries(folder: Path) -> list[Path]:
    """Every entry under ``folder`` (links not followed), sorted by path."""
    found = []
    for top, dirs, names in os.walk(folder):
        dirs.sort()
        found += [Path(top) / name for name in (*dirs, *sorted(names))]
    return sorted(found)


def _absolute(word: str, base: Path) -> str:
    """``word`` (an option's value too: ``--x=PATH``) with the path it names made absolute:
    its folders resolved, its last part kept as written: a virtual environment's
    ``bin/python`` is a link to the base interpreter, which would run without the
    environment's packages."""
    option, equals, value = word.partition("=") if word.startswith("-") else ("", "", word)
    path = Path(value) if Path(value).is_absolute() else base / value
    return f"{option}{equals}{path.parent.resolve() / path.name}"


def preflight(spec: BotSpec, placement: Placement, mode: SandboxMode) -> None:
    """FolderError if ``mode`` is the bwrap sandbox and the command names an existing path
    it will not show (outside the bot's folder, the system and the arena's Python)."""
    if mode is not SandboxMode.BWRAP:
        return
    folder = placement.folder.resolve()
    if spec.writable_dir and spec.dir is None and is_builtin(spec.command):
        raise FolderError(
            f"bot {spec.name!r}: writable_dir is set, but a built-in without a dir runs in "
            f"the installed example_bots package ({folder}), which no bot may write: give it "
            "a dir of its own, or drop writable_dir"
        )
    shown = [folder, *_system_paths()]
    for index, word in enumerate(placement.argv):
        path = _existing(word, folder)
        if path is None or _inside(path, shown):
            continue
        if index == 0 and Path(word).is_absolute() and path.is_file():
            continue  # a program named by its absolute path is mounted alone (BotProcess)
        raise FolderError(
            f"bot {spec.name!r}: its command names {path}, which the sandbox (bwrap) does "
            f"not show: a sandboxed bot sees only its folder {folder}, the system and the "
            "arena's Python. Either give the bot a folder holding all it needs (in the "
            f'config: dir = "{_common(folder, path)}"), or, for code you trust, run it '
            "unsandboxed with --sandbox none"
        )


def _system_paths() -> list[Path]:
    """What every sandbox shows besides the bot's folder: the system, the arena's Python."""
    return [*sandbox.code_paths(), *(Path(top) for top in _SHOWN_TOPS)]


def _existing(word: str, base: Path) -> Path | None:
    """The existing file or folder ``word`` names (an option's value too: ``--x=PATH``),
    relative to ``base``; None for a word that names none."""
    if word.startswith("-"):
        word = word.partition("=")[2]
    if not word or "\0" in word:
        return None
    candidate = Path(word) if Path(word).is_absolute() else base / word
    if "/" not in word and not candidate.is_file():
        return None  # a bare word ("node", "main") is a program or a value, not a path
    try:
        return candidate.resolve() if candidate.exists() else None
    except (OSError, RuntimeError):
        return None


def _inside(path: Path, roots: list[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def _common(folder: Path, path: Path) -> str:
    """The nearest folder holding both the bot's folder and ``path``."""
    parts = []
    for mine, theirs in zip(folder.parts, path.parts, strict=False):
        if mine != theirs:
            break
        parts.append(mine)
    return str(Path(*parts)) if parts else "/"
