"""Temporary folders of a runner (bots' Unix sockets), cleaned up even after a kill -9.

A runner removes its folder when it stops; a runner killed with SIGKILL cannot.  So each
folder is named for its owner (``tacocat-KIND-PID-…`` in the system's temporary folder) and
holds an ``owner`` file with the owner's pid and start time (``/proc/PID/stat``, field 22:
a pid reused by another process has another start time).  Every new folder's creation first
removes the folders of this user whose owner is dead: the next start cleans up after the
killed one, and never touches a folder whose runner still lives.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

OWNER_FILE = "owner"


def _start_time(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot), None if it is not running."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def _owner_alive(folder: Path) -> bool:
    try:
        pid_text, started = (folder / OWNER_FILE).read_text().split()
        pid = int(pid_text)
    except (OSError, ValueError):
        return True  # not one of ours, or being created right now: leave it alone
    return _start_time(pid) == started


def clean_orphans(kind: str, under: Path | None = None) -> list[Path]:
    """Remove this user's ``tacocat-KIND-*`` folders whose owner is dead; return them."""
    base = Path(under or tempfile.gettempdir())
    removed = []
    for folder in base.glob(f"tacocat-{kind}-*"):
        try:
            mine = not folder.is_symlink() and folder.is_dir()
            mine = mine and folder.stat().st_uid == os.getuid()
        except OSError:
            continue
        if mine and not _owner_alive(folder):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def owned_folder(kind: str, under: Path | None = None, *, anonymous: bool = False) -> Path:
    """A new private temporary folder (mode 0700) owned by this process, after removing
    the folders of ``kind`` that dead runners left.  ``anonymous``: no pid in its name
    (the owner file alone says whose it is), for a path a sandboxed bot can read."""
    clean_orphans(kind, under)
    prefix = f"tacocat-{kind}-" if anonymous else f"tacocat-{kind}-{os.getpid()}-"
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=under))
    started = _start_time(os.getpid()) or "0"
    (folder / OWNER_FILE).write_text(f"{os.getpid()} {started}\n")
    return folder


@contextlib.contextmanager
def private_folder(kind: str, under: Path | None = None) -> Iterator[Path]:
    """``owned_folder(kind)`` for the length of a ``with``, removed at its end: a temporary
    folder that a runner killed inside the ``with`` leaves to the next one's start to
    remove, where ``tempfile.TemporaryDirectory`` would leave it for good."""
    folder = owned_folder(kind, under)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


#: The name of every sandboxed process's socket on the host (``socket_link``).
SOCKET_LINK = "arena.sock"


def socket_link(socket: Path) -> Path:
    """A folder of its own (``tacocat-sock-RANDOM``, beside the socket's folder) holding a
    hard link to ``socket`` named ``SOCKET_LINK``: what a sandbox binds, so the host path a
    bot reads in its ``/proc/self/mountinfo`` has one shape whoever serves it (the gate's
    check, a batch's referee, the arena's own).  Removed by ``drop_socket_link``; a dead
    runner's are removed at the next one's start.  OSError if no link can be made there."""
    folder = owned_folder("sock", socket.parent.parent, anonymous=True)
    try:
        os.link(socket, folder / SOCKET_LINK)
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder / SOCKET_LINK


def drop_socket_link(link: Path) -> None:
    """Remove a ``socket_link`` (the socket itself stays: the link is one name of it)."""
    shutil.rmtree(link.parent, ignore_errors=True)
