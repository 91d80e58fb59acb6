"""The ``tacocat-arena`` command: thin; it parses and delegates."""

from __future__ import annotations

import time
from pathlib import Path

import click

from tacocat_arena import __version__
from tacocat_arena.arena.commands import players, serve, submit
from tacocat_arena.bench.commands import load_command, soak_command

STRICT_HELP = (
    "Python SDK bots stop at the first exception in a decision method (TACOCAT_BOT_STRICT=1 "
    "in their environment) instead of playing a default move: for debugging."
)
DEBUG_HELP = (
    "Debug mode, for a bot under a debugger: no clock (as --move-timeout 0), one game at a "
    "time, and the bots' output (and input, for breakpoints) on this terminal instead of "
    "their logs."
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tacocat-arena")
def main() -> None:
    """Tournaments of bots that play Tacocat Spelled Backwards."""


@main.command()
@click.argument("config_file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--bot",
    "bots",
    multiple=True,
    metavar="NAME=COMMAND",
    help="A participant (repeatable; replaces the config's bots). "
    "COMMAND 'builtin:random|greedy|search' names an example bot.",
)
@click.option("--games", type=int, help="Games per pairing (even).")
@click.option("--seed", type=int, help="Tournament seed; every deal derives from it.")
@click.option("--concurrency", type=int, help="Games played at the same time.")
@click.option(
    "--move-timeout", type=float, metavar="SECONDS", help="Time per decision (0 = no limit)."
)
@click.option("--time-bank", type=float, metavar="SECONDS", help="Extra time per game.")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Output folder (default from the config: tacocat-results).",
)
@click.option("--resume", is_flag=True, help="Continue an interrupted tournament in --out.")
@click.option(
    "--gauntlet",
    metavar="NAME",
    help="A gauntlet: bot NAME plays every other bot, the others do not play each other.",
)
@click.option(
    "--report-every",
    type=click.IntRange(min=0),
    metavar="N",
    help="Print the standings every N games (default: about ten times a run; 0: never).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    metavar="N",
    help="Play the games in N local worker processes (docs/scaling.md).",
)
@click.option(
    "--cluster",
    metavar="tcp://HOST:PORT",
    help="Play the games on this Dask cluster (pip install 'tacocat-arena[dask]').",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no standings on the way.")
@click.option("--debug", is_flag=True, help=DEBUG_HELP)
@click.option("--strict", is_flag=True, help=STRICT_HELP)
@click.option(
    "--sandbox",
    type=click.Choice(["auto", "bwrap", "none"]),
    help="Confine the bots (default from the config: auto = bwrap where installed).",
)
def run(
    config_file: Path | None,
    bots: tuple[str, ...],
    games: int | None,
    seed: int | None,
    concurrency: int | None,
    move_timeout: float | None,
    time_bank: float | None,
    out: Path | None,
    resume: bool,
    gauntlet: str | None,
    report_every: int | None,
    workers: int | None,
    cluster: str | None,
    quiet: bool,
    debug: bool,
    strict: bool,
    sandbox: str | None,
) -> None:
    """Run a round-robin tournament (or a gauntlet) and write its result tables.

    With no CONFIG_FILE it runs the demo tournament of the example bots.  Results go to the
    output folder: standings.csv, crosstable.csv, games.jsonl, results.json, report.md and
    the database tournament.sqlite that --resume continues from.
    """
    from tacocat_arena.tournament.cli import run_command
    from tacocat_arena.tournament.config import TournamentFormat
    from tacocat_arena.tournament.sandbox import SandboxMode

    run_command(
        config_file,
        bots,
        resume=resume,
        quiet=quiet,
        debug=debug,
        strict=strict,
        report_every=report_every,
        workers=workers,
        cluster=cluster,
        overrides={
            "games_per_pairing": games,
            "seed": seed,
            "concurrency": concurrency,
            "move_timeout_s": move_timeout,
            "time_bank_s": time_bank,
            "out": out,
            "format": None if gauntlet is None else TournamentFormat.GAUNTLET,
            "gauntlet_bot": gauntlet,
            "sandbox": SandboxMode(sandbox) if sandbox else None,
        },
    )


@main.command()
@click.argument("first", metavar="A")
@click.argument("second", metavar="B")
@click.option(
    "--games",
    "-n",
    type=int,
    help="Games (even); default 10, or with --sprt the cap, default 2000.",
)
@click.option("--seed", type=int, default=1, show_default=True, help="Match seed.")
@click.option("--concurrency", type=int, default=4, show_default=True, help="Games at once.")
@click.option(
    "--move-timeout",
    type=float,
    default=1.0,
    show_default=True,
    metavar="SECONDS",
    help="Time per decision (0 = no limit).",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Output folder (default: a new folder under tacocat-results/matches).",
)
@click.option("--debug", is_flag=True, help=DEBUG_HELP)
@click.option("--strict", is_flag=True, help=STRICT_HELP)
@click.option(
    "--sprt",
    metavar="ELO0,ELO1",
    help="Play duplicate pairs until the SPRT accepts H0 (A - B = ELO0 Elo) or H1 (= ELO1). "
    "Exit code 0: H1, 3: H0, 4: no decision within --games.",
)
@click.option("--alpha", type=float, default=0.05, show_default=True, help="SPRT false H1 rate.")
@click.option("--beta", type=float, default=0.05, show_default=True, help="SPRT false H0 rate.")
@click.option("--quiet", "-q", is_flag=True, help="No progress line.")
def play(
    first: str,
    second: str,
    games: int | None,
    seed: int,
    concurrency: int,
    move_timeout: float,
    out: Path | None,
    debug: bool,
    strict: bool,
    sprt: str | None,
    alpha: float,
    beta: float,
    quiet: bool,
) -> None:
    """A quick match between two bots, A and B: each a command ("python my_bot.py"), an
    example bot's name (random, greedy, search) or builtin:NAME.

    It shows the score, the Elo difference A - B with its 95% interval and the likelihood of
    superiority, from duplicate pairs; with --sprt, the test's log-likelihood ratio too.
    """
    from tacocat_arena.tournament.cli import match_bots, run_command
    from tacocat_arena.tournament.live import DEFAULT_SPRT_GAMES
    from tacocat_arena.tournament.sprt import Sprt

    test = None
    if sprt is not None:
        try:
            test = Sprt.parse(sprt, alpha=alpha, beta=beta)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="--sprt") from None
    if games is None:
        games = DEFAULT_SPRT_GAMES if test is not None else 10
    bots = match_bots(first, second)
    if out is None:
        out = Path("tacocat-results") / "matches" / time.strftime("%Y%m%d-%H%M%S")
    run_command(
        None,
        bots,
        resume=False,
        debug=debug,
        strict=strict,
        quiet=quiet,
        sprt=test,
        report_every=0,
        overrides={
            "games_per_pairing": games,
            "seed": seed,
            "concurrency": concurrency,
            "move_timeout_s": move_timeout,
            "out": out,
        },
    )


