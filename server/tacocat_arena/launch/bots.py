"""Bot processes: start each bot command, wait for it to connect, restart it if it crashes.

Each bot runs as a subprocess with TACOCAT_ARENA_ADDRESS, TACOCAT_ARENA_TOKEN and
TACOCAT_ARENA_BOT set, its working directory its ``dir`` (default: the config file's folder),
confined by the sandbox (``sandbox.py``) when there is one, its resources limited in every
mode.  Its stdout and stderr go through the runner into ``logs/IDENTITY.log`` in the output
folder, which is kept to ``log_limit_kib`` (the oldest part dropped, a marker left in its
place).  When the process ends, the log says how (exit code or signal, and the limit it hit),
its children are killed with it, and errors quote the end of the log, which is where the
reason almost always is.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tacocat_arena.launch import bytecode, folder, sandbox, scratch
from tacocat_arena.launch.game_output import OutputTaps
from tacocat_arena.launch.sandbox import BotCgroup, Limits, SandboxMode
from tacocat_arena.launch.spec import BotSpec
from tacocat_arena.referee import Referee
from tacocat_arena.referee.peers import PeerCheck
from tacocat_arena.referee.untrusted import printable

_TAIL_LINES = 15
_TAIL_BYTES = 64 * 1024


def new_token() -> str:
    """A bot process's token: one shape for every process, the gate's and a game's alike."""
    return secrets.token_urlsafe(24)


class BotStartError(RuntimeError):
    """A bot could not be started or did not connect; the message says why, and ``bot`` names
    the bot (its spec's name: a hosted version's identity), so whoever must answer for it is
    found by name, not in the message."""

    def __init__(self, message: str, bot: str) -> None:
        super().__init__(message)
        self.bot = bot

    def __reduce__(self) -> tuple[type[BotStartError], tuple[str, str]]:
        # Raised in a worker process, it crosses a pickle: the name must cross it too.
        return type(self), (str(self), self.bot)


def check_command(
    spec: BotSpec, cwd: Path, *, sandboxed: bool = False, argv: list[str] | None = None
) -> None:
    """BotStartError unless ``spec``'s program (the first of ``argv``, by default the
    spec's) can be found (on PATH or in ``cwd``; in the sandbox, on its PATH).

    Called before anything is written, so that a typo fails with nothing left behind.
    """
    argv = spec.argv() if argv is None else argv
    if not argv or argv[0] in ("python", "python3"):
        return  # run with this Python (BotProcess.argv)
    path = sandbox.BASE_ENV["PATH"] if sandboxed else os.environ.get("PATH")
    if shutil.which(argv[0], path=path) is None and not (cwd / argv[0]).exists():
        raise BotStartError(
            f"bot {spec.name!r}: command not found: {argv[0]!r} (from {spec.command!r}); "
            "check the command and your PATH"
            + (f" (in the sandbox PATH is {path})" if sandboxed else ""),
            bot=spec.name,
        )


@dataclass(frozen=True)
class Launch:
    """How one bot process is started: the settings the runner decides for it."""

    identity: str  # the name it connects as (the bot's, or its twin's)
    token: str
    log_path: Path
    cwd: Path
    mode: SandboxMode  # resolved: BWRAP or NONE
    limits: Limits
    tcp_address: str  # where an unsandboxed bot connects
    socket_path: Path | None = None  # its own Unix socket (bind-mounted into the sandbox)
    hide: tuple[Path, ...] = ()  # paths a sandboxed bot must not see
    log_limit_bytes: int = 1024 * 1024
    peer_check: PeerCheck | None = field(default=None, compare=False)
    #: Debug mode: the bot shares this terminal (stdin too, for breakpoints), no log.
    echo: bool = False
    #: The command line as ``folder.place`` made it (its paths absolute); None: the spec's.
    argv: tuple[str, ...] | None = None
    #: Whether the bot is told ``identity`` (TACOCAT_ARENA_BOT): always where a referee
    #: checks the name against its token (a tournament, the arena, the gate); not by
    #: ``check`` without ``--name``, so that its Hello carries the name it gives itself.
    tell_name: bool = True

    def __post_init__(self) -> None:
        # Explicit, not an assert: a sandboxed bot without its own socket would be given the
        # TCP address, a way out of the sandbox, and ``python -O`` drops asserts.
        if self.mode is SandboxMode.BWRAP and self.socket_path is None:
            raise ValueError(f"bot {self.identity!r}: a sandboxed launch needs its Unix socket")
        if self.mode is SandboxMode.AUTO:
            raise ValueError(f"bot {self.identity!r}: resolve the sandbox mode before launching")


