"""Building a package: its ``build`` command, run once, confined like the bot will be.

The build runs in the bot's own sandbox (bwrap where it works) with the network off, its
package folder writable (the build's output goes there: ``build/tacocat_cpp_bot``) and
nothing else of the arena's, under resource limits of its own (a compiler needs more than a
bot) and a time limit, after which its whole process group is killed.  Its output is kept
(the end of it, ``BUILD_LOG_BYTES``) for the version's page and ``submit --wait``.

The package's ``[env]`` is the build's own process's environment, never the launcher's (as
for a bot: ``launch.sandbox``).  Under a root runner the build runs as uid SANDBOX_UID, so its
folder is lent to that uid for the build and taken back after (``sandbox.lend_folder``).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tacocat_arena.launch import sandbox, scratch
from tacocat_arena.launch.package import BotPackage
from tacocat_arena.launch.sandbox import Limits, SandboxMode

#: How much of a build's output is kept (its end, where the error is).
BUILD_LOG_BYTES = 64 * 1024


@dataclass(frozen=True)
class BuildSettings:
    """How a package's build runs."""

    #: Seconds a build may take (the C++ example takes about 45 s of CPU).
    timeout_s: float = 600.0
    #: The build's limits: a compiler needs more memory and processes than a bot.
    limits: Limits = Limits(memory_mib=4096, processes=256, open_files=1024)


@dataclass(frozen=True)
class BuildResult:
    """How a build went: ``ok``, why not (``reason``), its output's end (``log``)."""

    ok: bool
    reason: str
    log: str
    seconds: float


async def build_package(
    package: BotPackage, mode: SandboxMode, settings: BuildSettings = BuildSettings()
) -> BuildResult:
    """Run ``package.build`` (if any) from its folder, confined by ``mode`` (BWRAP or NONE)."""
    argv = package.build_argv()
    if argv is None:
        return BuildResult(True, "nothing to build", "", 0.0)
    if argv[0] in ("python", "python3"):
        argv[0] = sys.executable  # as for the bot: the arena's Python, with the SDK
    started = time.monotonic()
    with scratch.private_folder("build") as folder, sandbox.Handover() as fds:
        log_path = folder / "build.log"
        # Under a root runner the build runs as SANDBOX_UID: the package folder is lent to it
        # (docs/submissions.md: the build writes its output there) and given back after.
        lent = sandbox.lend_folder(package.root) if mode is SandboxMode.BWRAP else None
        try:
            command, cwd = _command(package, argv, mode, folder, fds)
            prefix = sandbox.launcher(settings.limits, None)
            code = await run_bounded(
                [*prefix, *command], log_path, settings.timeout_s, cwd=cwd, handover=fds
            )
        except OSError as error:
            return BuildResult(False, f"build: cannot run {package.build!r}: {error}", "", 0)
        finally:
            sandbox.reclaim_folder(lent)
        text = _tail(log_path)
    seconds = time.monotonic() - started
    if code is None:
        limit = f"build: over its time limit of {settings.timeout_s:g} s"
        return BuildResult(False, limit, text, seconds)
    if code != 0:
        how = "exited with code" if code > 0 else "killed by signal"
        return BuildResult(False, f"build: {package.build!r} {how} {abs(code)}", text, seconds)
    return BuildResult(True, f"built in {seconds:.1f} s", text, seconds)


def _command(
    package: BotPackage, argv: list[str], mode: SandboxMode, folder: Path, fds: sandbox.Handover
) -> tuple[list[str], Path | None]:
    """The build's command line after the launcher's helpers, and its working folder: the
    package's variables handed to the build's own process only, as a bot's are."""
    if mode is not SandboxMode.BWRAP:
        env = {**os.environ, **dict(package.env)}
        return sandbox.exec_with_env(argv, env), package.root
    bwrap = sandbox.bwrap_path()
    if bwrap is None:
        raise sandbox.SandboxError("sandbox bwrap asked for, but bwrap does not work")
    socket = folder / "none.sock"  # the sandbox's referee socket: unused here
    socket.touch()
    env = {**sandbox.BASE_ENV, **dict(package.env)}
    command = sandbox.bwrap_argv(
        sandbox.load_env_file(argv),
        bwrap=bwrap,
        bot_dir=package.root,
        writable_dir=True,
        socket=socket,
        hide=(),
        env_fd=fds.add(sandbox.env_file(env), "env"),
    )
    return fds.seal(command), None


async def run_bounded(
    argv: list[str],
    log_path: Path,
    timeout_s: float,
    *,
    cwd: Path | None = None,
    handover: sandbox.Handover | None = None,
    own_env: dict[str, str] | None = None,
) -> int | None:
    """Run ``argv`` (a launcher's command line, with ``sandbox.LAUNCHER_ENV``) in a session
    of its own, its output to ``log_path``, for at most ``timeout_s``; then kill its whole
    process group (whatever it left running).  Its exit code, or None past the limit;
    OSError if it cannot start.  ``own_env``: a process of the arena's own (``spawn``)."""
    with open(log_path, "wb") as log:
        process = await sandbox.spawn(
            argv,
            handover,
            own_env=own_env,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=log,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            code: int | None = await asyncio.wait_for(process.wait(), timeout_s)
        except TimeoutError:
            code = None
        finally:
            sandbox.kill_group(process.pid)
            await process.wait()
    return code


def _tail(path: Path) -> str:
    with open(path, "rb") as handle:
        handle.seek(max(0, handle.seek(0, os.SEEK_END) - BUILD_LOG_BYTES))
        return handle.read().decode(errors="replace")
