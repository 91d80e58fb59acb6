"""``tacocat-arena check``: start a bot as ``run`` does and put it through every check.

The bot gets the same three environment variables as in a tournament, connects to a scripted
referee on loopback, and is taken through the handshake, every decision kind, every message
kind and the end of a session.  Each check passes, fails (with what was expected and what
came back) or is skipped (with why); after a failure that loses the bot's stream, the checks
left are reported as not run.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import enum
import secrets
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import grpc

from tacocat.v1 import arena_pb2 as pb
from tacocat.v1 import arena_pb2_grpc
from tacocat_arena.check.link import BotGone, BotLink, CheckServicer, Handshake
from tacocat_arena.check.scenarios import (
    CHECKS,
    ERROR_MARKER,
    Context,
    Skipped,
    decision_times,
)
from tacocat_arena.check.script import CheckFailed
from tacocat_arena.launch import folder
from tacocat_arena.launch.bots import BotProcess, BotStartError, Launch
from tacocat_arena.launch.sandbox import Limits, SandboxError, SandboxMode, admit_bot, resolve_mode
from tacocat_arena.launch.spec import BotSpec

#: How long one check may take before it is failed (a whole game is well under a second).
CHECK_TIMEOUT_S = 120.0
#: How long a bot may take to exit after SessionEnd.
EXIT_WITHIN_S = 5.0
_TAIL_LINES = 15


class Status(enum.Enum):
    """How one check came out."""

    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    NOT_RUN = "not run"


@dataclass(frozen=True)
class CheckResult:
    """One check's verdict: what the bot did, or what was expected and what came back."""

    name: str
    status: Status
    detail: str = ""
    expected: str = ""
    got: str = ""
    ms: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """The result as JSON-ready values (``status`` as its text)."""
        data = asdict(self)
        data["status"] = self.status.value
        data["ms"] = round(self.ms, 1)
        return data


@dataclass
class CheckReport:
    """Every check of one bot, in order."""

    command: str
    results: list[CheckResult] = field(default_factory=list)
    log_path: str = ""
    log_tail: str = ""
    #: The sandbox the bot ran in (resolved: bwrap or none) and its limits.
    sandbox: SandboxMode = SandboxMode.NONE
    limits: Limits = field(default_factory=Limits)
    #: What the organizer should know (bwrap missing under ``auto``), said once.
    notices: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when no check failed or went unrun (skipped ones are fine)."""
        return all(r.status in (Status.PASS, Status.SKIP) for r in self.results)

    def count(self, status: Status) -> int:
        """How many checks came out as ``status``."""
        return sum(r.status is status for r in self.results)

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-ready values."""
        return {
            "command": self.command,
            "passed": self.passed,
            "results": [r.to_json() for r in self.results],
            "log": self.log_path,
            "sandbox": str(self.sandbox),
        }


#: Every check's name, in the order they run (the handshake first, the session's end last).
CHECK_NAMES = (
    "handshake",
    *(name for name, _ in CHECKS),
    "decision-time",
    "session-end",
    "errors-logged",
)


class BotCheckError(RuntimeError):
    """The bot could not be started at all; the message says why."""