@main.command()
@click.argument("file", type=click.Path(exists=True, path_type=Path))
@click.option("--game", "game_id", help="The game's id (default: the first game in FILE).")
@click.option(
    "--html",
    "html_out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the game's replay page (one self-contained HTML file) here instead.",
)
def replay(file: Path, game_id: str | None, html_out: Path | None) -> None:
    """A readable turn-by-turn account of a recorded game, or its replay page (--html).

    FILE is a tournament's games.jsonl or tournament.sqlite (or its folder), or one game
    record (JSON).  The record is re-verified first; one that does not is an error.
    """
    from tacocat_arena.tournament.cli import replay_command, replay_html_command

    if html_out is not None:
        click.echo(replay_html_command(file, game_id, html_out))
        return
    for line in replay_command(file, game_id):
        click.echo(line)


@main.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
def verify(path: Path) -> None:
    """Re-verify every recorded game in PATH: rules, events, results, marks and timings.

    PATH is a game record (JSON), a games.jsonl, a tournament.sqlite or a tournament's output
    folder.  Prints one line per problem (game id, round, rule ID) and a summary; exits 1 on
    any problem.  See docs/game-record.md.
    """
    from tacocat_arena.tournament.cli import verify_command

    for line in verify_command(path):
        click.echo(line)


main.add_command(serve)  # the arena: tacocat_arena/arena/commands.py
main.add_command(players)
main.add_command(submit)


@main.group()
def bench() -> None:
    """Benchmarks that print figures."""


bench.add_command(load_command)  # bench load and bench soak live in bench/commands.py
bench.add_command(soak_command)


@bench.command("engine")
@click.option("--games", "-n", default=5000, show_default=True, help="Games to play.")
@click.option("--seed", default=1, show_default=True, help="Seed of the first deal.")
def bench_engine_command(games: int, seed: int) -> None:
    """Play GAMES random-vs-random games in process and print games/s and decisions/s.

    Every action is fully validated by the engine; a decision is one action of one seat.
    Rates are per CPU second of this process, i.e. of one core.
    """
    from tacocat_arena.bench.engine import bench_engine

    if games < 1:
        raise click.BadParameter("must be at least 1", param_hint="--games")
    figures = bench_engine(games, seed=seed)
    click.echo(f"games:        {figures.games}")
    click.echo(f"decisions:    {figures.decisions} ({figures.decisions / games:.1f} per game)")
    click.echo(f"rounds:       {figures.rounds} ({figures.rounds / games:.2f} per game)")
    click.echo(f"cpu time:     {figures.cpu_seconds:.2f} s (wall {figures.wall_seconds:.2f} s)")
    click.echo(f"games/s:      {figures.games_per_second:,.0f}")
    click.echo(f"decisions/s:  {figures.decisions_per_second:,.0f}")


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


