"""Confining a bot process: bubblewrap namespaces, resource limits, a minimal environment.

Organizers run strangers' code.  Under ``bwrap`` (bubblewrap, fast) a bot gets its own PID,
network, IPC and UTS namespaces: it sees no other process, has no network at all (it reaches
the referee through one Unix socket bind-mounted at ``SOCKET_IN_SANDBOX``), sees the system
read-only, its own folder read-only (unless ``writable_dir``), the code of the arena's Python
read-only (``code_paths``), a private ``/tmp`` and ``/dev/shm`` of bounded size, and nothing
of the config file, the output folder, the store, other bots' folders, the organizer's home
or the folder the runner was started from.  It dies
with the runner (``--die-with-parent``; the PID namespace takes every child with it).

Its host uid is never privileged: an ordinary runner's bwrap maps the bot into a user
namespace of its own (uid ``SANDBOX_UID`` inside, the runner's uid outside); a root runner's
bwrap sets up the mounts as root, then the bot drops to host uid ``SANDBOX_UID`` (nobody)
before it runs, so root's file permissions (``/etc/shadow``) are not its.

Limits hold in both modes: memory as ``RLIMIT_DATA`` (a cap on the heap and private
mappings: address-space caps break V8 and the JVM, which reserve far more than they use)
and, where a ``memory`` cgroup is writable (v1, or v2 with the controller delegated), as
that cgroup's limit, which also counts ``/tmp``, shared mappings and memfds; open files as
``RLIMIT_NOFILE``; processes as a ``pids`` cgroup where one is writable, else, in the
sandbox, ``RLIMIT_NPROC`` set inside the bot's user namespace (which counts only its own
processes there, Linux >= 5.14).  An ordinary runner with no writable memory cgroup starts
the launcher in a systemd user scope with ``MemoryMax`` where its user manager allows one
(``systemd_scope``).  ``describe_limits`` says which are in force, and what is not limited.

The launcher's helpers run with ``LAUNCHER_ENV`` alone: a bot's variables reach its own
process only (``env_file``, ``load_env_file``, ``exec_with_env``), and those that hijack a
loader or an interpreter are refused by name (``env_refusal``, for ``bot.toml`` and configs).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import fcntl
import functools
import importlib.util
import itertools
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tacocat_arena.launch import scratch

#: Where a sandboxed bot finds the referee's Unix socket.
SOCKET_IN_SANDBOX = "/run/tacocat/arena.sock"
#: Variables a sandboxed (or unsandboxed) bot gets besides its own ``env`` and the arena's.
BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}
#: The whole environment of what we run to start a bot or a build (``/bin/sh``, ``setpriv``,
#: ``prlimit``, ``bwrap``, ``env``): ours, fixed.  A bot's and a build's variables reach only
#: its own process, at its last exec (``load_env_file`` in the sandbox, ``exec_with_env``
#: without one): never a helper, which runs as the organizer (root, perhaps) before any
#: namespace exists.
LAUNCHER_ENV = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "LANG": "C.UTF-8"}
#: Where a sandboxed process's environment is handed to it (read-only, its own).
ENV_IN_SANDBOX = "/run/tacocat/env"
#: Where a sandboxed process finds its runner's ``lifeline`` (read-only).
LIFELINE_IN_SANDBOX = "/run/tacocat/lifeline"
#: The uid/gid a sandboxed bot runs as inside its user namespace.
SANDBOX_UID = 65534
_INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"


class SandboxError(RuntimeError):
    """The sandbox asked for cannot be had; the message says why and what to do."""


class SandboxMode(enum.StrEnum):
    """How a bot process is confined (config ``sandbox``, flag ``--sandbox``)."""

    AUTO = "auto"  # bwrap where it works, else none with a warning
    BWRAP = "bwrap"
    NONE = "none"


@dataclass(frozen=True)
class Limits:
    """Resource limits of one bot process (children included)."""

    memory_mib: int = 1024
    processes: int = 64
    open_files: int = 256

    def __post_init__(self) -> None:
        for name, low in (("memory_mib", 32), ("processes", 4), ("open_files", 16)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"limits.{name} must be an integer >= {low}, got {value!r}")


@functools.cache
def bwrap_path() -> str | None:
    """The bwrap binary if it is installed and can make the namespaces we need here (some
    containers forbid user namespaces), else None."""
    path = shutil.which("bwrap")
    if path is None:
        return None
    probe = [path, "--unshare-all", "--unshare-user", "--die-with-parent", "--ro-bind", "/", "/"]
    try:
        done = subprocess.run([*probe, "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return path if done.returncode == 0 else None


def resolve_mode(mode: SandboxMode, *, warn: Callable[[str], None] | None = None) -> SandboxMode:
    """``auto`` becomes ``bwrap`` or ``none``; ``bwrap`` without a working bwrap is an error."""
    if mode is SandboxMode.NONE:
        return mode
    if bwrap_path() is not None:
        return SandboxMode.BWRAP
    if mode is SandboxMode.BWRAP:
        raise SandboxError(
            f"sandbox = 'bwrap' but bubblewrap is not installed or cannot create namespaces "
            f"here: {_INSTALL_HINT}, or set sandbox = 'none'"
        )
    message = (
        "bubblewrap (bwrap) is not available, so bots run unsandboxed: they can read your "
        "files and environment, use the network, see and signal other processes; the referee "
        f"still checks that each session comes from its own bot's process. To confine bots, "
        f"{_INSTALL_HINT}"
    )
    (warn or (lambda text: warnings.warn(text, stacklevel=2)))(message)
    return SandboxMode.NONE


# -- process and memory limits: cgroups where writable ----------------------------------------
#: Numbers this runner's cgroups, one number per ``BotCgroup.create``: a cgroup named for
#: its bot alone was shared by two processes of one name started at once (two ``check_bot``
#: calls of a bot named "bot", in threads or in one loop), and the first one's ``remove``
#: killed the other's bot (SIGKILL) as the first ended.
_CGROUP_NUMBERS = itertools.count(1)


@dataclass(frozen=True)
class BotCgroup:
    """The cgroups of one bot process (a ``pids`` and a ``memory`` one: one folder in v2,
    one per hierarchy in v1), whichever are writable; removed by ``remove``."""

    pids: Path | None
    memory: Path | None

    @property
    def folders(self) -> tuple[Path, ...]:
        """Every folder the process enters (one in v2, where both are the same)."""
        return tuple(dict.fromkeys(p for p in (self.pids, self.memory) if p is not None))

    @classmethod
    def create(cls, name: str, limits: Limits) -> BotCgroup | None:
        """Fresh cgroups holding the process to ``limits``, or None where none is writable.

        Fresh: named for this runner (its pid, which ``_remove_stale`` reads), a number of
        this call's and the bot (``name``, for whoever reads ``/sys/fs/cgroup``), so no two
        processes ever share one, whatever their names: ``remove`` kills all that is in it."""
        made: dict[str, Path] = {}
        number = next(_CGROUP_NUMBERS)
        for controller in ("pids", "memory"):
            for parent in _cgroup_parents(controller):
                _remove_stale(parent)
                path = parent / f"tacocat-{os.getpid()}-{number}-{name}"
                try:
                    path.mkdir(exist_ok=True)
                    for file, value in _limit_files(controller, path, limits):
                        (path / file).write_text(value)
                except OSError:
                    continue
                made[controller] = path
                break
        if not made:
            return None
        return cls(made.get("pids"), made.get("memory"))

    def hit_process_limit(self) -> bool:
        """Whether a fork was refused for the limit."""
        return self.pids is not None and _event(self.pids / "pids.events", "max") > 0

    def hit_memory_limit(self) -> bool:
        """Whether the kernel killed a process of the bot for the memory limit."""
        if self.memory is None:
            return False
        v1 = self.memory / "memory.oom_control"
        return _event(v1 if v1.exists() else self.memory / "memory.events", "oom_kill") > 0

    async def remove(self) -> None:
        """Kill what is left inside and remove the cgroups (once their processes are gone)."""
        for path in self.folders:
            await _remove_cgroup(path)


def _limit_files(controller: str, path: Path, limits: Limits) -> list[tuple[str, str]]:
    """What to write in a fresh cgroup's files, v1 or v2, to set ``controller``'s limit."""
    if controller == "pids":
        return [("pids.max", str(limits.processes))]
    memory = str(limits.memory_mib * 2**20)
    if (path / "memory.max").exists():  # v2; no swap either, so the limit is all of it
        files = [("memory.max", memory)]
        if (path / "memory.swap.max").exists():
            files.append(("memory.swap.max", "0"))
        return files
    files = [("memory.limit_in_bytes", memory)]
    if (path / "memory.memsw.limit_in_bytes").exists():  # v1: memory and swap together
        files.append(("memory.memsw.limit_in_bytes", memory))
    return files


def _event(path: Path, key: str) -> int:
    """A counter from a cgroup's ``KEY VALUE`` lines (pids.events, memory.events...)."""
    try:
        fields = path.read_text().split()
    except OSError:
        return 0
    return int(fields[fields.index(key) + 1]) if key in fields[:-1] else 0