async def check_bot(
    command: str,
    *,
    name: str = "bot",
    allowance_ms: int = 2000,
    connect_timeout_s: float = 20.0,
    log_path: Path | None = None,
    cwd: Path | None = None,
    progress: Callable[[CheckResult], None] | None = None,
    on_start: Callable[[CheckReport], None] | None = None,
    sandbox: SandboxMode = SandboxMode.NONE,
    limits: Limits | None = None,
    env: tuple[tuple[str, str], ...] = (),
) -> CheckReport:
    """Start ``command`` (a command line or ``builtin:NAME``) and run every check on it.

    The bot starts as a tournament starts it, by the same launcher (``BotProcess``): its
    folder by ``launch.folder``'s rule (``cwd`` standing for the config's folder), the
    pre-flight look at its command, ``limits``, and with ``sandbox=BWRAP`` the bwrap sandbox
    with the referee through a Unix socket (``AUTO`` is resolved here; the report says
    which).  So what passes ``check`` starts in ``run``, and the arena's gate checks a
    submitted version in the sandbox it will play in."""
    spec = dataclasses.replace(BotSpec.checked(name, command), env=env)
    token = secrets.token_hex(16)
    report = CheckReport(command)
    try:
        mode = resolve_mode(sandbox, warn=report.notices.append)
        placement = folder.place(spec, cwd or Path.cwd())
        folder.preflight(spec, placement, mode)
    except (SandboxError, folder.FolderError) as error:
        raise BotCheckError(str(error)) from None
    report.sandbox = mode
    report.limits = limits or Limits()
    if on_start is not None:
        on_start(report)  # which sandbox and limits, before the first check

    def add(result: CheckResult) -> None:
        report.results.append(result)
        if progress is not None:
            progress(result)

    with contextlib.ExitStack() as stack:
        if log_path is None:
            logs = stack.enter_context(tempfile.TemporaryDirectory(prefix="tacocat-check-"))
            log_path = Path(logs) / f"{name}.log"
        report.log_path = str(log_path)
        servicer = CheckServicer(token)
        server = grpc.aio.server()
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
                identity=name,
                token=token,
                log_path=log_path,
                cwd=placement.folder,
                mode=mode,
                limits=report.limits,
                tcp_address=f"127.0.0.1:{port}",
                socket_path=socket_path,
                argv=placement.argv,
            ),
        )
        try:
            try:
                await bot.start()
            except BotStartError as error:
                raise BotCheckError(str(error)) from None
            await _run_checks(servicer, bot, allowance_ms, connect_timeout_s, log_path, add)
        finally:
            await bot.stop(grace=0.5)
            await server.stop(grace=0.5)
            report.log_tail = _tail(log_path)
    return report


async def _run_checks(
    servicer: CheckServicer,
    bot: BotProcess,
    allowance_ms: int,
    connect_timeout_s: float,
    log_path: Path,
    add: Callable[[CheckResult], None],
) -> None:
    process = bot.process
    assert process is not None, "started"
    exited: asyncio.Future[Any] = asyncio.ensure_future(process.wait())
    connected: asyncio.Future[Any] = servicer.connected
    try:
        done, _ = await asyncio.wait(
            {connected, exited},
            timeout=connect_timeout_s,
            return_when=asyncio.FIRST_COMPLETED,
        )
    finally:
        if not exited.done():
            exited.cancel()
    remaining = list(CHECK_NAMES[1:])
    if servicer.connected not in done:
        why = (
            f"exited with code {process.returncode} before its Hello"
            if process.returncode is not None
            else f"nothing within {connect_timeout_s:g} s"
        )
        add(CheckResult("handshake", Status.FAIL, expected="a connection and a Hello", got=why))
        _not_run(remaining, "the bot never connected", add)
        return
    handshake, link = servicer.connected.result()
    if link is None:
        add(_handshake_failure(handshake))
        _not_run(remaining, "the handshake failed", add)
        return
    hello = link.hello
    add(
        CheckResult(
            "handshake",
            Status.PASS,
            f"protocol {hello.protocol_version}, bot_name {hello.bot_name!r}, "
            f"client_info {hello.client_info!r}, max_concurrent_games "
            f"{hello.max_concurrent_games or 'any'}, accept_batches {hello.accept_batches}",
        )
    )
    ctx = Context(link, allowance_ms)
    ran_errors = False
    for index, (name, check) in enumerate(CHECKS):
        result = await _run_one(name, check, ctx, process)
        with contextlib.suppress(BotGone):
            await ctx.end_open_games()
        add(result)
        ran_errors |= name == "errors-carry-on" and result.status is Status.PASS
        if link.gone.is_set():
            rest = [n for n, _ in CHECKS[index + 1 :]]
            why = f"the bot's stream closed in {name}"
            if result.status is not Status.FAIL and rest:
                why = f"the bot's stream closed after {name}"
                # The bot left as this check's games ended (before the next check could
                # notice): the next check is the one it failed, whichever side won the race.
                await _settle(process)
                code = process.returncode
                add(
                    CheckResult(
                        rest.pop(0),
                        Status.FAIL,
                        expected="the bot to stay connected",
                        got=why
                        + (f" (its process exited with code {code})" if code is not None else ""),
                    )
                )
            _not_run(rest, why, add)
            add(CheckResult("decision-time", Status.NOT_RUN, "the bot's stream closed"))
            add(CheckResult("session-end", Status.NOT_RUN, "the bot's stream closed"))
            add(CheckResult("errors-logged", Status.NOT_RUN, "the bot's stream closed"))
            return
    try:
        add(CheckResult("decision-time", Status.PASS, decision_times(ctx)))
    except CheckFailed as failure:
        add(CheckResult("decision-time", Status.FAIL, expected=failure.expected, got=failure.got))
    add(await _session_end(servicer, link, process))
    await bot.ended(2.0)  # its last output copied into the log
    add(_errors_logged(log_path, ran_errors))


