"""Confining a bot process: bubblewrap namespaces, resource limits, a minimal environment.

Organizers run strangers' code.  Under ``bwrap`` (bubblewrap, unprivileged, fast) a bot gets
its own user, PID, network, IPC and UTS namespaces: it sees no other process, has no network
at all (it reaches the referee through one Unix socket bind-mounted at ``SOCKET_IN_SANDBOX``),
sees the system read-only, its own folder read-only (unless ``writable_dir``), the code of the
arena's Python read-only, a private ``/tmp``, and nothing of the config file, the output
folder, the store, other bots' folders or the organizer's home.  It dies with the runner
(``--die-with-parent``; the PID namespace takes every child with it).

Limits hold in both modes: memory as ``RLIMIT_DATA`` (a cap on the heap and anonymous
mappings: address-space caps break V8 and the JVM, which reserve far more than they use),
open files as ``RLIMIT_NOFILE``, and processes as a ``pids`` cgroup where one is writable
(v2 with the controller delegated, or v1), else ``RLIMIT_NPROC`` (which the kernel does not
apply to root).  ``describe_limits`` says which are in force.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import functools
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

#: Where a sandboxed bot finds the referee's Unix socket.
SOCKET_IN_SANDBOX = "/run/tacocat/arena.sock"
#: Variables a sandboxed (or unsandboxed) bot gets besides its own ``env`` and the arena's.
BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}
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


# -- process limits: cgroups where writable ---------------------------------------------------
@dataclass(frozen=True)
class PidsCgroup:
    """A ``pids`` cgroup for one bot process, v2 or v1; removed by ``remove``."""

    path: Path
    version: int

    @classmethod
    def create(cls, name: str, limit: int) -> PidsCgroup | None:
        """A fresh cgroup limited to ``limit`` tasks, or None where none is writable."""
        for parent, version in _pids_parents():
            _remove_stale(parent)
            path = parent / f"tacocat-{os.getpid()}-{name}"
            try:
                path.mkdir(exist_ok=True)
                (path / "pids.max").write_text(str(limit))
            except OSError:
                continue
            return cls(path, version)
        return None

    def enter(self) -> None:
        """Move the calling process in (called in the child, before exec)."""
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def hit_limit(self) -> bool:
        """Whether a fork was refused for the limit."""
        try:
            events = (self.path / "pids.events").read_text().split()
        except OSError:
            return False
        return "max" in events and events[events.index("max") + 1] != "0"

    async def remove(self) -> None:
        """Kill what is left inside and remove the cgroup (once its processes are gone)."""
        for _ in range(50):
            try:
                for pid in (self.path / "cgroup.procs").read_text().split():
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(int(pid), signal.SIGKILL)
                self.path.rmdir()
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
def _pids_parents() -> tuple[tuple[Path, int], ...]:
    """Cgroup folders where we may create pids-limited children, best first."""
    found: list[tuple[Path, int]] = []
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
                if "pids" in enabled and os.access(parent, os.W_OK):
                    found.append((parent, 2))
        elif "pids" in controllers.split(","):
            parent = Path("/sys/fs/cgroup/pids") / relative.lstrip("/")
            if (parent / "pids.max").exists() or parent.is_dir():
                if os.access(parent, os.W_OK):
                    found.append((parent, 1))
    return tuple(found)


def process_limit_kind() -> str:
    """How a process limit would be enforced here: 'cgroup v2', 'cgroup v1', 'rlimit' or ''
    (RLIMIT_NPROC means nothing to root)."""
    parents = _pids_parents()
    if parents:
        return f"cgroup v{parents[0][1]}"
    return "" if os.geteuid() == 0 else "rlimit"


def describe_limits(limits: Limits) -> str:
    """One line saying which limits are in force, and how."""
    processes = process_limit_kind()
    parts = [
        f"memory {limits.memory_mib} MiB (RLIMIT_DATA)",
        f"open files {limits.open_files} (RLIMIT_NOFILE)",
        f"processes {limits.processes} ({processes})"
        if processes
        else "processes: not limited (no writable pids cgroup; RLIMIT_NPROC does not bind root)",
    ]
    return ", ".join(parts)


def launcher(limits: Limits, cgroup: PidsCgroup | None) -> list[str]:
    """The command prefix that applies the limits, enters the cgroup and ties the process's
    life to the runner's (PR_SET_PDEATHSIG), then execs the bot (or bwrap).

    util-linux's ``setpriv`` and ``prlimit`` do it, rather than a ``preexec_fn``: a Python
    hook forces a plain fork of the runner, whose gRPC threads then run their fork handlers
    (and log about it); without one, the child is spawned by vfork and execs at once."""
    memory = limits.memory_mib * 2**20
    rlimits = [f"--data={memory}:{memory}", f"--nofile={limits.open_files}:{limits.open_files}"]
    if cgroup is None:
        rlimits.append(f"--nproc={limits.processes}:{limits.processes}")
    prefix = [_tool("setpriv"), "--pdeathsig", "KILL", _tool("prlimit"), *rlimits, "--"]
    if cgroup is not None:
        # The shell moves itself into the cgroup before exec, so nothing escapes it.
        enter = 'echo $$ > "$0" && exec "$@"'
        prefix = ["/bin/sh", "-c", enter, str(cgroup.path / "cgroup.procs"), *prefix]
    return prefix


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


def limit_reason(limits: Limits, log_tail: str, cgroup: PidsCgroup | None) -> str:
    """Which limit a crashed bot ran into, judged from its last output ("" if none)."""
    if cgroup is not None and cgroup.hit_limit():
        return f"process limit {limits.processes}"
    if any(mark in log_tail for mark in _MEMORY_MARKS):
        return f"memory limit {limits.memory_mib} MiB"
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
def code_paths() -> list[Path]:
    """Folders the arena's Python needs to run a bot: its installation, its virtual
    environment and the packages a bot imports (tacocat_bot, the example bots)."""
    paths = {Path(sys.base_prefix), Path(sys.prefix), Path(sys.exec_prefix)}
    for entry in sys.path:
        if entry and os.path.isdir(entry):
            paths.add(Path(entry))
    for package in ("tacocat_arena", "tacocat", "tacocat_bot", "example_bots"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            paths.update(Path(p) for p in spec.submodule_search_locations)
    resolved = sorted({p.resolve() for p in paths if p.exists()})
    # Drop a path inside another one (mounted with it).
    return [p for p in resolved if not any(q != p and q in p.parents for q in resolved)]


def bwrap_argv(
    command: Sequence[str],
    *,
    bwrap: str,
    bot_dir: Path,
    writable_dir: bool,
    socket: Path,
    hide: Iterable[Path],
    extra_code: Iterable[Path] = (),
) -> list[str]:
    """The bwrap command line that runs ``command`` confined (see the module docstring).

    ``hide`` are paths the bot must not see even where they lie inside a mounted folder
    (the config file, the output folder, other bots' folders): each is covered by an empty
    tmpfs (a folder) or /dev/null (a file)."""
    argv = [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_UID),
        "--disable-userns",
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "sandbox",
    ]
    for top in ("usr", "etc", "opt"):
        if Path("/", top).is_dir():
            argv += ["--ro-bind", f"/{top}", f"/{top}"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64"):
        path = Path("/", top)
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            argv += ["--ro-bind", str(path), str(path)]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    mounted = [p for p in code_paths() if not _under(p, ("/usr", "/etc", "/opt"))]
    mounted += [p.resolve() for p in extra_code if not _under(p.resolve(), ("/usr",))]
    bot_dir = bot_dir.resolve()
    for path in mounted:
        if path != bot_dir:
            argv += ["--ro-bind", str(path), str(path)]
    argv += ["--bind" if writable_dir else "--ro-bind", str(bot_dir), str(bot_dir)]
    visible = [*mounted, bot_dir]
    for secret in sorted({p.resolve() for p in hide}):
        if not any(secret == v or v in secret.parents for v in visible):
            continue  # not mounted anyway
        if secret.is_dir():
            argv += ["--tmpfs", str(secret)]
        elif secret.exists():
            argv += ["--ro-bind", "/dev/null", str(secret)]
    argv += ["--bind", str(socket), SOCKET_IN_SANDBOX, "--chdir", str(bot_dir), "--", *command]
    return argv


def _under(path: Path, roots: Sequence[str]) -> bool:
    return any(path == Path(root) or Path(root) in path.parents for root in roots)


#: The organizer's variables that do reach a sandboxed bot: the SDK's settings (strict
#: mode, ``TACOCAT_BOT_STRICT``), which say how to run, not what anyone holds.
PASSED_PREFIX = "TACOCAT_BOT_"


def bot_env(extra: Mapping[str, str], arena: Mapping[str, str]) -> dict[str, str]:
    """A sandboxed bot's whole environment: the base, the SDK's settings, the config's
    ``env``, then the arena's."""
    passed = {k: v for k, v in os.environ.items() if k.startswith(PASSED_PREFIX)}
    return {**BASE_ENV, **passed, **extra, **arena}