async def _remove_cgroup(path: Path) -> None:
    for _ in range(50):
        try:
            for pid in (path / "cgroup.procs").read_text().split():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            await asyncio.sleep(0.02)  # busy until the killed processes are reaped


def _remove_stale(parent: Path) -> None:
    """Remove the empty cgroups of runners that died without cleaning up (kill -9)."""
    for path in parent.glob("tacocat-*-*"):
        owner = path.name.split("-")[1]
        if owner.isdigit() and not Path("/proc", owner).exists():
            with contextlib.suppress(OSError):
                path.rmdir()  # fails, harmlessly, while processes are still inside


@functools.cache
def _cgroup_parents(controller: str) -> tuple[Path, ...]:
    """Cgroup folders where we may create children limited by ``controller`` ('pids' or
    'memory'), best first: v2 with the controller delegated, then v1."""
    found: list[Path] = []
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return ()
    for line in lines:
        _, controllers, relative = line.split(":", 2)
        if controllers == "":
            for root in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified")):
                parent = root / relative.lstrip("/")
                try:
                    enabled = (parent / "cgroup.subtree_control").read_text().split()
                except OSError:
                    continue
                if controller in enabled and os.access(parent, os.W_OK):
                    found.insert(0, parent)
        elif controller in controllers.split(","):
            parent = Path("/sys/fs/cgroup", controller) / relative.lstrip("/")
            if parent.is_dir() and os.access(parent, os.W_OK):
                found.append(parent)
    return tuple(found)


def _cgroup_kind(controller: str) -> str:
    parents = _cgroup_parents(controller)
    if not parents:
        return ""
    return "cgroup v2" if (parents[0] / "cgroup.subtree_control").exists() else "cgroup v1"


def runs_as_root() -> bool:
    """Whether the runner is root: its sandboxed bots then drop to host uid SANDBOX_UID."""
    return os.geteuid() == 0


def process_limit_kind(mode: SandboxMode = SandboxMode.BWRAP) -> str:
    """How a process limit is enforced here: 'cgroup v2', 'cgroup v1', 'rlimit in the
    sandbox' or '' (none).  RLIMIT_NPROC counts every process and thread of the user, so it
    is set only inside an ordinary runner's sandbox, where the bot has a user namespace of
    its own and the count is its own."""
    if kind := _cgroup_kind("pids"):
        return kind
    if systemd_scope():
        return "systemd user scope"
    return "rlimit in the sandbox" if mode is SandboxMode.BWRAP and not runs_as_root() else ""