class CappedLog:
    """A log file kept to about ``limit`` bytes: when it grows past it, the older half is
    dropped and a marker says how much; the newest output, where a crash's reason is,
    always stays."""

    def __init__(self, path: Path, limit: int) -> None:
        self.path = path
        self.limit = limit
        path.parent.mkdir(parents=True, exist_ok=True)
        self.size = path.stat().st_size if path.exists() else 0
        self.dropped = 0
        #: The games in flight that take their share of what is written (``game_output``).
        self.taps = OutputTaps(path.stem)

    def write(self, data: bytes) -> None:
        """Append ``data``, trimming the file when it passes the limit."""
        with open(self.path, "ab") as handle:
            handle.write(data)
        self.taps.write(data)
        self.size += len(data)
        if self.size > self.limit:
            self._trim()

    def _trim(self) -> None:
        content = self.path.read_bytes()
        keep = content[-(self.limit // 2) :]
        cut = keep.find(b"\n")
        if 0 <= cut < len(keep) - 1:
            keep = keep[cut + 1 :]
        self.dropped += len(content) - len(keep)
        marker = (
            f"--- [{self.dropped} bytes of older output dropped: the log is kept to "
            f"{self.limit // 1024} KiB (log_limit_kib)] ---\n"
        ).encode()
        self.path.write_bytes(marker + keep)
        self.size = len(marker) + len(keep)


class BotProcess:
    """One bot's process (one instance of it), across restarts."""

    def __init__(self, spec: BotSpec, launch: Launch) -> None:
        self.spec = spec
        self.launch = launch
        self.log_path = launch.log_path
        self.log = CappedLog(launch.log_path, launch.log_limit_bytes)
        self.process: asyncio.subprocess.Process | None = None
        self.cgroup: BotCgroup | None = None
        self.starts = 0
        #: The starts the runner chose (the first, and each after a pause), not restarts.
        self.planned_starts = 0
        self.paused = False
        #: How each start ended ("exited with code 3", "killed by signal 9 (SIGKILL)").
        self.exits: list[str] = []
        #: The ends the runner did not cause: a crash, or an exit with an error code.
        self.crashes: list[str] = []
        #: Seconds from each start to the bot's session being open (start-up cost).
        self.startup_s: list[float] = []
        self._started_at = 0.0
        self._pump: asyncio.Task[None] | None = None
        self._watch: asyncio.Task[None] | None = None
        self._stopping = False
        self._killed = False  # the runner signalled the process (at stop)
        #: A ``wait_connected`` of this start has not seen its session (yet, or ever).
        self._unconnected = False
        self._lock = asyncio.Lock()
        #: The uniform host name of its socket the sandbox binds (``scratch.socket_link``).
        self._socket_link: Path | None = None

    @property
    def name(self) -> str:
        """The identity this process connects as."""
        return self.launch.identity

    @property
    def is_running(self) -> bool:
        """True while the process is alive."""
        return self.process is not None and self.process.returncode is None

    def argv(self) -> list[str]:
        """The command line; a bare ``python``/``python3`` means this Python (venv-proof)."""
        argv = list(self.launch.argv) if self.launch.argv is not None else self.spec.argv()
        if argv and argv[0] in ("python", "python3"):
            argv[0] = sys.executable
        return argv

    def command(self, cgroup: BotCgroup | None, handover: sandbox.Handover) -> list[str]:
        """The whole command line started with ``sandbox.LAUNCHER_ENV`` (the launcher's
        helpers, then bwrap or ``env -i``, then the bot), the bot's environment handed on
        by ``handover`` (sandboxed) or to ``env -i`` (not): never to a helper."""
        return [*sandbox.launcher(self.launch.limits, cgroup), *self._command(cgroup, handover)]

    def _command(self, cgroup: BotCgroup | None, handover: sandbox.Handover) -> list[str]:
        launch = self.launch
        argv = self.argv()
        sandboxed = launch.mode is SandboxMode.BWRAP
        check_command(self.spec, launch.cwd, sandboxed=sandboxed, argv=argv)
        if argv and argv[0] == sys.executable:
            bytecode.compile_bot_code()  # once per process: the bot cannot write its caches
        try:
            folder.preflight(self.spec, folder.Placement(launch.cwd, tuple(argv)), launch.mode)
        except folder.FolderError as error:
            raise BotStartError(str(error), bot=self.spec.name) from None
        arena = {
            "TACOCAT_ARENA_TOKEN": launch.token,
            "TACOCAT_ARENA_BOT": launch.identity,
            "PYTHONUNBUFFERED": "1",
            # Its launcher restarts it when it must: the SDK does not reconnect by itself.
            "TACOCAT_BOT_RECONNECT": "0",
        }
        if not launch.tell_name:
            del arena["TACOCAT_ARENA_BOT"]
        if not sandboxed:
            arena["TACOCAT_ARENA_ADDRESS"] = launch.tcp_address
            env = {**os.environ, **dict(self.spec.env), **arena}
            if not launch.tell_name:
                env.pop("TACOCAT_ARENA_BOT", None)  # not the runner's own either
            return sandbox.exec_with_env(argv, env)
        socket_path = launch.socket_path
        if socket_path is None:  # Launch refuses it; checked again where it is relied on
            raise BotStartError(
                f"bot {self.spec.name!r}: a sandboxed bot needs its socket", bot=self.spec.name
            )
        bwrap = sandbox.bwrap_path()
        if bwrap is None:  # resolve_mode checked it at the start; bwrap has gone since
            raise BotStartError(
                f"bot {self.spec.name!r}: bubblewrap no longer works here; "
                "the bot is not started unconfined",
                bot=self.spec.name,
            )
        arena["TACOCAT_ARENA_ADDRESS"] = f"unix:{sandbox.SOCKET_IN_SANDBOX}"
        # A program named by its absolute path (a compiled bot built elsewhere) is mounted
        # read-only where it is, alone: the folder it lies in stays out of sight.
        program = Path(argv[0])
        extra = [program] if program.is_absolute() and program.is_file() else []
        if why := sandbox.unreachable_by_bot(launch.cwd, write=self.spec.writable_dir):
            raise BotStartError(f"bot {self.spec.name!r}: {why}", bot=self.spec.name)
        env = sandbox.bot_env(dict(self.spec.env), arena)
        if self._socket_link is None:
            with contextlib.suppress(OSError):  # else the socket's own path, as before
                self._socket_link = scratch.socket_link(socket_path)
        command = sandbox.bwrap_argv(
            [*sandbox.in_sandbox(launch.limits, cgroup), *sandbox.load_env_file(argv)],
            bwrap=bwrap,
            bot_dir=launch.cwd,
            writable_dir=self.spec.writable_dir,
            socket=self._socket_link or socket_path,
            hide=launch.hide,
            extra_code=extra,
            tmpfs_mib=launch.limits.memory_mib,
            env_fd=handover.add(sandbox.env_file(env), "env"),
        )
        return handover.seal(command)

    async def start(self) -> None:
        """Start the process (its output goes to the log file)."""
        self.cgroup = BotCgroup.create(self.name.replace("~", "-"), self.launch.limits)
        self._stopping = self._killed = self._unconnected = False
        self._started_at = time.perf_counter()
        with sandbox.Handover() as handover:
            try:
                command = self.command(self.cgroup, handover)
            except (sandbox.SandboxError, BotStartError) as error:
                if self.cgroup is not None:
                    await self.cgroup.remove()
                self._drop_socket_link()
                if isinstance(error, BotStartError):
                    raise
                raise BotStartError(
                    f"bot {self.spec.name!r}: {error}", bot=self.spec.name
                ) from None
            self.log.write(f"--- start #{self.starts + 1}: {self.argv()}\n".encode())
            sandboxed = self.launch.mode is SandboxMode.BWRAP
            try:
                self.process = await sandbox.spawn(
                    command,
                    handover,
                    cwd=None if sandboxed else self.launch.cwd,
                    stdin=None if self.launch.echo else asyncio.subprocess.DEVNULL,
                    stdout=None if self.launch.echo else asyncio.subprocess.PIPE,
                    stderr=None if self.launch.echo else asyncio.subprocess.STDOUT,
                )
            except OSError as error:
                if self.cgroup is not None:
                    await self.cgroup.remove()
                self._drop_socket_link()
                raise BotStartError(
                    f"bot {self.spec.name!r}: cannot run {self.spec.command!r}: {error}",
                    bot=self.spec.name,
                ) from None
        if self.launch.peer_check is not None:
            self.launch.peer_check.expect(self.name, self.process.pid)
        self.starts += 1
        if not self.launch.echo:
            self._pump = asyncio.create_task(self._copy_output(self.process))
        self._watch = asyncio.create_task(self._on_exit(self.process))

    async def _copy_output(self, process: asyncio.subprocess.Process) -> None:
        if process.stdout is None:  # started with echo: nothing to copy
            return
        while chunk := await process.stdout.read(65536):
            self.log.write(chunk)

    async def _on_exit(self, process: asyncio.subprocess.Process) -> None:
        code = await process.wait()
        self._kill_group(process)  # its children go with it
        if self._pump is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._pump), 2.0)
        how = describe_exit(code, sandboxed=self.launch.mode is SandboxMode.BWRAP)
        limit = ""
        if code != 0 and not self._stopping:
            limit = sandbox.limit_reason(self.launch.limits, self._tail_text(), self.cgroup)
        ended = f"{how}: {limit}" if limit else how
        self.exits.append(ended)
        if code != 0 and not (self._stopping and self._killed):
            self.crashes.append(ended)
        self.log.write(f"--- {ended}\n".encode())
        if self.cgroup is not None:
            await self.cgroup.remove()
        self._drop_socket_link()

    def _drop_socket_link(self) -> None:
        if self._socket_link is not None:
            scratch.drop_socket_link(self._socket_link)
            self._socket_link = None

    def last_exit(self) -> str:
        """How the last start ended ("" while it runs or if it never started)."""
        return self.exits[-1] if self.exits and not self.is_running else ""

    async def ended(self, within: float = 5.0) -> str:
        """How the process ended, once it has (waiting up to ``within`` s); "" if running."""
        if self._watch is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._watch), within)
        return self.last_exit()

    async def wait_connected(self, referee: Referee, timeout: float) -> None:
        """Wait for the bot's session; BotStartError if it exits or times out first."""
        if self.process is None:
            raise BotStartError(
                f"bot {self.spec.name!r}: wait_connected() before start()", bot=self.spec.name
            )
        self._unconnected = True
        connected = asyncio.ensure_future(referee.wait_for_session(self.name, timeout))
        exited = asyncio.ensure_future(self.process.wait())
        try:
            done, _ = await asyncio.wait({connected, exited}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (connected, exited):
                if not task.done():
                    task.cancel()
        if connected in done and connected.exception() is None:
            self._unconnected = False
            self.startup_s.append(time.perf_counter() - self._started_at)
            return
        if exited in done:
            why = f"{await self.ended(3.0) or 'exited'} before connecting"
        else:
            why = f"did not connect within {timeout:g} s"
        twin = " (its twin instance, B)" if self.name != self.spec.name else ""
        raise BotStartError(
            f"bot {self.spec.name!r}{twin} ({self.spec.command}) {why}; {self.printed()}. "
            f"Last lines of {self.log_path}:\n{self.tail()}",
            bot=self.spec.name,
        )

    async def ensure_running(self, referee: Referee, timeout: float, max_restarts: int) -> bool:
        """Restart the bot if it died (at most ``max_restarts`` times in the tournament);
        return False when it is dead and may not be restarted."""
        async with self._lock:
            if self.is_running and referee.live_session(self.name) is not None:
                return True
            restarts = self.starts - self.planned_starts
            if self.starts and restarts >= max_restarts:
                return False
            await self.stop()
            await self.start()
            await self.wait_connected(referee, timeout)
            return True

    async def pause(self) -> None:
        """Stop the process between games, on the runner's schedule: not a crash, and the
        next ``resume`` is no restart (twins: an instance never lives while its twin plays
        the deals it has seen)."""
        if self.is_running:
            await self.stop(grace=0.0)
            self.paused = True

    async def resume(self, referee: Referee, timeout: float) -> None:
        """Start the process the first time, or again after a pause, and wait for it to
        connect; one that died by itself is left to ``ensure_running`` (it counts that)."""
        if self.is_running or not (self.paused or self.starts == 0):
            return
        self.paused = False
        self.planned_starts += 1
        await self.start()
        await self.wait_connected(referee, timeout)

    async def has_exited(self, within: float) -> bool:
        """Whether the process is gone, waiting up to ``within`` seconds for it to go."""
        if self.process is None:
            return True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.process.wait(), within)
        return self.process.returncode is not None

    async def stop(self, grace: float = 3.0) -> None:
        """Stop the process: let it finish after SessionEnd (``grace`` seconds), then
        terminate, then kill; its whole process group (and cgroup, and sandbox) goes with it.

        A process whose session ``wait_connected`` was still waiting for (its start given up:
        the other bot of its game did not start) has been told nothing, since SessionEnd
        goes to sessions: it is terminated at once, as waiting would gain nothing (a ``run``
        whose other bot failed to start waited the whole grace for it)."""
        process = self.process
        if process is None:
            return
        if process.returncode is None:
            self._stopping = True
            if self._unconnected:
                grace = 0.0
            if grace > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(process.wait(), grace)
            if process.returncode is None:
                self._killed = True
                with contextlib.suppress(ProcessLookupError):
                    process.terminate()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(process.wait(), 2.0)
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        self._kill_group(process)
        if self._watch is not None:
            await asyncio.gather(self._watch, return_exceptions=True)

    @staticmethod
    def _kill_group(process: asyncio.subprocess.Process) -> None:
        sandbox.kill_group(process.pid)

    def _tail_text(self) -> str:
        try:
            with open(self.log_path, "rb") as handle:
                handle.seek(max(0, handle.seek(0, os.SEEK_END) - _TAIL_BYTES))
                return handle.read().decode(errors="replace")
        except OSError:
            return ""

    def printed(self) -> str:
        """What the bot itself printed in its last start, in a clause ("it printed nothing",
        "its last line: LINE"): the log's own lines (``--- start``, ``--- exited``) are the
        launcher's, and a bot that wrote nothing must not look as if it had."""
        text = self._tail_text()
        start = text.rfind("--- start #")
        lines = [
            line
            for line in (text[start:] if start >= 0 else text).splitlines()
            if line.strip() and not line.startswith("--- ")
        ]
        if not lines:
            return "it printed nothing"
        return f"its last line: {printable(lines[-1].strip())}"

    def tail(self) -> str:
        """The last lines of the bot's log."""
        lines = self._tail_text().splitlines()
        shown = ("  " + printable(line, 500) for line in lines[-_TAIL_LINES:])
        return "\n".join(shown) or "  (no output)"


