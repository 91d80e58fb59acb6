"""One bot started as ``run`` starts it, connected to the check's scripted referee.

``check`` and ``replay --bot`` both start a bot this way: the spec's folder by
``launch.folder``'s rule, the pre-flight look at its command, the sandbox (``AUTO`` resolved
here) and limits, the one launcher (``BotProcess``), a loopback server (and, under bwrap, a
Unix socket, the bot's only way out) serving ``CheckServicer``.  What differs is what they
send once it has connected, so this module stops at the handshake.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import tempfile
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tacocat.v1 import arena_pb2_grpc
from tacocat_arena.check.link import CHECK_LOOK, BotLink, CheckServicer, Handshake, Look
from tacocat_arena.launch import folder, scratch
from tacocat_arena.launch.bots import BotProcess, BotStartError, Launch, new_token
from tacocat_arena.launch.sandbox import (
    Limits,
    SandboxError,
    SandboxMode,
    admit_bot,
    resolve_mode,
    unreachable_by_bot,
)
from tacocat_arena.launch.spec import BotSpec
from tacocat_arena.referee import grpc_server, stop_server


class LaunchError(RuntimeError):
    """The bot could not be started at all; the message says why."""


@dataclass
class Launched:
    """A started bot and the scripted referee it connects to."""

    servicer: CheckServicer
    bot: BotProcess
    mode: SandboxMode
    limits: Limits
    log_path: Path
    #: The last lines of the bot's output, read once it has stopped (so its last output is in).
    final_tail: str = ""

    @property
    def process(self) -> asyncio.subprocess.Process:
        """The bot's process (started)."""
        process = self.bot.process
        if process is None:
            raise RuntimeError("the bot has not been started")
        return process

    async def connection(self, timeout_s: float) -> tuple[Handshake, BotLink | None] | str:
        """The handshake (and the link, when it passed), or why none came: the process
        exited first, or nothing within ``timeout_s``."""
        process = self.process
        exited: asyncio.Future[Any] = asyncio.ensure_future(process.wait())
        connected: asyncio.Future[Any] = self.servicer.connected
        try:
            done, _ = await asyncio.wait(
                {connected, exited}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            if not exited.done():
                exited.cancel()
        if connected not in done:
            if process.returncode is not None:
                return f"exited with code {process.returncode} before its Hello"
            return f"nothing within {timeout_s:g} s"
        result: tuple[Handshake, BotLink | None] = connected.result()
        return result


@contextlib.asynccontextmanager
async def launched_bot(
    spec: BotSpec,
    *,
    cwd: Path | None = None,
    sandbox: SandboxMode = SandboxMode.NONE,
    limits: Limits | None = None,
    log_path: Path | None = None,
    notices: Callable[[str], None] | None = None,
    on_placed: Callable[[SandboxMode, Limits, Path], None] | None = None,
    identity: str | None = None,
    look: Look = CHECK_LOOK,
    tell_name: bool = True,
) -> AsyncIterator[Launched]:
    """Start ``spec``'s bot as a tournament would, with a scripted referee to connect to;
    stop both on exit.  ``on_placed(mode, limits, log_path)`` is called before the bot
    starts (a report can say which sandbox); LaunchError if it cannot start.  ``identity``
    is the name it connects as (the spec's by default; the gate gives a version's, as its
    games do), told to it unless not ``tell_name`` (``check`` without ``--name``: the bot
    then names itself), and ``look`` what the referee shows of itself (``link.Look``)."""
    token = new_token()
    say = notices or (lambda _: None)
    try:
        mode = resolve_mode(sandbox, warn=say)
        placement = folder.place(spec, cwd or Path.cwd())
    except SandboxError as error:
        raise LaunchError(str(error)) from None
    limits = limits or Limits()
    with contextlib.ExitStack() as stack:
        placement = _readable(spec, placement, mode, stack, say, named=tell_name)
        try:
            folder.preflight(spec, placement, mode)
        except folder.FolderError as error:
            raise LaunchError(str(error)) from None
        if log_path is None:
            logs = stack.enter_context(tempfile.TemporaryDirectory(prefix="tacocat-check-"))
            log_path = Path(logs) / f"{spec.name}.log"
        if on_placed is not None:
            on_placed(mode, limits, log_path)
        servicer = CheckServicer(token, look=look)
        server = grpc_server()
        arena_pb2_grpc.add_ArenaServicer_to_server(servicer, server)
        port = server.add_insecure_port("127.0.0.1:0")
        socket_path = None
        if mode is SandboxMode.BWRAP:
            socket_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="tacocat-"))
            socket_path = Path(socket_dir) / "check.sock"
            server.add_insecure_port(f"unix:{socket_path}")
        await server.start()
        if socket_path is not None:
            admit_bot(socket_path)
        bot = BotProcess(
            spec,
            Launch(
                identity=identity or spec.name,
                token=token,
                log_path=log_path,
                cwd=placement.folder,
                mode=mode,
                limits=limits,
                tcp_address=f"127.0.0.1:{port}",
                socket_path=socket_path,
                argv=placement.argv,
                tell_name=tell_name,
            ),
        )
        launched: Launched | None = None
        try:
            try:
                await bot.start()
            except BotStartError as error:
                raise LaunchError(str(error)) from None
            launched = Launched(servicer, bot, mode, limits, log_path)
            yield launched
        finally:
            await bot.stop(grace=0.5)
            await stop_server(server, 0.5)
            if launched is not None:
                launched.final_tail = log_tail(log_path)


def _readable(
    spec: BotSpec,
    placement: folder.Placement,
    mode: SandboxMode,
    stack: contextlib.ExitStack,
    say: Callable[[str], None],
    *,
    named: bool,
) -> folder.Placement:
    """``placement``, or for a root runner's bot whose folder its uid cannot read, a private
    copy it can (``folder.readable_copy``, as ``run`` makes, in a scratch folder of this
    check's, removed with it), said once with its size and hash."""
    if mode is not SandboxMode.BWRAP or spec.writable_dir:
        return placement
    if unreachable_by_bot(placement.folder, write=False) is None:
        return placement  # nothing to copy: no scratch folder either
    into = stack.enter_context(scratch.private_folder("check"))
    try:
        placement, snapshot = folder.readable_copy(spec, placement, mode, into / "snapshots")
    except OSError as error:
        raise LaunchError(f"bot {spec.name!r}: cannot copy its folder: {error}") from None
    if snapshot is not None:
        say(snapshot.describe(spec.name if named else None))
    return placement


def log_tail(log_path: Path, lines: int = 15) -> str:
    """The last ``lines`` lines of the bot's output ("" when there is none), and before
    them its first error line when the tail lost it: a Node program that cannot find a
    module prints ``Error: Cannot find module '@grpc/grpc-js'`` and then a stack of twenty
    lines, so the tail alone showed only the stack, never what was wrong (issue 37)."""
    try:
        text = log_path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    tail = text[-lines:]
    head = text[: len(text) - len(tail)]
    first = next((line for line in head if _ERROR_LINE.match(line)), None)
    if first is None:
        return "\n".join(tail)
    return "\n".join([first.strip(), "...", *tail])


#: A line that states an error: ``Error: ...``, ``ModuleNotFoundError: ...``, ``error: ...``,
#: ``Fatal ...``, ``panic: ...``, C++'s ``terminate called ...``.
_ERROR_LINE = re.compile(
    r"^\s*(?:[\w.]*(?:Error|Exception)\b|error\b|fatal\b|panic\b|terminate called)",
    re.IGNORECASE,
)
