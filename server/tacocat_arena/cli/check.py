"""The ``check`` command's printing: a line per check as it finishes, then a summary."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import click

from tacocat_arena.check.runner import (
    BotCheckError,
    CheckReport,
    CheckResult,
    Status,
    check_bot,
)
from tacocat_arena.launch.sandbox import SandboxMode, describe_limits
from tacocat_arena.launch.spec import BotSpec
from tacocat_arena.referee.settings import ClockSettings
from tacocat_arena.tournament.config import ConfigError

_MARK = {Status.PASS: "PASS", Status.FAIL: "FAIL", Status.SKIP: "skip", Status.NOT_RUN: "----"}
_COLOUR = {Status.PASS: "green", Status.FAIL: "red", Status.SKIP: "yellow", Status.NOT_RUN: None}


def _print(result: CheckResult) -> None:
    mark = click.style(_MARK[result.status], fg=_COLOUR[result.status], bold=True)
    line = f"{mark}  {result.name:<26}"
    if result.status is Status.FAIL:
        click.echo(f"{line}expected {result.expected}")
        click.echo(f"{'':32}got {result.got}")
    else:
        click.echo(f"{line}{result.detail}")


def check_command(
    command: str,
    *,
    as_json: bool,
    move_timeout_s: float,
    log: Path | None,
    name: str | None,
    sandbox: SandboxMode = SandboxMode.AUTO,
) -> None:
    """Run the checks on ``command``; exit 0 only when every check passed (or was skipped)."""
    clock = ClockSettings.from_seconds(move_timeout_s)

    def started(report: CheckReport) -> None:
        if as_json:
            return
        for notice in report.notices:
            click.echo(f"warning: {notice}", err=True)
        click.echo(
            f"checking {command!r} (decision allowance {clock.decision_ms} ms) in sandbox "
            f"{report.sandbox}, as a tournament runs it; limits: "
            f"{describe_limits(report.limits, report.sandbox)}"
        )

    try:
        report = asyncio.run(
            check_bot(
                BotSpec.checked(name or "bot", command),
                clock,
                tell_name=name is not None,  # without --name, the bot names itself
                log_path=log,
                progress=None if as_json else _print,
                sandbox=sandbox,
                on_start=started,
            )
        )
    except (BotCheckError, ConfigError) as error:
        raise click.ClickException(str(error)) from None
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        failed, skipped = report.count(Status.FAIL), report.count(Status.SKIP)
        not_run = report.count(Status.NOT_RUN)
        click.echo(
            (f"check of bot {report.bot_name!r}: " if report.bot_name else "check: ")
            + f"{report.count(Status.PASS)} of {len(report.results)} checks passed"
            + (f", {failed} failed" if failed else "")
            + (f", {not_run} not run" if not_run else "")
            + (f", {skipped} skipped" if skipped else "")
        )
        if not report.passed and report.log_tail:
            click.echo("last lines of the bot's output:")
            for line in report.log_tail.splitlines():
                click.echo(f"  {line}")
        if log is not None:
            click.echo(f"the bot's output: {log}")
    if not report.passed:
        raise SystemExit(1)