def describe_exit(code: int | None, *, sandboxed: bool = False) -> str:
    """How a process ended, in words ("exited with code 3", "killed by signal 9 (SIGKILL)").

    bwrap reports a sandboxed process killed by signal N as exit code 128 + N, as shells do."""
    if code is None:
        return "still running"
    if code < 0 or (sandboxed and code > 128):
        number = -code if code < 0 else code - 128
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = "unknown signal"
        return f"killed by signal {number} ({name})"
    return f"exited with code {code}"


class ExternalBot:
    """A bot that connects by itself (``tacocat-arena serve``): nothing to start or stop."""

    def __init__(self, spec: BotSpec) -> None:
        self.spec = spec
        self.name = spec.name
        self.crashes: list[str] = []

    async def start(self) -> None:
        """Nothing to start: the bot connects from elsewhere."""

    def last_exit(self) -> str:
        """A remote bot has no process of ours to end."""
        return ""

    async def ended(self, within: float = 5.0) -> str:
        """A remote bot has no process of ours to end."""
        return ""

    async def wait_connected(self, referee: Referee, timeout: float) -> None:
        """Wait for the bot's session; BotStartError if it does not come."""
        try:
            await referee.wait_for_session(self.spec.name, timeout)
        except TimeoutError:
            raise BotStartError(
                f"bot {self.spec.name!r} did not connect within {timeout:g} s", bot=self.spec.name
            ) from None

    async def ensure_running(self, referee: Referee, timeout: float, max_restarts: int) -> bool:
        """Wait for the bot to be connected, within one reconnect window of ``timeout`` per
        absence (shared by all its games: ``Referee.wait_for_return``); False if it is gone."""
        return await referee.wait_for_return(self.spec.name, timeout) is not None

    async def has_exited(self, within: float) -> bool:
        """A remote bot has no process to lose: its losses are disconnects."""
        return False

    async def stop(self, grace: float = 3.0) -> None:
        """Nothing to stop."""
