"""Bot processes: start each bot command, wait for it to connect, restart it if it crashes.

Each bot runs as a subprocess with TACOCAT_ARENA_ADDRESS, TACOCAT_ARENA_TOKEN and
TACOCAT_ARENA_BOT set, its working directory the config file's folder, its stdout and stderr
appended to ``logs/NAME.log`` in the output folder.  When it fails to start or connect, the
error quotes the end of that log, which is where the reason almost always is.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
from pathlib import Path

from tacocat_arena.referee import Referee
from tacocat_arena.tournament.config import BotSpec

_TAIL_LINES = 15


class BotStartError(RuntimeError):
    """A bot could not be started or did not connect; the message says why."""


def check_command(spec: BotSpec, cwd: Path) -> None:
    """BotStartError unless ``spec``'s program can be found (on PATH or in ``cwd``).

    Called before anything is written, so that a typo fails with nothing left behind.
    """
    argv = spec.argv()
    if not argv or argv[0] in ("python", "python3"):
        return  # run with this Python (BotProcess.argv)
    if shutil.which(argv[0], path=os.environ.get("PATH")) is None and not (cwd / argv[0]).exists():
        raise BotStartError(
            f"bot {spec.name!r}: command not found: {argv[0]!r} (from {spec.command!r}); "
            "check the command and your PATH"
        )


class BotProcess:
    """One bot's process, across restarts."""

    def __init__(
        self,
        spec: BotSpec,
        *,
        token: str,
        address: str,
        log_dir: Path,
        cwd: Path,
        echo: bool = False,
    ) -> None:
        self.spec = spec
        #: Debug mode: the bot shares this terminal (stdin too, for breakpoints), no log.
        self.echo = echo
        self.token = token
        self.address = address
        self.log_path = log_dir / f"{spec.name}.log"
        self.cwd = cwd
        self.process: asyncio.subprocess.Process | None = None
        self.starts = 0
        self._lock = asyncio.Lock()

    @property
    def is_running(self) -> bool:
        """True while the process is alive."""
        return self.process is not None and self.process.returncode is None

    def argv(self) -> list[str]:
        """The command line; a bare ``python``/``python3`` means this Python (venv-proof)."""
        argv = self.spec.argv()
        if argv and argv[0] in ("python", "python3"):
            argv[0] = sys.executable
        return argv

    async def start(self) -> None:
        """Start the process (its output goes to the log file)."""
        argv = self.argv()
        check_command(self.spec, self.cwd)
        env = dict(
            os.environ,
            TACOCAT_ARENA_ADDRESS=self.address,
            TACOCAT_ARENA_TOKEN=self.token,
            TACOCAT_ARENA_BOT=self.spec.name,
            PYTHONUNBUFFERED="1",
        )
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            log.write(f"--- start #{self.starts + 1}: {argv}\n".encode())
            log.flush()
            try:
                self.process = await asyncio.create_subprocess_exec(
                    *argv,
                    cwd=self.cwd,
                    env=env,
                    stdin=None if self.echo else asyncio.subprocess.DEVNULL,
                    stdout=None if self.echo else log,
                    stderr=None if self.echo else asyncio.subprocess.STDOUT,
                    start_new_session=True,
                )
            except OSError as error:
                raise BotStartError(
                    f"bot {self.spec.name!r}: cannot run {self.spec.command!r}: {error}"
                ) from None
        self.starts += 1

    async def wait_connected(self, referee: Referee, timeout: float) -> None:
        """Wait for the bot's session; BotStartError if it exits or times out first."""
        assert self.process is not None, "start() first"
        connected = asyncio.ensure_future(referee.wait_for_session(self.spec.name, timeout))
        exited = asyncio.ensure_future(self.process.wait())
        try:
            done, _ = await asyncio.wait({connected, exited}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (connected, exited):
                if not task.done():
                    task.cancel()
        if connected in done and connected.exception() is None:
            return
        if exited in done:
            why = f"exited with code {self.process.returncode} before connecting"
        else:
            why = f"did not connect within {timeout:g} s"
        raise BotStartError(
            f"bot {self.spec.name!r} ({self.spec.command}) {why}. Last lines of "
            f"{self.log_path}:\n{self.tail()}"
        )

    async def ensure_running(self, referee: Referee, timeout: float, max_restarts: int) -> bool:
        """Restart the bot if it died (at most ``max_restarts`` times in the tournament);
        return False when it is dead and may not be restarted."""
        async with self._lock:
            if self.is_running and referee.live_session(self.spec.name) is not None:
                return True
            if self.starts > max_restarts:
                return False
            await self.stop()
            await self.start()
            await self.wait_connected(referee, timeout)
            return True

    async def has_exited(self, within: float) -> bool:
        """Whether the process is gone, waiting up to ``within`` seconds for it to go."""
        if self.process is None:
            return True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.process.wait(), within)
        return self.process.returncode is not None

    async def stop(self, grace: float = 3.0) -> None:
        """Stop the process: let it finish after SessionEnd, then terminate, then kill."""
        process = self.process
        if process is None or process.returncode is not None:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), grace)
            return
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), 2.0)
            return
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()

    def tail(self) -> str:
        """The last lines of the bot's log."""
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "  (no output)"
        return "\n".join("  " + line for line in lines[-_TAIL_LINES:]) or "  (no output)"


class ExternalBot:
    """A bot that connects by itself (``tacocat-arena serve``): nothing to start or stop."""

    def __init__(self, spec: BotSpec) -> None:
        self.spec = spec

    async def start(self) -> None:
        """Nothing to start: the bot connects from elsewhere."""

    async def wait_connected(self, referee: Referee, timeout: float) -> None:
        """Wait for the bot's session; BotStartError if it does not come."""
        try:
            await referee.wait_for_session(self.spec.name, timeout)
        except TimeoutError:
            raise BotStartError(
                f"bot {self.spec.name!r} did not connect within {timeout:g} s"
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