@bench.command("sandbox")
@click.option("--games", "-n", default=20, show_default=True, help="Games per measurement (even).")
@click.option("--repeats", default=2, show_default=True, help="Alternating runs of each mode.")
def bench_sandbox_command(games: int, repeats: int) -> None:
    """Bot start-up time and decisions/s without the sandbox and in bwrap, alternately in
    one run (two random bots, one game at a time); prints the ratio."""
    from tacocat_arena.bench.sandbox import bench_sandbox

    if games < 4 or games % 2 or repeats < 1:
        raise click.UsageError("--games must be even and >= 4, --repeats >= 1")
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
    from tacocat_arena.tournament.fairness import measure_duplicate_efficiency

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
def bench_bots_command(pairs: int, seed: int, bots: tuple[str, ...]) -> None:
    """Every built-in against every other over duplicate pairs: a table of scores with 95%
    intervals (the ladder of baselines in docs/sdk.md)."""
    from tacocat_arena.bench.bots import DEFAULT_LADDER, bench_bots, render_table
    from tacocat_arena.tournament.builtins import BuiltinError

    if pairs < 2 or len(bots) == 1:
        raise click.UsageError("--pairs must be >= 2, and give two --bot or more (or none)")
    try:
        results = bench_bots(
            bots or DEFAULT_LADDER,
            pairs=pairs,
            seed=seed,
            progress=lambda t: click.echo(t, err=True),
        )
    except BuiltinError as error:
        raise click.ClickException(str(error)) from None
    click.echo(render_table(results))


@bench.command("envs")
@click.option("--games", "-n", default=200, show_default=True, help="Random games per wrapper.")
@click.option("--seed", default=1, show_default=True, help="Seed of the deals and moves.")
def bench_envs_command(games: int, seed: int) -> None:
    """Steps per CPU second of the engine and of each learning-library wrapper (envs/)."""
    from tacocat_arena.bench.envs import bench_envs

    if games < 1:
        raise click.BadParameter("must be at least 1", param_hint="--games")
    figures = bench_envs(games, seed=seed)
    engine_steps = figures[1].steps_per_second or 1.0
    for f in figures:
        if f.steps is None:
            click.echo(f"{f.name:34} {f.note}")
            continue
        ratio = "" if f is figures[0] else f"  ({f.steps_per_second / engine_steps:.2f} x StepGame)"
        rate = f"{f.steps_per_second:>10,.0f} /s"
        click.echo(f"{f.name:34} {rate}  {f.steps:>8} in {f.cpu_seconds:.2f} s{ratio}")


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
def bench_arena_command(
    bots: int, seconds: float, concurrency: int, rate: float, hosted: bool
) -> None:
    """The web page's median and p99 response time while BOTS trivial bots play the ladder
    at full speed, and the ladder's games/s and decisions/s with and without page requests.
    With --hosted: submitted bots instead (docs/submissions.md), for --seconds at --rate."""
    if hosted:
        from tacocat_arena.bench.hosted import bench_hosted

        if seconds <= 0 or rate <= 0:
            raise click.UsageError("--seconds > 0, --rate > 0")
        click.echo(bench_hosted(seconds, rate).summary())
        return
    from tacocat_arena.bench.arena import bench_arena

    if bots < 2 or seconds <= 0 or concurrency < 1 or rate <= 0:
        raise click.UsageError("--bots >= 2, --seconds > 0, --concurrency >= 1, --rate > 0")
    click.echo(bench_arena(bots, seconds, concurrency, rate).summary())


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
def bench_referee_command(
    seconds: float, games_at_once: int, repeats: int, scale_games: int, uvloop: bool
) -> None:
    """(a) bare gRPC echo round trips/s, (b) referee decisions/s with one game, (c) with many
    games at once, (d) the ceiling of (b) (the stream handling alone), (e) two referee
    processes against one; prints the ratios."""
    import os

    from tacocat_arena.bench.referee import RefereeRun, bench_referee, use_uvloop

    os.environ["TACOCAT_UVLOOP"] = "1" if uvloop else "0"  # the worker processes read it
    if uvloop and not use_uvloop():
        raise click.UsageError("--uvloop needs uvloop: pip install uvloop")

    if seconds <= 0 or repeats < 1 or games_at_once < 1:
        raise click.UsageError("--seconds must be > 0, --repeats and --games-at-once >= 1")

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


@main.command()
@click.argument("command")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.option(
    "--move-timeout",
    type=click.IntRange(1, 600_000),
    default=2000,
    show_default=True,
    metavar="MS",
    help="The allowance per decision, in milliseconds.",
)
@click.option(
    "--log",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Keep the bot's output in this file (default: a temporary file).",
)
@click.option("--name", default="bot", show_default=True, help="The bot's name in the check.")
def check(command: str, as_json: bool, move_timeout: int, log: Path | None, name: str) -> None:
    """Put a bot through the protocol's conformance checks: run this first on a new bot.

    COMMAND starts the bot as a tournament would (a command line, or builtin:NAME); it gets
    TACOCAT_ARENA_ADDRESS, TACOCAT_ARENA_TOKEN and TACOCAT_ARENA_BOT.  Every check prints
    PASS or FAIL with what was expected and what came back.  Exit code 0 only when all pass.
    """
    from tacocat_arena.check.cli import check_command

    check_command(command, as_json=as_json, move_timeout_ms=move_timeout, log=log, name=name)


if __name__ == "__main__":
    main()