async def _run_one(
    name: str, check: Any, ctx: Context, process: asyncio.subprocess.Process
) -> CheckResult:
    started = asyncio.get_running_loop().time()

    def elapsed() -> float:
        return (asyncio.get_running_loop().time() - started) * 1000

    try:
        detail = await asyncio.wait_for(check(ctx), CHECK_TIMEOUT_S)
    except CheckFailed as failure:
        return CheckResult(
            name, Status.FAIL, expected=failure.expected, got=failure.got, ms=elapsed()
        )
    except Skipped as skipped:
        return CheckResult(name, Status.SKIP, str(skipped), ms=elapsed())
    except BotGone:
        await _settle(process)
        code = process.returncode
        got = "the bot's stream closed" + (
            f" (its process exited with code {code})" if code is not None else ""
        )
        return CheckResult(name, Status.FAIL, expected="the bot to stay connected", got=got)
    except TimeoutError:
        return CheckResult(
            name, Status.FAIL, expected=f"the check done within {CHECK_TIMEOUT_S:g} s", got="not"
        )
    except Exception as error:  # a fault of the check itself: say so, never blame the bot
        return CheckResult(
            name,
            Status.FAIL,
            expected="the check to run",
            got=f"internal error of tacocat-arena check: {type(error).__name__}: {error}",
        )
    return CheckResult(name, Status.PASS, detail, ms=elapsed())


async def _session_end(
    servicer: CheckServicer, link: BotLink, process: asyncio.subprocess.Process
) -> CheckResult:
    """SessionEnd{TOURNAMENT_OVER}, then status OK: the bot should exit, with code 0."""
    try:
        await link.send(
            pb.RefereeMessage(
                session_end=pb.SessionEnd(
                    reason=pb.SESSION_END_REASON_TOURNAMENT_OVER,
                    message="tacocat-arena check is done",
                )
            )
        )
    except BotGone:
        return CheckResult(
            "session-end", Status.FAIL, expected="the stream open for SessionEnd", got="closed"
        )
    servicer.finish()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), EXIT_WITHIN_S)
    code = process.returncode
    expected = f"the bot to exit with code 0 within {EXIT_WITHIN_S:g} s of SessionEnd"
    if code is None:
        return CheckResult("session-end", Status.FAIL, expected=expected, got="still running")
    if code != 0:
        return CheckResult("session-end", Status.FAIL, expected=expected, got=f"exit code {code}")
    return CheckResult("session-end", Status.PASS, "exited with code 0 after TOURNAMENT_OVER")


def _errors_logged(log_path: Path, ran: bool) -> CheckResult:
    """docs/protocol.md: log every Error with its code and message."""
    if not ran:
        return CheckResult("errors-logged", Status.NOT_RUN, "errors-carry-on did not pass")
    text = log_path.read_text(errors="replace") if log_path.exists() else ""
    found = text.count(ERROR_MARKER)
    if found:
        return CheckResult("errors-logged", Status.PASS, f"{found} of 3 Errors found in its output")
    return CheckResult(
        "errors-logged",
        Status.FAIL,
        expected="the Errors' messages in the bot's output (docs/protocol.md: log every Error)",
        got="none of the 3 in its stdout or stderr",
    )


def _handshake_failure(handshake: Handshake) -> CheckResult:
    hello = handshake.hello
    got = handshake.problem
    if hello is not None:
        got += f" (Hello: protocol_version {hello.protocol_version}, bot_name {hello.bot_name!r})"
    return CheckResult(
        "handshake", Status.FAIL, expected="Hello{protocol_version=1, bot_name, token}", got=got
    )


def _not_run(names: list[str], why: str, add: Callable[[CheckResult], None]) -> None:
    for name in names:
        add(CheckResult(name, Status.NOT_RUN, why))


async def _settle(process: asyncio.subprocess.Process) -> None:
    """Give a bot whose stream closed a moment to exit, to report its exit code."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(process.wait(), 2.0)


def _tail(log_path: Path) -> str:
    try:
        lines = log_path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-_TAIL_LINES:])
