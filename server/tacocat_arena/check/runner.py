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
import enum
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tacocat.v1 import arena_pb2 as pb
from tacocat_arena.check.launched import Launched, LaunchError, launched_bot
from tacocat_arena.check.link import CHECK_LOOK, BotGone, BotLink, CheckServicer, Handshake, Look
from tacocat_arena.check.scenarios import (
    CHECKS,
    ERROR_MARKER,
    Context,
    Skipped,
    decision_times,
)
from tacocat_arena.check.script import CheckFailed
from tacocat_arena.launch.sandbox import Limits, SandboxMode
from tacocat_arena.launch.spec import BotSpec
from tacocat_arena.referee.settings import ClockSettings

#: How long one check may take before it is failed (a whole game is well under a second).
CHECK_TIMEOUT_S = 120.0
#: How long a bot may take to exit after SessionEnd.
EXIT_WITHIN_S = 5.0


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
    #: The name the bot gave in its Hello ("" until one came).
    bot_name: str = ""
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
            "bot_name": self.bot_name,
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
    spec: BotSpec,
    clock: ClockSettings,
    *,
    tell_name: bool = True,
    connect_timeout_s: float = 20.0,
    log_path: Path | None = None,
    cwd: Path | None = None,
    progress: Callable[[CheckResult], None] | None = None,
    on_start: Callable[[CheckReport], None] | None = None,
    sandbox: SandboxMode = SandboxMode.NONE,
    limits: Limits | None = None,
    identity: str | None = None,
    look: Look = CHECK_LOOK,
) -> CheckReport:
    """Start ``spec``'s bot (``BotSpec.checked``, or ``BotPackage.spec``) and run every check
    on it, each decision allowed ``clock.decision_ms`` (0: no limit, as in a game with no
    clock: the check then waits ``script.NO_LIMIT_WAIT_S`` for an answer and judges no
    decision's time).

    The bot starts as a tournament starts it, by the same launcher (``BotProcess``): its
    folder by ``launch.folder``'s rule (``cwd`` standing for the config's folder), the
    pre-flight look at its command, ``limits``, and with ``sandbox=BWRAP`` the bwrap sandbox
    with the referee through a Unix socket (``AUTO`` is resolved here; the report says
    which).  So what passes ``check`` starts in ``run``, and the arena's gate checks a
    submitted version in the sandbox it will play in, under the name (``identity``) and
    with the labels and clock (``look``) of its games.  With ``tell_name`` false (``check``
    without ``--name``) the bot is told no name, and names itself in its Hello
    (``CheckReport.bot_name``)."""
    report = CheckReport(spec.command)

    def placed(mode: SandboxMode, used: Limits, log: Path) -> None:
        report.sandbox, report.limits, report.log_path = mode, used, str(log)
        if on_start is not None:
            on_start(report)  # which sandbox and limits, before the first check

    def add(result: CheckResult) -> None:
        report.results.append(result)
        if progress is not None:
            progress(result)

    try:
        async with launched_bot(
            spec,
            cwd=cwd,
            sandbox=sandbox,
            limits=limits,
            log_path=log_path,
            notices=report.notices.append,
            on_placed=placed,
            identity=identity,
            look=look,
            tell_name=tell_name or identity is not None,
        ) as launched:
            await _run_checks(launched, clock.decision_ms, connect_timeout_s, add, report)
    except LaunchError as error:
        raise BotCheckError(str(error)) from None
    report.log_tail = launched.final_tail
    return report


async def _run_checks(
    launched: Launched,
    allowance_ms: int,
    connect_timeout_s: float,
    add: Callable[[CheckResult], None],
    report: CheckReport,
) -> None:
    servicer, bot, log_path = launched.servicer, launched.bot, launched.log_path
    process = launched.process
    connection = await launched.connection(connect_timeout_s)
    remaining = list(CHECK_NAMES[1:])
    if isinstance(connection, str):
        if not bot.launch.tell_name and process.returncode is not None:
            # A bot that insists on TACOCAT_ARENA_BOT: the one variable a tournament sets and
            # check does not by default (docs/protocol.md: default it when unset).
            connection += (
                " (check told it no name: TACOCAT_ARENA_BOT was unset; a bot should name "
                "itself then, or give --name NAME to tell it one as a tournament does)"
            )
        add(
            CheckResult(
                "handshake", Status.FAIL, expected="a connection and a Hello", got=connection
            )
        )
        _not_run(remaining, "the bot never connected", add)
        return
    handshake, link = connection
    if link is None:
        add(_handshake_failure(handshake))
        _not_run(remaining, "the handshake failed", add)
        return
    hello = link.hello
    report.bot_name = hello.bot_name
    add(
        CheckResult(
            "handshake",
            Status.PASS,
            f"protocol {hello.protocol_version}, bot_name {hello.bot_name!r}, "
            f"client_info {hello.client_info!r}, max_concurrent_games "
            f"{hello.max_concurrent_games or 'any'}, accept_batches {hello.accept_batches}",
        )
    )
    ctx = Context(link, allowance_ms, launched.servicer.look)
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
