"""The gate: a bot package built, then started and put through every check, as a verdict.

The arena's gate (``arena.hosted``: a submitted version goes on the ladder or is rejected)
and the grader's conformance item (``grade.grader``: the tiers are played or score 0) ask the
same question of a package, so they ask it here, once: build it in its sandbox
(``launch.build``), start it as its games will (``BotPackage.spec``: its folder and its
variables, ``sandbox`` and ``limits``) and run ``check_bot`` on it under the games' clock;
the first step that fails is the verdict, worded once for both.

The clock is the games' ``ClockSettings`` as it is (its milliseconds to the check, "no limit"
kept as no limit), never a second conversion from seconds.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path

from tacocat_arena.check.link import CHECK_LOOK, Look
from tacocat_arena.check.runner import (
    BotCheckError,
    CheckReport,
    CheckResult,
    Status,
    check_bot,
)
from tacocat_arena.launch.build import BuildSettings, build_package
from tacocat_arena.launch.package import BotPackage
from tacocat_arena.launch.sandbox import Limits, SandboxMode
from tacocat_arena.launch.spec import ConfigError
from tacocat_arena.referee.settings import ClockSettings

#: The most of a build's or a bot's last output a verdict quotes (characters).
OUTPUT_CHARS = 2000


@dataclass(frozen=True)
class GateResult:
    """A gate's verdict: what stopped the bot (``step``; None: it passed), why in one line
    (``reason``, for its owner), why in words a stranger may read (``public``: no output of
    the bot's), the gate's whole log (the build, every check's line, the bot's last output)
    and the last output of the build or the bot that failed (``output``, at most
    ``OUTPUT_CHARS``)."""

    step: GateStep | None
    reason: str
    public: str
    log: str
    output: str = ""
    report: CheckReport | None = None

    @property
    def passed(self) -> bool:
        return self.step is None

    def explained(self) -> str:
        """The reason and, under it, the output that shows it (a grade's conformance item)."""
        if not self.output:
            return self.reason
        whose = "build" if self.step is GateStep.BUILD else "bot"
        return f"{self.reason}\nthe {whose}'s last output:\n{self.output}"


class GateStep(enum.Enum):
    """The step of a gate that failed."""

    BUILD = "build"
    START = "start"
    CHECK = "check"


async def gate(
    package: BotPackage,
    clock: ClockSettings,
    sandbox: SandboxMode,
    log: Path,
    *,
    name: str = "bot",
    identity: str | None = None,
    look: Look = CHECK_LOOK,
    limits: Limits | None = None,
    build: BuildSettings | None = None,
) -> GateResult:
    """Build ``package``, start it as ``name`` (connecting as ``identity``: a version's
    ladder name) and check it with ``clock``'s decision allowance, the bot's output to
    ``log``.  Whatever the bot or its package does, a verdict comes back; only our own faults
    (a sandbox that cannot run at all, a folder we cannot write) raise."""
    built = await build_package(package, sandbox, build or BuildSettings())
    lines = [f"build: {built.reason}"]
    if built.log:
        lines.append(built.log.rstrip())
    if not built.ok:
        output = built.log.strip()[-OUTPUT_CHARS:]
        return GateResult(GateStep.BUILD, built.reason, "build failed", "\n".join(lines), output)
    try:
        report = await check_bot(
            package.spec(name),
            clock,
            identity=identity,
            look=look,
            log_path=log,
            sandbox=sandbox,
            limits=limits,
        )
    except (BotCheckError, ConfigError) as error:
        reason = f"the bot did not start: {error}"
        lines.append(reason)
        return GateResult(GateStep.START, reason, "the gate could not run it", "\n".join(lines))
    lines.append(f"check ({report.sandbox}):")
    lines += [_line(result) for result in report.results]
    if report.passed:
        return GateResult(None, "", "", "\n".join(lines), report=report)
    if report.log_tail:
        lines += ["the bot's last output:", report.log_tail]
    failed = [r for r in report.results if r.status is Status.FAIL]
    first = failed[0] if failed else report.results[-1]
    public = f"check {first.name!r} failed"
    return GateResult(
        GateStep.CHECK,
        f"{public}: expected {first.expected}; got {first.got}",
        public,
        "\n".join(lines),
        report.log_tail.strip()[-OUTPUT_CHARS:],
        report,
    )


def _line(result: CheckResult) -> str:
    """One check's line in the gate's log."""
    line = f"  {result.status.value.upper():<8}{result.name}"
    if result.status is Status.FAIL:
        return line + f": expected {result.expected}; got {result.got}"
    return line + (f": {result.detail}" if result.detail else "")
