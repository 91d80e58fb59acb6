"""``tacocat-arena bench``: the group and its commands, which parse, call ``bench/`` (where
the measuring is) and print the figures."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from tacocat_arena.cli.options import move_timeout_option


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
@move_timeout_option(
    "Decision clock of the games (a timeout of an instant bot is a false timeout).", default=1.0
)
@click.option("--move-timeout-ms", type=int, hidden=True, help="Deprecated: --move-timeout.")
def load_command(
    games_at_once: str, seconds: float, move_timeout: float, move_timeout_ms: int | None
) -> None:
    """The referee under many games at once, with instant bots: decisions/s, the decision
    clock as the bots are charged it (p50/p99/max), the longest untimed gap, the worst
    ruling lag (how long after a decision was due the referee ruled on it), false timeouts
    and the referee's RSS over time."""
    import asyncio

    from tacocat_arena.bench.load import measure_load
    from tacocat_arena.referee.settings import ClockSettings

    levels = _levels(games_at_once)
    if move_timeout_ms is not None:
        click.echo("warning: --move-timeout-ms is deprecated; use --move-timeout SECONDS", err=True)
        move_timeout = move_timeout_ms / 1000
    clock = ClockSettings.from_seconds(move_timeout)
    if seconds <= 0 or clock.decision_ms < 1:
        raise click.UsageError("--seconds must be > 0 and --move-timeout at least 0.001 s")
    click.echo(f"before: {_load_text()}")
    for level in levels:
        figures = asyncio.run(measure_load(level, seconds, clock.decision_ms))
        one, five, _ = figures.load_average
        click.echo(
            f"{level:4d} games at once: {figures.games} games, "
            f"{figures.decisions_per_s:,.0f} decisions/s; clock p50 {figures.clock_p50_ms:.1f} "
            f"p99 {figures.clock_p99_ms:.1f} max {figures.clock_max_ms:.1f} ms; longest untimed "
            f"gap {figures.max_untimed_ms:.1f} ms; worst ruling lag "
            f"{figures.max_ruling_lag_ms:.1f} ms; false timeouts {figures.false_timeouts}; "
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
@click.option(
    "--arena",
    "arena",
    is_flag=True,
    help="Instead: a whole `serve` (ladder, store, web page) with 8 trivial bots, its RSS "
    "against its stored games.",
)
def soak_command(games: int, games_at_once: int, arena: bool) -> None:
    """Play GAMES games with instant bots and print the referee's RSS every 5% of them: it
    must level off (every cache and memory of past requests is bounded).  With --arena, the
    arena server's (--games-at-once is then its --concurrency)."""
    import asyncio

    from tacocat_arena.bench.load import SoakSlice, measure_soak

    if games < 2 or games_at_once < 1:
        raise click.UsageError("--games must be >= 2 and --games-at-once >= 1")
    click.echo(f"before: {_load_text()}")
    if arena:
        from tacocat_arena.bench.arena import arena_soak

        def sample(played: int, rss: float) -> None:
            click.echo(f"  {played:6d} games  RSS {rss:7.1f} MiB")

        soak = arena_soak(games, concurrency=games_at_once, progress=sample)
        click.echo(
            f"serve: {soak.games} games in {soak.seconds:.0f} s; RSS {soak.rss[0][1]:.1f} -> "
            f"{soak.rss[-1][1]:.1f} MiB: +{soak.growth_first_half_mib:.1f} MiB over the first "
            f"half, +{soak.growth_second_half_mib:.1f} MiB over the second"
        )
        click.echo(f"after: {_load_text()}")
        return

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


def _against_option(what: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """``--against REV`` (bench/trees.py) as each command says what it does with it."""
    return click.option(
        "--against",
        metavar="REV",
        default=None,
        help=f"{what} (REV is checked out in a temporary git worktree.)",
    )


@click.group()
def bench() -> None:
    """Benchmarks that print figures."""


@bench.command("engine")
@click.option("--games", "-n", default=5000, show_default=True, help="Games to play.")
@click.option("--seed", default=1, show_default=True, help="Seed of the first deal.")
@_against_option("Also measure commit REV, in turns.")
@click.option(
    "--rounds", default=5, show_default=True, help="With --against: rounds (the median counts)."
)
def bench_engine_command(games: int, seed: int, against: str | None, rounds: int) -> None:
    """Play GAMES random-vs-random games in process and print games/s and decisions/s.

    Every action is fully validated by the engine; a decision is one action of one seat.
    Rates are per CPU second of this process, i.e. of one core.  With --against REV, both
    trees play the same games in child processes, in turns, and each round's ratio prints.
    """
    from tacocat_arena.bench.engine import bench_engine

    if games < 1:
        raise click.BadParameter("must be at least 1", param_hint="--games")
    if rounds < 1:
        raise click.BadParameter("must be at least 1", param_hint="--rounds")
    if against is not None:
        _engine_against(games, seed, against, rounds)
        return
    figures = bench_engine(games, seed=seed)
    click.echo(f"games:        {figures.games}")
    click.echo(f"decisions:    {figures.decisions} ({figures.decisions / games:.1f} per game)")
    click.echo(f"rounds:       {figures.rounds} ({figures.rounds / games:.2f} per game)")
    click.echo(f"cpu time:     {figures.cpu_seconds:.2f} s (wall {figures.wall_seconds:.2f} s)")
    click.echo(f"games/s:      {figures.games_per_second:,.0f}")
    click.echo(f"decisions/s:  {figures.decisions_per_second:,.0f}")


def _echo_trees(
    this: str,
    other: str,
    load_before: tuple[float, float, float],
    load_after: tuple[float, float, float],
) -> None:
    """The head of a ``--against`` comparison: the two trees and the load around it."""
    click.echo(f"this tree: {this}")
    click.echo(f"against:   {other}")
    before, after = (" ".join(f"{x:.2f}" for x in load) for load in (load_before, load_after))
    click.echo(f"load average {before} before, {after} after, on {os.cpu_count()} cores")


def _engine_against(games: int, seed: int, against: str, rounds: int) -> None:
    import statistics

    from tacocat_arena.bench.engine import bench_engine_against
    from tacocat_arena.bench.trees import BenchError

    try:
        c = bench_engine_against(games, against, rounds=rounds, seed=seed)
    except BenchError as error:
        raise click.ClickException(str(error)) from error
    click.echo(f"bench engine: {games} games a round, {rounds} round(s), CPU time, in turns")
    _echo_trees(c.this, f"{c.other}, a worktree", c.load_before, c.load_after)
    click.echo(f"{'round':>5} {'decisions/s':>12} {'against':>12}  ratio")
    ratios = c.ratios(lambda figures: figures.decisions_per_second)
    for index, (mine, theirs) in enumerate(zip(c.mine, c.theirs, strict=True)):
        click.echo(
            f"{index + 1:>5} {mine.decisions_per_second:>12,.0f} "
            f"{theirs.decisions_per_second:>12,.0f}  {ratios[index]:.3f}"
        )
    click.echo(f"median ratio (this tree / {c.other}): {statistics.median(ratios):.3f}")


@bench.command("search")
@click.option("--games", "-n", default=20, show_default=True, help="Games against greedy.")
@click.option("--budget", default=150, show_default=True, help="The search bot's playouts.")
@click.option("--seed", default=1, show_default=True, help="Seed of the deals and the bot.")
def bench_search_command(games: int, budget: int, seed: int) -> None:
    """Milliseconds per decision of the example search bot, in process against greedy:
    CPU time (mean, median, 90th percentile) and wall time, by decision kind."""
    from tacocat_arena.bench.search import bench_search

    if games < 1 or budget < 1:
        raise click.UsageError("--games and --budget must be at least 1")
    figures = bench_search(games, budget=budget, seed=seed)
    click.echo(f"search bot, budget {budget}, {games} games against greedy (in process)")
    click.echo("kind       decisions  cpu mean  median     p90  wall mean  (ms)")
    rows = [*figures.by_kind.items(), ("all", figures.overall)]
    for kind, row in rows:
        click.echo(
            f"{kind:<10} {row.decisions:>9} {row.cpu_mean_ms:>9.1f} {row.cpu_median_ms:>7.1f} "
            f"{row.cpu_p90_ms:>7.1f} {row.wall_mean_ms:>10.1f}"
        )
    if figures.load_average is not None:
        click.echo("load average: " + ", ".join(f"{x:.2f}" for x in figures.load_average))


@bench.command("analysis")
@click.option("--games", "-n", default=4, show_default=True, help="Games to analyse (twice).")
@click.option(
    "--reference",
    metavar="SPEC",
    help="The reference, as analyze takes it (default: ismcts?iterations=6000&seeds=4).",
)
@click.option("--seed", default=1, show_default=True, help="Seed of the games.")
def bench_analysis_command(games: int, reference: str | None, seed: int) -> None:
    """What analyze costs per game (CPU and wall time) and its reference's noise floor: the
    same decisions analysed twice with other seeds, how often the two runs differ."""
    from tacocat_arena.bench.analysis import bench_analysis
    from tacocat_arena.play.analysis import Reference, ReferenceSpecError

    if games < 1:
        raise click.UsageError("--games must be at least 1")
    try:
        spec = Reference.parse(reference)
    except ReferenceSpecError as error:
        raise click.BadParameter(str(error), param_hint="--reference") from None
    f = bench_analysis(games, spec, seed=seed)
    click.echo(f"analyze, reference {f.reference}: {f.games} games of the ISMCTS bot (600)")
    click.echo(
        f"  against greedy, its seat analysed twice: {f.decisions} decisions, {f.chosen} "
        "with a choice"
    )
    click.echo(
        f"time per game: {f.cpu_s_per_game:.1f} s CPU, {f.wall_s_per_game:.1f} s wall "
        f"({f.cpu_ms_per_decision:.0f} ms CPU a decision)"
    )
    click.echo(
        f"noise floor (two runs, other seeds): best action differs {f.best_differs:.1%}, "
        f"mark differs {f.mark_differs:.1%} (marked {f.marked:.1%}), |loss gap| mean "
        f"{f.loss_gap_mean:.2f}, p90 {f.loss_gap_p90:.2f} points"
    )
    if f.load_average is not None:
        click.echo("load average: " + ", ".join(f"{x:.2f}" for x in f.load_average))


@bench.command("sandbox")
@click.option("--games", "-n", default=20, show_default=True, help="Games per measurement (even).")
@click.option("--repeats", default=2, show_default=True, help="Alternating runs of each mode.")
@click.option(
    "--starts",
    default=10,
    show_default=True,
    type=click.IntRange(min=0),
    help="Starts of each bot kind (Python, Node, C++) in each mode, in turns (0: none).",
)
@click.option("--starts-only", is_flag=True, help="Only the starts, not the games.")
@click.option(
    "--cpp-bot",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="The built C++ example bot (default: example_bots/cpp/build/tacocat_cpp_bot).",
)
@_against_option("Instead: the Python bot's starts of this tree and of commit REV, in turns.")
def bench_sandbox_command(
    games: int,
    repeats: int,
    starts: int,
    starts_only: bool,
    cpp_bot: Path | None,
    against: str | None,
) -> None:
    """Bot start-up time and decisions/s without the sandbox and in bwrap, alternately in
    one run (two random bots, one game at a time); prints the ratio.  Then what one start
    of each kind of bot costs (wall and CPU, its whole process tree, and the runner's), in
    both modes.  With --against REV: only the Python example bot's starts, this tree's and
    REV's in turns, with the ratios."""
    from tacocat_arena.bench.sandbox import bench_sandbox

    if games < 4 or games % 2 or repeats < 1:
        raise click.UsageError("--games must be even and >= 4, --repeats >= 1")
    if against is not None:
        _sandbox_starts_against(against, max(1, starts))
        return
    if not starts_only:
        _sandbox_games(games, repeats, bench_sandbox)
    if starts:
        _sandbox_starts(starts, cpp_bot)


def _sandbox_starts(starts: int, cpp_bot: Path | None) -> None:
    import statistics

    from tacocat_arena.bench.sandbox import bench_starts, bot_kinds

    kinds = bot_kinds(cpp_bot)
    click.echo(f"before: {_load_text()}")
    costs = bench_starts(kinds, starts, progress=lambda line: click.echo(line, err=True))
    click.echo(f"one start, launch to session open (median of {starts}, min in brackets):")
    for cost in costs:
        parts = [
            f"{label} {statistics.median(values):6.1f} ({min(values):5.1f})"
            for label, values in (
                ("wall", cost.wall_ms),
                ("CPU of the bot's tree", cost.bot_cpu_ms),
                ("runner CPU", cost.runner_cpu_ms),
            )
        ]
        click.echo(f"  {cost.kind:<6} {cost.mode:>5}: " + "; ".join(parts) + " ms")
    for kind in kinds:
        if kind.missing:
            click.echo(f"  {kind.name:<6} not measured: {kind.missing}")
    click.echo(f"after: {_load_text()}")


def _sandbox_starts_against(against: str, starts: int) -> None:
    import statistics

    from tacocat_arena.bench.sandbox import bench_starts_against
    from tacocat_arena.bench.trees import BenchError

    try:
        c = bench_starts_against(against, starts, progress=lambda line: click.echo(line, err=True))
    except BenchError as error:
        raise click.ClickException(str(error)) from error
    _echo_trees(c.this, c.other, c.load_before, c.load_after)
    click.echo(f"the Python example bot's start, launch to session open (median of {starts}):")
    click.echo(f"{'':22}{'this':>8} {'against':>8}  ratio  (min: this, against)")
    for mine, theirs in zip(c.mine, c.theirs, strict=True):
        for label, a, b in (
            ("wall", mine.wall_ms, theirs.wall_ms),
            ("CPU, bot's tree", mine.bot_cpu_ms, theirs.bot_cpu_ms),
            ("CPU, runner", mine.runner_cpu_ms, theirs.runner_cpu_ms),
        ):
            ma, mb = statistics.median(a), statistics.median(b)
            click.echo(
                f"{mine.mode:>5} {label:<16}{ma:8.1f} {mb:8.1f}  {ma / max(mb, 1e-9):5.2f}  "
                f"({min(a):.1f}, {min(b):.1f})"
            )


def _sandbox_games(games: int, repeats: int, bench_sandbox: Callable[..., Any]) -> None:
    figures = bench_sandbox(games, repeats, progress=lambda line: click.echo(line, err=True))
    for mode in (figures.none, figures.bwrap):
        if mode is None:
            click.echo("bwrap: not available here (install bubblewrap)")
            continue
        click.echo(
            f"{mode.mode:>5}: start-up {mode.startup_ms:6.0f} ms per bot process, "
            f"{mode.decisions_per_s:8,.0f} decisions/s; CPU per decision: bots "
            f"{mode.bots_cpu_us:5.0f} us, runner {mode.runner_cpu_us:5.0f} us"
        )
    if figures.rate_ratio is not None and figures.bwrap is not None:
        extra = figures.bwrap.startup_ms - figures.none.startup_ms
        cpu = (figures.bwrap.bots_cpu_us + figures.bwrap.runner_cpu_us) / (
            figures.none.bots_cpu_us + figures.none.runner_cpu_us
        )
        click.echo(
            f"bwrap/none decisions/s = {figures.rate_ratio:.2f}, CPU per decision = {cpu:.2f}; "
            f"start-up {extra:+.0f} ms per process (twins start two processes per bot)"
        )
    click.echo(f"(best of {repeats} alternating runs of {games} games each)")


@bench.command("duplicate")
@click.option("--pairs", default=4000, show_default=True, help="Game pairs per method (>= 2).")
@click.option("--seed", default=1, show_default=True, help="Seed of the measurement.")
@click.option(
    "--epsilon",
    default=0.02,
    show_default=True,
    help="How often the weaker greedy plays a random move (closeness of the bots).",
)
def bench_duplicate_command(pairs: int, seed: int, epsilon: float) -> None:
    """How many games duplicate deals save: variance of the score of two close bots over
    duplicate pairs (one deal, seats swapped) versus plain seat alternation."""
    from tacocat_arena.bench.fairness import measure_duplicate_efficiency

    if pairs < 2:
        raise click.BadParameter("must be at least 2", param_hint="--pairs")
    click.echo(measure_duplicate_efficiency(pairs, seed, epsilon=epsilon).summary())


@bench.command("report")
@click.option("--games", "-n", default=1000, show_default=True, help="Games in the report.")
@click.option("--bots", default=8, show_default=True, help="Bots the games are spread over.")
def bench_report_command(games: int, bots: int) -> None:
    """Time report.html (with report.md) for GAMES played games, then with every replay."""
    from tacocat_arena.bench.report import bench_report

    if games < 1 or bots < 2:
        raise click.UsageError("--games must be >= 1 and --bots >= 2")
    f = bench_report(games, bots=bots)
    click.echo(f"games: {f.games} over {f.bots} bots")
    click.echo(
        f"report.html + report.md: {f.report_cpu_s:.2f} s CPU ({f.report_wall_s:.2f} s wall), "
        f"report.html {f.report_bytes / 1e3:,.0f} kB"
    )
    click.echo(
        f"with every replay:       {f.full_cpu_s:.2f} s CPU ({f.full_wall_s:.2f} s wall), "
        f"replays {f.replay_bytes / 1e6:,.1f} MB ({f.replay_bytes / f.games / 1e3:.0f} kB each)"
    )


@bench.command("bots")
@click.option("--pairs", default=20, show_default=True, help="Duplicate pairs per pairing.")
@click.option("--seed", default=1, show_default=True, help="Seed of the deals and the bots.")
@click.option(
    "--bot",
    "bots",
    multiple=True,
    metavar="SPEC",
    help="A built-in, e.g. search or 'builtin:search?budget=30' (repeatable; default: the "
    "ladder random, greedy, search, ismcts).",
)
@click.option(
    "--over-wire",
    is_flag=True,
    help="Play as users do: each bot its own process, over a referee on loopback gRPC (1 s a "
    "decision); the table then counts fallback moves and forfeits.",
)
@move_timeout_option(
    "With --over-wire: the referee's time per decision (raise it on a loaded machine).",
    default=1.0,
)
def bench_bots_command(
    pairs: int, seed: int, bots: tuple[str, ...], over_wire: bool, move_timeout: float
) -> None:
    """Every built-in against every other over duplicate pairs: a table of scores with 95%
    intervals (the ladder of baselines in docs/sdk.md)."""
    from tacocat_arena.bench.bots import DEFAULT_LADDER, bench_bots, render_table
    from tacocat_arena.launch.builtins import BuiltinError

    decision_ms = round(move_timeout * 1000)
    if decision_ms < 1:
        raise click.UsageError("--move-timeout must be at least 0.001 s")
    if pairs < 2 or len(bots) == 1:
        raise click.UsageError("--pairs must be >= 2, and give two --bot or more (or none)")
    try:
        results = bench_bots(
            bots or DEFAULT_LADDER,
            pairs=pairs,
            seed=seed,
            over_wire=over_wire,
            decision_ms=decision_ms,
            progress=lambda t: click.echo(t, err=True),
        )
    except BuiltinError as error:
        raise click.ClickException(str(error)) from None
    click.echo(render_table(results, over_wire=over_wire, decision_ms=decision_ms))


@bench.command("envs")
@click.option(
    "--steps", "-n", default=20_000, show_default=True, help="Flat steps per loop and round."
)
@click.option("--rounds", default=5, show_default=True, help="Rounds (medians are over them).")
@_against_option("Also measure commit REV, interleaved.")
@click.option("--seed", default=1, show_default=True, help="Seed of the deals and moves.")
def bench_envs_command(steps: int, rounds: int, against: str | None, seed: int) -> None:
    """Steps per CPU second of the engine and of each learning-library adapter (envs/), and
    of the peers (PettingZoo's Leduc hold'em, OpenSpiel's Kuhn poker) through the same loops;
    with --against REV, of REV's adapters too, in the same run, with the ratios."""
    from tacocat_arena.bench.envs import bench_envs, render_comparison
    from tacocat_arena.bench.trees import BenchError

    if steps < 1:
        raise click.BadParameter("must be at least 1", param_hint="--steps")
    if rounds < 1:
        raise click.BadParameter("must be at least 1", param_hint="--rounds")
    try:
        comparison = bench_envs(steps, rounds=rounds, against=against, seed=seed)
    except BenchError as error:
        raise click.ClickException(str(error)) from error
    for line in render_comparison(comparison):
        click.echo(line)


@bench.command("arena")
@click.option("--bots", default=20, show_default=True, help="Trivial bots on the ladder.")
@click.option("--seconds", default=15.0, show_default=True, help="Length of each phase.")
@click.option(
    "--concurrency", default=8, show_default=True, help="Games at once (serve's default)."
)
@click.option("--rate", default=20.0, show_default=True, help="Page requests per second.")
@click.option(
    "--hosted",
    is_flag=True,
    help="Instead: hosted games/s with 1 and 2 workers (submitted example packages) and the "
    "page's response time while they play.",
)
@click.option(
    "--spread",
    is_flag=True,
    help="Instead: 6 hosted versions on 1 worker until --games games; how evenly pairs met.",
)
@click.option("--games", default=300, show_default=True, help="--spread: games to play.")
@click.option(
    "--pairs-per-batch",
    "pairs_per_batch",
    multiple=True,
    type=click.IntRange(min=1),
    help="--hosted: instead of 1 and 2 workers, 1 worker with each of these batch sizes "
    "(serve --pairs-per-batch), in turn.",
)
@click.option(
    "--sse",
    default=0,
    show_default=True,
    help="Event streams (the index page's, as open browser tabs hold) open during phase B.",
)
@_against_option(
    "--hosted: instead, this tree and commit REV with 1 worker each, in turns, in one run."
)
@click.option(
    "--rounds",
    default=2,
    show_default=True,
    type=click.IntRange(min=1),
    help="--hosted --against: runs of each tree.",
)
def bench_arena_command(
    bots: int, seconds: float, concurrency: int, rate: float, hosted: bool, spread: bool,
    games: int, sse: int, pairs_per_batch: tuple[int, ...], against: str | None, rounds: int,
) -> None:  # fmt: skip
    """The web page's median and p99 response time while BOTS trivial bots play the ladder
    at full speed, and the ladder's games/s and decisions/s with and without page requests
    (and with SSE event streams open).
    With --hosted: submitted bots instead (docs/submissions.md), for --seconds at --rate;
    with --hosted --against REV, this tree against commit REV (docs/submissions.md).
    With --spread: the hosted ladder's fairness (docs/arena-server.md, Ladder matchmaking)."""
    if spread:
        from tacocat_arena.bench.hosted import bench_spread

        if games < 2:
            raise click.UsageError("--games >= 2")
        click.echo(bench_spread(games).summary())
        return
    if against is not None and not hosted:
        raise click.UsageError("--against compares hosted play: add --hosted")
    if hosted:
        from tacocat_arena.bench.hosted import bench_hosted, bench_hosted_against
        from tacocat_arena.bench.trees import BenchError

        if seconds <= 0 or rate <= 0:
            raise click.UsageError("--seconds > 0, --rate > 0")
        if against is not None:
            if pairs_per_batch:
                raise click.UsageError("--against runs each tree's default batch size")
            try:
                click.echo(bench_hosted_against(against, seconds, rate, rounds).summary())
            except BenchError as error:
                raise click.ClickException(str(error)) from error
            return
        click.echo(bench_hosted(seconds, rate, pairs_per_batch=pairs_per_batch).summary())
        return
    from tacocat_arena.bench.arena import bench_arena

    if bots < 2 or seconds <= 0 or concurrency < 1 or rate <= 0 or sse < 0:
        raise click.UsageError(
            "--bots >= 2, --seconds > 0, --concurrency >= 1, --rate > 0, --sse >= 0"
        )
    click.echo(bench_arena(bots, seconds, concurrency, rate, sse).summary())


@bench.command("referee")
@click.option("--seconds", default=5.0, show_default=True, help="Length of each measurement.")
@click.option("--games-at-once", default=32, show_default=True, help="Games in flight for (c).")
@click.option(
    "--repeats", default=3, show_default=True, help="Interleaved runs; the best of each counts."
)
@click.option(
    "--scale-games",
    default=128,
    show_default=True,
    help="Games in flight for (e), one referee process against two (0: skip (e)).",
)
@click.option(
    "--uvloop/--no-uvloop",
    default=False,
    help="Run the referee's event loop on uvloop (pip install uvloop).",
)
@_against_option(
    "Instead: (b) and (c) of this tree and of commit REV, in turns (--repeats rounded up to "
    "even: each tree first in half the runs), with the ratio of each run and their geometric "
    "mean."
)
def bench_referee_command(
    seconds: float,
    games_at_once: int,
    repeats: int,
    scale_games: int,
    uvloop: bool,
    against: str | None,
) -> None:
    """(a) bare gRPC echo round trips/s, (b) referee decisions/s with one game, (c) with many
    games at once, (d) the ceiling of (b) (the stream handling alone), (e) two referee
    processes against one; prints the ratios.  With --against REV: (a), and (b) and (c) of
    both trees, run by run."""
    import os

    from tacocat_arena.bench.referee import RefereeRun, bench_referee, use_uvloop

    os.environ["TACOCAT_UVLOOP"] = "1" if uvloop else "0"  # the worker processes read it
    if uvloop and not use_uvloop():
        raise click.UsageError("--uvloop needs uvloop: pip install uvloop")

    if seconds <= 0 or repeats < 1 or games_at_once < 1:
        raise click.UsageError("--seconds must be > 0, --repeats and --games-at-once >= 1")
    if against is not None:
        _referee_against(against, seconds, games_at_once, repeats)
        return

    def report(index: int, run: RefereeRun) -> None:
        click.echo(
            f"run {index + 1}/{repeats}: (a) {run.echo_round_trips_per_s:,.0f}  "
            f"(b) {run.decisions_per_s:,.0f}  (c) {run.decisions_per_s_concurrent:,.0f}  "
            f"(d) {run.relay_decisions_per_s:,.0f}  (e) {run.scale_one_per_s:,.0f} -> "
            f"{run.scale_two_per_s:,.0f}",
            err=True,
        )

    figures = bench_referee(
        seconds, games_at_once, repeats, progress=report, scale_games=scale_games
    )
    if uvloop:
        click.echo("(the referee's loop: uvloop)")
    click.echo(
        f"(a) bare grpcio bidi echo, 2 processes: {figures.echo_round_trips_per_s:,.0f} "
        "round trips/s"
    )
    click.echo(
        f"(b) referee, 1 game, 2 bot processes:   {figures.decisions_per_s:,.0f} decisions/s"
    )
    click.echo(
        f"(c) referee, {games_at_once} games at once:          "
        f"{figures.decisions_per_s_concurrent:,.0f} decisions/s"
    )
    click.echo(
        f"(d) ceiling of (b): stream handling, no game: {figures.relay_decisions_per_s:,.0f} "
        "decisions/s"
    )
    click.echo(f"(b)/(a) = {figures.overhead_ratio:.2f}   (c)/(b) = {figures.scaling_ratio:.2f}")
    click.echo(
        f"(d)/(a) = {figures.relay_decisions_per_s / figures.echo_round_trips_per_s:.2f}   "
        f"(b)/(d) = {figures.decisions_per_s / figures.relay_decisions_per_s:.2f}"
    )
    if scale_games:
        best = max(figures.runs, key=lambda run: run.scale_two_per_s)
        click.echo(
            f"(e) {scale_games} games at once: 1 referee process {best.scale_one_per_s:,.0f}, "
            f"2 processes {best.scale_two_per_s:,.0f} decisions/s; "
            f"(e) ratio = {figures.scale_out_ratio:.2f}"
        )
    if repeats > 1:
        click.echo(f"(best of {repeats} interleaved runs of {seconds:g} s each)")


bench.add_command(load_command)
bench.add_command(soak_command)


@bench.command("grade")
@click.option(
    "--bot",
    default="builtin:search",
    show_default=True,
    help="The bot graded: a package or a command (the budget is for the search bot's speed).",
)
@click.option(
    "--rubric",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The rubric (default: the shipped one).",
)
@move_timeout_option(
    "Replace the rubric's clock (seconds): on a busy machine, so as to time the grade "
    "rather than timeouts.",
    type=click.FloatRange(0.001, 60),
)
def bench_grade_command(bot: str, rubric: Path | None, move_timeout: float | None) -> None:
    """Wall time of one grade by the default rubric (budget: 3 minutes on a quiet 2-core
    machine for a bot at the search bot's speed), with the load before and after."""
    from tacocat_arena.bench.grade import bench_grade
    from tacocat_arena.grade.grader import GradeError
    from tacocat_arena.grade.rubric import RubricError

    try:
        figures = bench_grade(bot, rubric, move_timeout)
    except (GradeError, RubricError) as error:
        raise click.ClickException(str(error)) from None
    for line in figures.lines():
        click.echo(line)


def _referee_against(against: str, seconds: float, games_at_once: int, repeats: int) -> None:
    import statistics

    from tacocat_arena.bench.referee import (
        CostPair,
        RefereeComparison,
        bench_referee_against,
        runs_in_both_orders,
    )
    from tacocat_arena.bench.trees import BenchError

    runs = runs_in_both_orders(repeats)

    def report(index: int, echo: float, single: CostPair, many: CostPair) -> None:
        click.echo(
            f"run {index + 1}/{runs}: (a) {echo:,.0f}  (b) {single.mine[0]:,.0f} vs "
            f"{single.theirs[0]:,.0f}  (c) {many.mine[0]:,.0f} vs {many.theirs[0]:,.0f}",
            err=True,
        )

    try:
        c = bench_referee_against(against, seconds, games_at_once, repeats, progress=report)
    except BenchError as error:
        raise click.ClickException(str(error)) from error
    click.echo(
        f"bench referee: {runs} runs of {seconds:g} s a figure, the trees in turns (each first "
        "in half)"
    )
    _echo_trees(
        c.this,
        f"{c.other}, a worktree (its referee and its trivial bots)",
        c.load_before,
        c.load_after,
    )
    click.echo(f"(a) bare grpcio bidi echo, median: {statistics.median(c.echo):,.0f} round trips/s")
    click.echo(f"{'':38} {'this':>9} {'against':>9}  ratio: geometric mean (each run)")
    rows = (
        ("(b) 1 game", c.single),
        (f"(c) {c.concurrent_games} games at once", c.concurrent),
    )
    for label, pairs in rows:
        for unit, part in (("decisions/s", 0), ("decisions/CPU s", 1)):
            ratios = [p.rate_ratio if part == 0 else p.cpu_ratio for p in pairs]
            each = " ".join(f"{r:.2f}" for r in ratios)
            click.echo(
                f"{label + ', ' + unit:38} {statistics.median(p.mine[part] for p in pairs):>9,.0f} "
                f"{statistics.median(p.theirs[part] for p in pairs):>9,.0f}  "
                f"{RefereeComparison.ratio(pairs, part):.2f} ({each})"
            )
    click.echo("(decisions/CPU s: per CPU second of the referee's process, its own cost)")
