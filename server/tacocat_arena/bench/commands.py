"""Click commands of ``tacocat-arena bench load`` and ``bench soak`` (registered by cli.py);
the measuring is in ``bench.load``."""

from __future__ import annotations

import asyncio
import os

import click


def _levels(text: str) -> list[int]:
    try:
        levels = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        levels = []
    if not levels or min(levels) < 1:
        raise click.BadParameter(
            "a comma-separated list of positive integers, e.g. 64,128,256",
            param_hint="--games-at-once",
        )
    return levels


def _load_text() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


@click.command("load")
@click.option(
    "--games-at-once",
    default="64,128,256",
    show_default=True,
    help="Levels of concurrency to measure, comma-separated.",
)
@click.option("--seconds", default=10.0, show_default=True, help="Length of each level.")
@click.option(
    "--move-timeout-ms",
    default=1000,
    show_default=True,
    help="Decision clock of the games (a timeout of an instant bot is a false timeout).",
)
def load_command(games_at_once: str, seconds: float, move_timeout_ms: int) -> None:
    """The referee under many games at once, with instant bots: decisions/s, the decision
    clock as the bots are charged it (p50/p99/max), the longest untimed gap, false timeouts
    and the referee's RSS over time."""
    from tacocat_arena.bench.load import measure_load

    levels = _levels(games_at_once)
    if seconds <= 0 or move_timeout_ms < 1:
        raise click.UsageError("--seconds must be > 0 and --move-timeout-ms >= 1")
    click.echo(f"before: {_load_text()}")
    for level in levels:
        figures = asyncio.run(measure_load(level, seconds, move_timeout_ms))
        one, five, _ = figures.load_average
        click.echo(
            f"{level:4d} games at once: {figures.games} games, "
            f"{figures.decisions_per_s:,.0f} decisions/s; clock p50 {figures.clock_p50_ms:.1f} "
            f"p99 {figures.clock_p99_ms:.1f} max {figures.clock_max_ms:.1f} ms; longest untimed "
            f"gap {figures.max_untimed_ms:.1f} ms; false timeouts {figures.false_timeouts}; "
            f"other forfeits {figures.other_forfeits}; load {one:.2f} {five:.2f}"
        )
        waiting = "unknown" if figures.cpu_wait_share is None else f"{figures.cpu_wait_share:.0%}"
        click.echo(
            f"      why: event loop lag max {figures.max_loop_lag_ms:.1f} ms; GC pause max "
            f"{figures.max_gc_pause_ms:.1f} ms ({figures.max_gc_pause_cpu_ms:.1f} ms of it "
            f"CPU); loop thread waiting for a CPU {waiting} of the time; referee CPU "
            f"{figures.cpu_ms_per_decision:.3f} ms per decision"
        )
        curve = "  ".join(f"{t:.0f}s:{mib:.0f}" for t, mib in figures.rss)
        click.echo(f"      RSS MiB over time: {curve}")
    click.echo(f"after: {_load_text()}")


@click.command("soak")
@click.option("--games", default=10_000, show_default=True, help="Games to play.")
@click.option("--games-at-once", default=64, show_default=True, help="Games in flight.")
def soak_command(games: int, games_at_once: int) -> None:
    """Play GAMES games with instant bots and print the referee's RSS every 5% of them: it
    must level off (every cache and memory of past requests is bounded)."""
    from tacocat_arena.bench.load import SoakSlice, measure_soak

    if games < 2 or games_at_once < 1:
        raise click.UsageError("--games must be >= 2 and --games-at-once >= 1")
    click.echo(f"before: {_load_text()}")

    def progress(part: SoakSlice) -> None:
        click.echo(
            f"  {part.games:6d} games  RSS {part.rss_mib:7.1f} MiB  longest untimed gap "
            f"{part.max_untimed_ms:6.1f} ms  GC pause {part.max_gc_pause_ms:6.1f} ms"
        )

    figures = asyncio.run(measure_soak(games, games_at_once, progress=progress))
    click.echo(
        f"{figures.games} games in {figures.seconds:.0f} s; RSS {figures.rss[0][1]:.1f} -> "
        f"{figures.rss[-1][1]:.1f} MiB: +{figures.growth_first_half_mib:.1f} MiB over the first "
        f"half, +{figures.growth_second_half_mib:.1f} MiB over the second; false timeouts "
        f"{figures.false_timeouts}; longest untimed gap {figures.max_untimed_ms:.1f} ms, "
        f"longest GC pause {figures.max_gc_pause_ms:.1f} ms"
    )
    click.echo(f"after: {_load_text()}")