def memory_limit_kind() -> str:
    """'cgroup v1'/'cgroup v2' where a memory cgroup counts all of a bot's memory, else
    'systemd user scope' where systemd can make one for it (``systemd_scope``), else ''."""
    return _cgroup_kind("memory") or ("systemd user scope" if systemd_scope() else "")


#: The organizer's own variables ``systemd-run --user`` needs to reach its user manager.
_USER_BUS = ("XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS")


def launcher_env() -> dict[str, str]:
    """``LAUNCHER_ENV``, and the organizer's user-bus address where the launcher starts
    with ``systemd-run --user`` (ours, never a stranger's)."""
    env = dict(LAUNCHER_ENV)
    if systemd_scope():
        env.update({k: os.environ[k] for k in _USER_BUS if k in os.environ})
    return env


@functools.cache
def systemd_scope() -> str | None:
    """``systemd-run`` where no memory cgroup of ours is writable but the organizer's
    systemd user manager can run a process in a transient scope of its own with a memory
    limit (a desktop or a login with ``loginctl enable-linger``: cgroup v2, the memory
    controller delegated to user@.service, as systemd does by default), else None.  Root
    runners, and runners with a writable cgroup, use their cgroups."""
    if _cgroup_kind("memory"):
        return None
    path = shutil.which("systemd-run")
    if path is None:
        return None
    env = {**LAUNCHER_ENV, **{k: os.environ[k] for k in _USER_BUS if k in os.environ}}
    probe = [path, *_scope_options(Limits(memory_mib=64, processes=8)), "true"]
    try:
        done = subprocess.run(probe, env=env, capture_output=True, timeout=15)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return path if done.returncode == 0 else None


def _scope_options(limits: Limits) -> list[str]:
    memory = limits.memory_mib * 2**20
    return [
        "--user", "--scope", "--quiet", "--collect",
        "-p", f"MemoryMax={memory}", "-p", "MemorySwapMax=0", "-p", f"TasksMax={limits.processes}",
        "--",
    ]  # fmt: skip


def describe_limits(limits: Limits, mode: SandboxMode = SandboxMode.BWRAP) -> str:
    """One line saying which limits are in force, and how."""
    processes = process_limit_kind(mode)
    memory = memory_limit_kind()
    parts = [
        f"memory {limits.memory_mib} MiB (RLIMIT_DATA"
        + (
            f", {memory}: heap, /tmp, shared memory)"
            if memory
            else ": the heap and /tmp only; shared memory and memfds are NOT limited, no "
            "writable memory cgroup or systemd user scope here, docs/tournaments.md#limits)"
        ),
        f"open files {limits.open_files} (RLIMIT_NOFILE)",
        f"processes {limits.processes} ({processes})"
        if processes
        else "processes: not limited (no writable pids cgroup, and RLIMIT_NPROC would count "
        "every thread of your user" + (")" if mode is SandboxMode.NONE else " or not bind root)"),
    ]
    if mode is SandboxMode.BWRAP and runs_as_root():
        parts.append(f"host uid {SANDBOX_UID} (the runner is root)")
    return ", ".join(parts)


def launcher(limits: Limits, cgroup: BotCgroup | None) -> list[str]:
    """The command prefix that applies the limits, enters the cgroups and ties the process's
    life to the runner's (PR_SET_PDEATHSIG), then execs the bot (or bwrap).

    util-linux's ``setpriv`` and ``prlimit`` do it, rather than a ``preexec_fn``: a Python
    hook forces a plain fork of the runner, whose gRPC threads then run their fork handlers
    (and log about it); without one, the child is spawned by vfork and execs at once."""
    memory = limits.memory_mib * 2**20
    rlimits = [f"--data={memory}:{memory}", f"--nofile={limits.open_files}:{limits.open_files}"]
    prefix = [_tool("setpriv"), "--pdeathsig", "KILL", *_still_ours()]
    prefix += [_tool("prlimit"), *rlimits, "--"]
    if cgroup is None and (systemd := systemd_scope()):
        # No cgroup of ours: a transient scope of the user's systemd holds all its memory.
        # (systemd-run --scope execs setpriv in it; the death signal then ties the bot to
        # systemd-run's parent, the runner, as without it.)
        return [systemd, *_scope_options(limits), *prefix]
    if cgroup is not None:
        # The shell moves itself into the cgroups before exec, so nothing escapes them.
        enter = [f"echo $$ > {shlex.quote(str(f / 'cgroup.procs'))}" for f in cgroup.folders]
        prefix = ["/bin/sh", "-c", " && ".join([*enter, 'exec "$@"']), "sh", *prefix]
    return prefix


#: Run after ``setpriv --pdeathsig`` set the death signal: the process goes on only if its
#: parent is still the runner that started it ($1).  The runner dying between the fork and
#: the prctl (a window of milliseconds under load: a build started just before the arena
#: was killed) sends no signal at all, and the process was the reaper's, for ever.  Checked
#: after the prctl, the parent either is alive (its death now kills us) or is not ours.
_PARENT_CHECK = '[ "$PPID" = "$1" ] || exit 137; shift; exec "$@"'


def _still_ours() -> list[str]:
    """The launcher's step that checks its parent is still this process (``_PARENT_CHECK``):
    with the death signal, nothing we start outlives us, however soon we die."""
    return ["/bin/sh", "-c", _PARENT_CHECK, "sh", str(os.getpid())]


def in_sandbox(limits: Limits, cgroup: BotCgroup | None) -> list[str]:
    """The command prefix inside an ordinary runner's bwrap without a pids cgroup: the
    process limit as RLIMIT_NPROC, set there, in the bot's own user namespace, where it
    counts only the bot's processes (set before bwrap, it would count all the user's
    threads).  Nothing otherwise (a root runner's bot has no user namespace of its own)."""
    if runs_as_root() or (cgroup is not None and cgroup.pids is not None):
        return []
    return [_tool("prlimit"), f"--nproc={limits.processes}:{limits.processes}", "--"]


def _drop_to_sandbox_uid() -> list[str]:
    """A root runner's bot drops to host uid SANDBOX_UID before it runs (bwrap_argv)."""
    ids = str(SANDBOX_UID)
    drop = ["--reuid", ids, "--regid", ids, "--clear-groups", "--inh-caps=-all", "--"]
    return [_tool("setpriv"), *drop]


def admit_bot(socket: Path) -> None:
    """Let a root runner's bot (host uid SANDBOX_UID) connect to its own Unix socket: the
    socket's folder (the runner's, 0700) still keeps everyone else out, and a sandbox has
    only its own socket mounted."""
    if runs_as_root():
        os.chown(socket, SANDBOX_UID, -1)


def unreachable_by_bot(folder: Path, *, write: bool) -> str | None:
    """Why a root runner's bot (host uid SANDBOX_UID) cannot read (and, with ``write``,
    write) its ``folder``; None if it can, or if the runner is not root.  The folders above
    it do not matter: the sandbox makes its own (``_folders_above``)."""
    if not runs_as_root():
        return None
    info = folder.stat()
    need = 0o7 if write else 0o5
    mine = info.st_uid == SANDBOX_UID and (info.st_mode >> 6) & need == need
    if mine or info.st_mode & need == need:
        return None
    fix = f"chown {SANDBOX_UID} {folder}" if write else f"chmod o+rx {folder}"
    return (
        f"the runner is root, so the bot runs as uid {SANDBOX_UID}, which cannot "
        f"{'write' if write else 'read'} its folder {folder}"
        + (" (writable_dir)" if write else "")
        + f": {fix}, or run the tournament as an ordinary user"
    )


@dataclass(frozen=True)
class LentFolder:
    """A package folder lent to SANDBOX_UID for a root runner's build, and how each entry
    was before (owner, group, mode, by path inside it), to give it back as it was."""

    folder: Path
    before: Mapping[str, tuple[int, int, int]]


def lend_folder(folder: Path) -> LentFolder | None:
    """Under a root runner, give a package's folder to SANDBOX_UID for its build, which runs
    as that uid and writes its output there (docs/submissions.md); None otherwise (an
    ordinary runner's build is that runner's uid in its user namespace)."""
    if not runs_as_root():
        return None
    before: dict[str, tuple[int, int, int]] = {}

    def lend(path: str, name: str, dir_fd: int | None) -> None:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        before[path] = (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode))
        os.chown(name, SANDBOX_UID, SANDBOX_UID, dir_fd=dir_fd, follow_symlinks=False)

    _walk(folder, lend)
    return LentFolder(folder, before)


def reclaim_folder(lent: LentFolder | None) -> None:
    """After a root runner's build: every entry that was there before owned and moded as it
    was, every one the build made owned by the folder's owner, readable by all (the bot,
    SANDBOX_UID, reads it) and writable by none else, with no set-id bits; FIFOs and sockets
    removed.  Walked by descriptor, never following a link the build made."""
    if lent is None:
        return
    owner = lent.before.get(".", (0, 0, 0o755))

    def reclaim(path: str, name: str, dir_fd: int | None) -> None:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            uid, gid, _ = lent.before.get(path, owner)
            os.chown(name, uid, gid, dir_fd=dir_fd, follow_symlinks=False)
            return
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
            os.unlink(name, dir_fd=dir_fd)  # a FIFO or socket a build left: no bot needs it
            return
        if path in lent.before:
            uid, gid, mode = lent.before[path]
        else:
            uid, gid = owner[:2]
            mode = info.st_mode & 0o755 | 0o444
            if stat.S_ISDIR(info.st_mode) or info.st_mode & 0o100:
                mode |= 0o111
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        fd = os.open(name, flags, dir_fd=dir_fd)
        try:
            os.fchown(fd, uid, gid)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)

    _walk(lent.folder, reclaim)


def _walk(folder: Path, visit: Callable[[str, str, int | None], None]) -> None:
    """``visit(path inside folder, name, dir_fd)`` for the folder (".") and every entry in
    it, by descriptor (``os.fwalk``), never through a link."""
    visit(".", str(folder), None)
    for top, folders, files, dir_fd in os.fwalk(folder, follow_symlinks=False):
        inside = os.path.relpath(top, folder)
        for name in [*folders, *files]:
            with contextlib.suppress(FileNotFoundError):
                visit(os.path.normpath(os.path.join(inside, name)), name, dir_fd)


def launcher_missing() -> str | None:
    """Which tool the launcher needs and cannot find (None: all there)."""
    for tool in ("setpriv", "prlimit"):
        if shutil.which(tool) is None:
            return tool
    return None


def _tool(name: str) -> str:
    path = shutil.which(name) or shutil.which(name, path="/usr/bin:/bin:/usr/sbin:/sbin")
    if path is None:
        raise SandboxError(
            f"{name} (util-linux) is needed to limit bot processes: install util-linux"
        )
    return path


def limit_reason(limits: Limits, log_tail: str, cgroup: BotCgroup | None) -> str:
    """Which limit a crashed bot ran into, judged from its cgroups and last output ("" if
    none)."""
    if cgroup is not None and cgroup.hit_process_limit():
        return f"process limit {limits.processes}"
    if cgroup is not None and cgroup.hit_memory_limit():
        return f"memory limit {limits.memory_mib} MiB (killed by the kernel)"
    if any(mark in log_tail for mark in _MEMORY_MARKS):
        return f"memory limit {limits.memory_mib} MiB"
    if "No space left on device" in log_tail or "ENOSPC" in log_tail:
        return f"memory limit {limits.memory_mib} MiB (its /tmp is that size)"
    if "Too many open files" in log_tail or "EMFILE" in log_tail:
        return f"open-file limit {limits.open_files}"
    if any(mark in log_tail for mark in _FORK_MARKS):
        return f"process limit {limits.processes}"
    return ""


_MEMORY_MARKS = (
    "MemoryError",
    "out of memory",
    "Cannot allocate memory",
    "std::bad_alloc",
    "heap out of memory",
)
_FORK_MARKS = ("BlockingIOError", "Resource temporarily unavailable", "EAGAIN")


# -- the bwrap command line --------------------------------------------------------------------
#: What a bot's Python imports from the arena's installation: the SDK, the engine it uses,
#: the generated protocol, the example bots (the built-ins), and the SDK's dependencies.
BOT_PACKAGES = (
    "tacocat_bot",
    "tacocat_arena",
    "tacocat",
    "example_bots",
    "grpc",
    "google.protobuf",
)


@functools.cache
def code_paths() -> tuple[Path, ...]:
    """The folders a bot's Python needs, and no others: this Python's installation and
    virtual environment, the module path it starts with in a bot's environment
    (``_bot_module_path``) and the real folders of ``BOT_PACKAGES`` (an editable install's
    lie in the checkout, found by a finder, not on the path).

    Not the runner's ``sys.path``: under ``python -m`` (or ``-c``, or a script) its first
    entry is the folder ``run`` or ``serve`` was started from, where the organizer's other
    files are (a config with the secret, tokens), and PYTHONPATH never reaches a bot."""
    paths = {Path(sys.base_prefix), Path(sys.prefix), Path(sys.exec_prefix)}
    paths.update(_bot_module_path())
    for package in BOT_PACKAGES:
        with contextlib.suppress(ImportError, ValueError):
            spec = importlib.util.find_spec(package)
            if spec is not None and spec.submodule_search_locations:
                paths.update(Path(p) for p in spec.submodule_search_locations)
    resolved = sorted({p.resolve() for p in paths if p.exists()})
    # Drop a path inside another one (mounted with it).
    return tuple(p for p in resolved if not any(q != p and q in p.parents for q in resolved))


def _bot_module_path() -> list[Path]:
    """The module path this Python starts with in a bot's environment (``BASE_ENV``: no
    PYTHONPATH, no user site) from no folder of its own: its standard library,
    site-packages and what their ``.pth`` files add (a path-based editable install, a
    venv extending another).  Asked of the interpreter itself, since only it knows."""
    code = "import sys; print('\\0'.join(sys.path))"  # its first, '': -c's current folder
    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            env=BASE_ENV,
            cwd="/",
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []  # the prefixes still hold the standard library and site-packages
    if done.returncode != 0:
        return []
    entries = done.stdout.rstrip("\n").split("\0")
    return [Path(e) for e in entries if os.path.isabs(e) and os.path.isdir(e)]


def bwrap_argv(
    command: Sequence[str],
    *,
    bwrap: str,
    bot_dir: Path,
    writable_dir: bool,
    socket: Path,
    hide: Iterable[Path],
    extra_code: Iterable[Path] = (),
    tmpfs_mib: int | None = None,
    env_fd: int | None = None,
) -> list[str]:
    """The bwrap command line that runs ``command`` confined (see the module docstring).

    ``hide`` are paths the bot must not see even where they lie inside a mounted folder
    (the config file, the output folder, other bots' folders): each is covered by an empty
    tmpfs (a folder) or /dev/null (a file).  ``tmpfs_mib`` caps the bot's ``/tmp`` (and a
    quarter of it its ``/dev/shm``), which is memory: without the cap either could take half
    the host's.  Under a root runner ``command`` runs as host uid SANDBOX_UID.  ``env_fd``
    holds the process's environment (``env_file``), mounted read-only at ``ENV_IN_SANDBOX``
    for ``load_env_file`` to read: bwrap itself runs with ``LAUNCHER_ENV``."""
    if runs_as_root():
        # No user namespace: it would map the bot to host root.  The bot drops to host uid
        # SANDBOX_UID itself, with only the capabilities that takes, before the command.
        command = [*_drop_to_sandbox_uid(), *command]
        unshare = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
        unshare += ["--unshare-cgroup-try", "--cap-drop", "ALL"]
        unshare += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        unshare = ["--unshare-all", "--unshare-user", "--uid", str(SANDBOX_UID), "--gid"]
        unshare += [str(SANDBOX_UID), "--disable-userns", "--cap-drop", "ALL"]
    # No --new-session: ``spawn`` starts every launcher in a session of its own already, with
    # no controlling terminal (nothing to inject input into), and bwrap's would take the
    # sandbox's pid 1 out of the launcher's process group, which the reaper and
    # ``kill_group`` kill.  That pid 1 sets its death signal only after it forks the bot: a
    # runner killed in between (a build started as the arena was killed, under load) left
    # it and the bot, which had passed the lifeline check, running for ever.
    argv = [bwrap, *unshare, "--die-with-parent", "--hostname", "sandbox"]
    for top in SYSTEM_FOLDERS:
        if Path(top).is_dir():
            argv += ["--ro-bind", top, top]
    for top in ("bin", "sbin", "lib", "lib32", "lib64"):
        path = Path("/", top)
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            argv += ["--ro-bind", str(path), str(path)]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    for fresh, share in (("/tmp", 1), ("/dev/shm", 4)):
        size = ["--size", str(tmpfs_mib * 2**20 // share)] if tmpfs_mib else []
        argv += ["--perms", "1777", *size[: 2 * _bwrap_has(bwrap, "--size")], "--tmpfs", fresh]
    mounted = [p for p in code_paths() if not _under(p, SYSTEM_FOLDERS)]
    mounted += [p.resolve() for p in extra_code if not _under(p.resolve(), ("/usr",))]
    bot_dir = bot_dir.resolve()
    targets = [*mounted, bot_dir, Path(SOCKET_IN_SANDBOX)]
    for folder in _folders_above(tuple(targets)):
        argv += ["--perms", "0755", "--dir", str(folder)]
    argv += _mounts(mounted, bot_dir, writable_dir, hide)
    argv += ["--bind", str(socket), SOCKET_IN_SANDBOX]
    if env_fd is not None:
        argv += ["--perms", "0444", "--ro-bind-data", str(env_fd), ENV_IN_SANDBOX]
    argv += ["--ro-bind", str(lifeline()), LIFELINE_IN_SANDBOX]  # load_env_file checks it
    argv += ["--chdir", str(bot_dir), "--", *command]
    return argv


def _mounts(
    code: Sequence[Path], bot_dir: Path, writable_dir: bool, hide: Iterable[Path]
) -> list[str]:
    """The bind mounts of the code and the bot's folder, and what covers each hidden path
    that lies inside them, in path order (a folder before what is inside it), so that
    hiding never takes the code or the bot's own folder away: a hidden folder that holds
    some of them (another bot's ``dir`` above the installation) is covered first, then
    they are mounted again inside it; one that is code itself (the built-ins' folder, the
    example_bots package) stays visible: every bot's sandbox mounts it."""
    binds = {path: "--ro-bind" for path in code}
    binds[bot_dir] = "--bind" if writable_dir else "--ro-bind"
    covers: dict[Path, list[str]] = {}
    for secret in sorted({p.resolve() for p in hide} - set(binds)):
        if not any(secret == v or v in secret.parents for v in binds):
            continue  # not mounted anyway
        if secret.is_dir():
            covers[secret] = ["--tmpfs", str(secret)]
        elif secret.exists():
            covers[secret] = ["--ro-bind", "/dev/null", str(secret)]
    argv: list[str] = []
    for path in sorted({*binds, *covers}):
        argv += covers.get(path) or [binds[path], str(path), str(path)]
    return argv


#: The host's folders every sandbox sees, read-only.
SYSTEM_FOLDERS = ("/usr", "/etc", "/opt")


@functools.lru_cache(maxsize=1024)
def _folders_above(targets: tuple[Path, ...]) -> tuple[Path, ...]:
    """The folders bwrap would create above ``targets``, top first, none inside a bind
    mount: made world-traversable here, as bwrap would copy the host's mode (``/root`` is
    0700, and a root runner's bot, uid SANDBOX_UID, could not reach its own code under it).

    A function of the paths alone, so kept per set of targets: a bot's are the same at every
    start (its folder, the installation's code), and working them out was most of the
    runner's CPU in building a start's command line (``bench sandbox``)."""
    binds = [*SYSTEM_FOLDERS, *map(str, targets)]
    above: dict[Path, None] = {}
    for target in targets:
        for folder in reversed(target.parents[:-1]):
            if not _under(folder, binds) and str(folder) not in _FRESH_FOLDERS:
                above[folder] = None
    return tuple(sorted(above, key=lambda folder: len(folder.parts)))


#: The folders bwrap makes fresh in every sandbox (those above them exist already).
_FRESH_FOLDERS = ("/tmp", "/dev", "/dev/shm", "/proc")


@functools.cache
def _bwrap_has(bwrap: str, option: str) -> bool:
    """Whether this bwrap knows ``option`` (``--size`` came in bubblewrap 0.7)."""
    try:
        done = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return f"{option} " in done.stdout + done.stderr


def _under(path: Path, roots: Sequence[str]) -> bool:
    """Whether ``path`` is one of ``roots`` or inside one (absolute, normal paths; by their
    text: ``Path.parents`` made this a good part of a start's command line)."""
    text = str(path)
    for root in roots:
        root = root.rstrip("/") or "/"
        if text == root or text.startswith(root if root == "/" else root + "/"):
            return True
    return False


#: The organizer's variables that do reach a sandboxed bot: the SDK's settings (strict
#: mode, ``TACOCAT_BOT_STRICT``), which say how to run, not what anyone holds.
PASSED_PREFIX = "TACOCAT_BOT_"


def bot_env(extra: Mapping[str, str], arena: Mapping[str, str]) -> dict[str, str]:
    """A sandboxed bot's whole environment: the base, the SDK's settings, the config's
    ``env``, then the arena's."""
    passed = {k: v for k, v in os.environ.items() if k.startswith(PASSED_PREFIX)}
    return {**BASE_ENV, **passed, **extra, **arena}


# -- the environment: ours for the launcher, the bot's for the bot alone -----------------------
#: Variables no ``bot.toml`` ``[env]`` and no config ``env`` may set, with why.  Since the
#: launcher runs with ``LAUNCHER_ENV`` they reach only the bot's own process; they are refused
#: all the same (defence in depth, and a clear message rather than a surprise) because each
#: makes a program run code or read files it names before its own code starts: the dynamic
#: loader's (``LD_*``, as ld.so(8) lists them), the C library's that glibc itself strips
#: for setuid programs (``sysdeps/generic/unsecvars.h``), the shell's startup hooks (dash
#: and bash: our launcher's ``/bin/sh``), and Python's (the arena's own language).
REFUSED_ENV_PREFIXES = {
    "LD_": "the dynamic loader's (ld.so(8)): it loads code it names into every program",
    "BASH_FUNC_": "bash's exported functions: they run in every bash started",
}
REFUSED_ENV = {
    **dict.fromkeys(
        (
            "GCONV_PATH",
            "GETCONF_DIR",
            "GLIBC_TUNABLES",
            "HOSTALIASES",
            "LOCALDOMAIN",
            "LOCPATH",
            "MALLOC_TRACE",
            "NIS_PATH",
            "NLSPATH",
            "RESOLV_HOST_CONF",
            "RES_OPTIONS",
            "TMPDIR",
            "TZDIR",
        ),
        "the C library's (one glibc strips for setuid programs: unsecvars.h)",
    ),
    **dict.fromkeys(
        ("BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "IFS", "PS4"),
        "the shell's: it changes what every sh or bash started runs",
    ),
    **dict.fromkeys(
        (
            "PYTHONSTARTUP",
            "PYTHONPATH",
            "PYTHONHOME",
            "PYTHONUSERBASE",
            "PYTHONPLATLIBDIR",
            "PYTHONEXECUTABLE",
            "PYTHONWARNINGS",
            "PYTHONBREAKPOINT",
            "PYTHONINSPECT",
        ),
        "Python's: it makes the interpreter load or run code before yours",
    ),
}
#: Set by the arena for each process (``launch.bots``), never by a package or config.
RESERVED_ENV_PREFIX = "TACOCAT_ARENA_"
#: The longest value a variable may have (a command line's argument may be 128 KiB at most).
MAX_ENV_VALUE = 16 * 1024
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


def env_refusal(name: object, value: object) -> str | None:
    """Why the variable ``name = value`` may not be set by a package or a config (a sentence
    naming it, with what to do instead), or None when it may."""
    if not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
        return f"env name {name!r} is not a variable name (letters, digits, _; 128 at most)"
    if not isinstance(value, str):
        return f"env {name!r} must be a string, got {value!r}"
    if name.startswith(RESERVED_ENV_PREFIX):
        return f"env {name!r}: {RESERVED_ENV_PREFIX}* is set by the arena"
    if "\0" in value:
        return f"env {name!r}: a value cannot hold a NUL character"
    if len(value.encode("utf-8", "surrogatepass")) > MAX_ENV_VALUE:
        return f"env {name!r}: a value may have {MAX_ENV_VALUE} bytes at most"
    why = REFUSED_ENV.get(name) or next(
        (why for prefix, why in REFUSED_ENV_PREFIXES.items() if name.startswith(prefix)), None
    )
    if why is None:
        return None
    instead = (
        "set the module path in your code (sys.path.insert(0, 'src'))"
        if name.startswith("PYTHON")
        else f'set it in the command instead (command = "env {name}=... ./bot"), which runs '
        "in the sandbox"
    )
    return f"env {name!r} is refused: {why}; {instead}"


def env_file(env: Mapping[str, str]) -> bytes:
    """The environment ``env`` as the shell script ``load_env_file`` sources: the launcher's
    own variables unset, each of ``env``'s exported, its value quoted."""
    lines = [f"unset {' '.join(LAUNCHER_ENV)}"]
    for name, value in env.items():
        if not _ENV_NAME.fullmatch(name) or "\0" in value:  # refused at parse time already
            raise SandboxError(f"env {name!r}: not a variable a process can be given")
        lines.append(f"export {name}={shlex.quote(value)}")
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")


def load_env_file(command: Sequence[str]) -> list[str]:
    """``command`` run with the environment mounted at ``ENV_IN_SANDBOX``: the last exec
    before it, in the sandbox and after the drop to SANDBOX_UID, is the only one to see it.
    First it checks its runner is alive (``_RUNNER_ALIVE``)."""
    return ["/bin/sh", "-c", f'{_RUNNER_ALIVE}. {ENV_IN_SANDBOX} && exec "$@"', "sh", *command]


#: Exit if the runner's ``lifeline`` lock is free, that is if the runner has died.  bwrap
#: ties its sandbox to itself (``--die-with-parent``) only once the sandbox is set up, tens
#: of milliseconds after it started: a runner killed meanwhile kills the outer bwrap, and the
#: sandbox would run on, the reaper's.  Checked here, after that tie, a runner alive means
#: the chain holds (its death now kills it all); one dead ends the sandbox.  (flock missing,
#: or failing otherwise: the command runs, as without the check.)
_RUNNER_ALIVE = f"flock -n -s {LIFELINE_IN_SANDBOX} true && exit 137; "

_lifelines: dict[int, tuple[Path, int]] = {}


def lifeline() -> Path:
    """This process's lifeline: an empty file (0444) it holds an exclusive ``flock`` on for
    as long as it lives, which the kernel drops however it dies, SIGKILL included.  Every
    sandbox sees it read-only at ``LIFELINE_IN_SANDBOX`` (a lock no bot can take while the
    runner lives: no channel between sandboxes).  One per process: a worker makes its own."""
    pid = os.getpid()
    if pid not in _lifelines:
        path = scratch.owned_folder("life", anonymous=True) / "lifeline"
        fd = os.open(path, os.O_CREAT | os.O_RDONLY | os.O_CLOEXEC, 0o444)
        fcntl.flock(fd, fcntl.LOCK_EX)
        _lifelines[pid] = (path, fd)
    return _lifelines[pid][0]


def exec_with_env(command: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """``command`` run with exactly ``env`` by ``env -i`` (without a sandbox): the helpers
    before it keep ``LAUNCHER_ENV``, and ``env`` execs the command at once."""
    if command and "=" in command[0]:
        raise SandboxError(f"program {command[0]!r}: a program's name cannot hold '='")
    for name, value in env.items():
        if "=" in name or "\0" in name or "\0" in value:
            raise SandboxError(f"env {name!r}: not a variable a process can be given")
    return [_tool("env"), "-i", "--", *(f"{k}={v}" for k, v in env.items()), *command]


class Handover:
    """Data handed to a launcher on memory files (``memfd``), by descriptor: what must not
    stand on a command line, which every user of the host can read (``ps``) and, for bwrap,
    every sandboxed process too (``/proc/1/cmdline`` is bwrap's).  Closed, on our side, once
    the process has started (it holds its own copies)."""

    def __init__(self) -> None:
        self.fds: list[int] = []

    def add(self, data: bytes, name: str = "tacocat") -> int:
        """A descriptor that reads ``data`` from its start."""
        fd = os.memfd_create(name)  # close-on-exec: handed on by pass_fds only
        self.fds.append(fd)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
        return fd

    def seal(self, argv: Sequence[str]) -> list[str]:
        """bwrap's command line with its options (mounts, hidden paths, namespaces) read from
        a descriptor (``--args``): what is left to see is ``bwrap --args N -- COMMAND``, the
        same shape for every sandbox, the gate's and a game's alike."""
        end = list(argv).index("--")
        data = b"".join(os.fsencode(a) + b"\0" for a in argv[1:end])
        return [argv[0], "--args", str(self.add(data, "bwrap-args")), *argv[end:]]

    def close(self) -> None:
        """Close our side of every descriptor."""
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds.clear()

    def __enter__(self) -> Handover:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


async def spawn(
    argv: Sequence[str],
    handover: Handover | None = None,
    *,
    own_env: Mapping[str, str] | None = None,
    **options: Any,
) -> asyncio.subprocess.Process:
    """Start ``argv`` (a launcher's command line) with ``LAUNCHER_ENV`` and nothing else of
    anyone's: the one place bots and builds are started from.  It starts in a session (and
    process group) of its own, with no controlling terminal, which the reaper kills if this
    process dies and ``kill_group`` ends: every process of a sandbox stays in it
    (``bwrap_argv``).  ``own_env`` is for a process of the arena's own (``grade --batch``'s
    worker), which has the organizer's variables and never a stranger's."""
    fds = tuple(handover.fds) if handover is not None else ()
    env = launcher_env() if own_env is None else dict(own_env)
    process = await asyncio.create_subprocess_exec(
        *argv, env=env, pass_fds=fds, start_new_session=True, **options
    )
    _reaper().track(process.pid)
    return process


def kill_group(pid: int) -> None:
    """Kill the process group (session) ``spawn`` started as ``pid``, whatever it left
    running, and stop tracking it (``_Reaper``)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    _reaper().forget(pid)


#: The reaper's program (``/bin/sh``: it starts in a millisecond).  It keeps the groups it
#: is told of (``+PGID``, ``-PGID`` lines) and, at the end of its input (the runner ended,
#: however: the pipe's only writer is gone), kills every group it still holds.
_REAPER_SCRIPT = """\
groups=" "
while read -r line; do
  case $line in
    +*) groups="$groups${line#+} " ;;
    -*) p=${line#-}
        case $groups in *" $p "*) groups="${groups%%" $p "*} ${groups#*" $p "}" ;; esac ;;
  esac
done
for p in $groups; do kill -KILL "-$p" 2>/dev/null; done
"""


class _Reaper:
    """A small process of the runner's that kills, when the runner dies, every process group
    it started and has not killed itself yet (``spawn``, ``kill_group``).

    Why, beyond each launcher's death signal: bwrap ties its sandbox to itself only once the
    sandbox is set up; a runner killed before (a build started just before the arena was)
    takes the outer bwrap with it and leaves the inner one blocked for ever, or a sandbox
    whose command runs on with nobody's time limit.  The launcher's process group holds both
    bwraps (the sandbox's pid 1 among them, whose death ends the whole sandbox: bwrap runs
    without ``--new-session`` for this).  The reaper
    learns of the end by the end of its input, a pipe only the runner writes to: no race.
    It runs while some group is tracked, and ends (told so) when none is.

    One lock orders ``track`` and ``forget``: runners in two threads (two ``check_bot``
    calls, each its own ``asyncio.run``) started two reapers at once, the second one's
    groups replacing the first's, which then ran until the runner's end; or one's ``forget``
    found no group left and closed the reaper's input just after the other's ``track`` had
    told it of a bot, which it then killed."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._groups: set[int] = set()
        self._lock = threading.Lock()

    def track(self, pgid: int) -> None:
        with self._lock:
            self._track(pgid)

    def forget(self, pgid: int) -> None:
        with self._lock:
            self._forget(pgid)

    def _track(self, pgid: int) -> None:
        if self._process is None or self._process.poll() is not None:
            try:
                self._process = subprocess.Popen(
                    ["/bin/sh", "-c", _REAPER_SCRIPT],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    env=LAUNCHER_ENV,
                    cwd="/",
                    start_new_session=True,  # not the terminal's group: Ctrl-C is the runner's
                )
            except OSError:
                return  # the launchers' death signals still hold
            self._groups = set()
        self._groups.add(pgid)
        self._say(f"+{pgid}\n")

    def _forget(self, pgid: int) -> None:
        if pgid not in self._groups:
            return
        self._groups.discard(pgid)
        self._say(f"-{pgid}\n")
        if not self._groups and self._process is not None:
            done, self._process = self._process, None
            with contextlib.suppress(OSError):
                if done.stdin is not None:
                    done.stdin.close()  # nothing left: it ends
            threading.Thread(target=done.wait, name="reaper-wait", daemon=True).start()

    def _say(self, line: str) -> None:
        stdin = self._process.stdin if self._process is not None else None
        if stdin is None:
            return
        with contextlib.suppress(OSError, ValueError):
            stdin.write(line.encode())
            stdin.flush()


_reapers: dict[int, _Reaper] = {}
_reapers_lock = threading.Lock()


def _reaper() -> _Reaper:
    """This process's reaper (one per process: a worker process starts its own; one for
    all its threads, made under a lock, or two threads could each make and use one)."""
    pid = os.getpid()
    with _reapers_lock:
        if pid not in _reapers:
            _reapers[pid] = _Reaper()
        return _reapers[pid]
