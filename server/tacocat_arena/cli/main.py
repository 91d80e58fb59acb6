"""The ``tacocat-arena`` command: thin; it parses and delegates."""

from __future__ import annotations

import time
from pathlib import Path

import click

from tacocat_arena import __version__
from tacocat_arena.cli import options
from tacocat_arena.cli.bench import bench
from tacocat_arena.cli.grade import grade
from tacocat_arena.cli.serve import players, serve, submissions, submit

STRICT_HELP = (
    "Python SDK bots stop at the first exception in a decision method (TACOCAT_BOT_STRICT=1 "
    "in their environment) instead of playing a default move: for debugging."
)
TOKEN_HELP = (
    "When GAME is an arena's address: the player's token, sent as a bearer token "
    "(default: $TACOCAT_ARENA_TOKEN)."
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
@options.move_timeout_option("Time per decision (0 = no limit).")
@options.time_bank_option("Extra time per game.")
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
    "--format",
    "event_format",
    type=click.Choice(["round_robin", "gauntlet", "swiss", "knockout", "finals"]),
    help="Who plays whom (default from the config: round_robin); swiss: rounds of bots of "
    "equal score (docs/tournaments.md, Swiss events); finals: round robins of a field cut "
    "stage by stage (Finals).",
)
@options.swiss_rounds_option("A Swiss event's rounds (default: ceil(log2(bots))).")
@click.option(
    "--cut",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    metavar="SHARE",
    help="Finals: the share of the field dropped after each stage (default 0.5).",
)
@click.option(
    "--top",
    type=click.IntRange(min=1),
    metavar="K",
    help="Finals: the places whose order is to be decided (default 3).",
)
@click.option(
    "--confidence",
    type=click.FloatRange(0.5, 1, max_open=True),
    metavar="C",
    help="Finals: the LOS each of the top's boundaries needs to be decided (default 0.95).",
)
@click.option(
    "--until-stable",
    is_flag=True,
    help="Finals: play on until the top's order is decided (or --max-stages), and stop "
    "as soon as it is.",
)
@click.option(
    "--max-stages",
    type=click.IntRange(1, 100),
    metavar="N",
    help="Finals: the stages at most (default 10).",
)
@click.option(
    "--seeding",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    metavar="DIR",
    help="Seed the bots by the standings of a prior event's output folder (a Swiss's), "
    "not by the config's order.",
)
@click.option(
    "--entrants",
    type=click.IntRange(min=2),
    metavar="N",
    help="Only the first N bots play (after --seeding: a prior event's top N, e.g. a Swiss's "
    "into a knockout or finals).",
)
@options.notify_option(
    "POST a JSON summary (event, standings, where the results are) to this http(s) URL "
    "when the event is done; retried, never fails the event."
)
@click.option(
    "--report-every",
    type=click.IntRange(min=0),
    metavar="N",
    help="Print the standings every N games (default: about ten times a run; 0: never).",
)
@options.workers_option(
    "Play the games in N local worker processes (docs/scaling.md).", type=click.IntRange(min=1)
)
@options.cluster_option("Play the games on this Dask cluster (pip install 'tacocat-arena[dask]').")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no standings on the way.")
@click.option("--debug", is_flag=True, help=DEBUG_HELP)
@click.option("--strict", is_flag=True, help=STRICT_HELP)
@options.sandbox_option("Confine the bots (default from the config: auto = bwrap where installed).")
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
    event_format: str | None,
    rounds: int | None,
    cut: float | None,
    top: int | None,
    confidence: float | None,
    until_stable: bool,
    max_stages: int | None,
    seeding: Path | None,
    entrants: int | None,
    notify: str | None,
    report_every: int | None,
    workers: int | None,
    cluster: str | None,
    quiet: bool,
    debug: bool,
    strict: bool,
    sandbox: str | None,
) -> None:
    """Run a round-robin tournament (or a gauntlet, a Swiss, a knockout or finals) and write
    its result tables.

    With no CONFIG_FILE it runs the demo tournament of the example bots.  Results go to the
    output folder: standings.csv, crosstable.csv, games.jsonl, results.json, report.md and
    the database tournament.sqlite that --resume continues from.
    """
    from tacocat_arena.cli.run import run_command
    from tacocat_arena.launch.sandbox import SandboxMode

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
        seeding=seeding,
        entrants=entrants,
        notify=notify,
        overrides={
            "games_per_pairing": games,
            "seed": seed,
            "concurrency": concurrency,
            "move_timeout_s": move_timeout,
            "time_bank_s": time_bank,
            "out": out,
            "format": _event_format(event_format, gauntlet),
            "gauntlet_bot": gauntlet,
            "rounds": rounds,
            "cut": cut,
            "top": top,
            "confidence": confidence,
            "until_stable": until_stable or None,
            "max_stages": max_stages,
            "sandbox": SandboxMode(sandbox) if sandbox else None,
        },
    )


def _event_format(text: str | None, gauntlet: str | None) -> object:
    """The format ``--format`` and ``--gauntlet`` ask for (None: the config's)."""
    from tacocat_arena.tournament.config import TournamentFormat

    if text is None:
        return None if gauntlet is None else TournamentFormat.GAUNTLET
    chosen = TournamentFormat(text)
    if gauntlet is not None and chosen is not TournamentFormat.GAUNTLET:
        raise click.UsageError(f"--gauntlet plays a gauntlet, not --format {text}: drop one")
    return chosen


def _given(ctx: click.Context) -> set[str]:
    """The parameters the command line set (not left at their defaults): an option a
    command would ignore is refused, not silently dropped."""
    return {
        name
        for name in ctx.params
        if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT
    }


def _flags(names: set[str]) -> str:
    return ", ".join(f"--{name.replace('_', '-')}" for name in sorted(names))


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
@options.move_timeout_option("Time per decision (0 = no limit).", default=1.0)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Output folder (default: a new folder under tacocat-results/matches).",
)
@click.option("--resume", is_flag=True, help="Continue an interrupted match in --out.")
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
@click.option(
    "--pair", is_flag=True, help="A = human: offer the twin game (same deal, seats swapped)."
)
@click.option("--no-browser", is_flag=True, help="A = human: print the page's URL, open nothing.")
@click.option(
    "--human-move-timeout",
    type=click.FloatRange(0, 3600),
    default=120.0,
    show_default=True,
    metavar="SECONDS",
    help="A = human: the person's time per decision (the bot keeps --move-timeout).",
)
def play(
    first: str,
    second: str,
    games: int | None,
    seed: int,
    concurrency: int,
    move_timeout: float,
    out: Path | None,
    resume: bool,
    debug: bool,
    strict: bool,
    sprt: str | None,
    alpha: float,
    beta: float,
    quiet: bool,
    pair: bool,
    no_browser: bool,
    human_move_timeout: float,
) -> None:
    """A quick match between two bots, A and B: each a command ("python my_bot.py"), an
    example bot's name (random, greedy, search) or builtin:NAME.

    It shows the score, the Elo difference A - B with its 95% interval and the likelihood of
    superiority, from duplicate pairs; with --sprt, the test's log-likelihood ratio too.

    A = human: you play B yourself, in a browser page served on 127.0.0.1 (its URL is
    printed), one game or with --pair a duplicate pair (docs/human-seat.md).
    """
    given = _given(click.get_current_context())
    if first == "human":
        unused = given & {"games", "concurrency", "resume", "debug", "strict", "sprt", "alpha",
                          "beta", "quiet"}  # fmt: skip
        if unused:
            raise click.UsageError(
                f"play human takes no {_flags(unused)}: it plays one game (or a pair with "
                "--pair) at your pace, not a match (docs/human-seat.md)"
            )
        from tacocat_arena.cli.human import play_human_command

        play_human_command(
            second,
            pair=pair,
            open_browser=not no_browser,
            human_move_timeout_s=human_move_timeout,
            move_timeout_s=move_timeout,
            seed=seed,
            out=out or Path("tacocat-results") / "human" / time.strftime("%Y%m%d-%H%M%S"),
        )
        return
    unused = given & {"pair", "no_browser", "human_move_timeout"}
    if unused:
        raise click.UsageError(f"{_flags(unused)}: only when A is human (play human BOT)")
    from tacocat_arena.cli.run import match_bots, run_command
    from tacocat_arena.stats.live import DEFAULT_SPRT_GAMES
    from tacocat_arena.stats.sprt import Sprt

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
        if resume:
            raise click.UsageError("--resume continues the match in --out: give its folder")
        out = Path("tacocat-results") / "matches" / time.strftime("%Y%m%d-%H%M%S")
    run_command(
        None,
        bots,
        resume=resume,
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
@click.argument("file", metavar="GAME")
@click.option("--game", "game_id", help="The game's id (default: the first game in GAME).")
@click.option(
    "--html",
    "html_out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the game's replay page (one self-contained HTML file) here instead.",
)
@click.option(
    "--bot",
    "bot_command",
    metavar="COMMAND",
    help="Ask this bot (started as `run` starts it) every decision of --seat in the game, "
    "and print where its answers differ from the record's (docs/why-lose.md).",
)
@click.option(
    "--seat",
    metavar="SEAT",
    help="With --bot: the seat to ask, 0, 1 or a player's name (default: the seat that lost).",
)
@click.option("--json", "as_json", is_flag=True, help="With --bot: print the results as JSON.")
@options.move_timeout_option(
    "With --bot: the allowance per request (default: the record's clock, else 2 s).",
    type=click.FloatRange(0.001, 600),
)
@options.sandbox_option(
    "With --bot: confine the bot as `run` does (auto = bwrap where installed).", default="auto"
)
@click.option(
    "--log",
    type=click.Path(dir_okay=False, path_type=Path),
    help="With --bot: keep the bot's output in this file (default: a temporary file).",
)
@click.option("--token", envvar="TACOCAT_ARENA_TOKEN", help=TOKEN_HELP)
def replay(
    file: str,
    game_id: str | None,
    html_out: Path | None,
    bot_command: str | None,
    seat: str | None,
    as_json: bool,
    move_timeout: float | None,
    sandbox: str,
    log: Path | None,
    token: str | None,
) -> None:
    """A readable turn-by-turn account of a recorded game, its replay page (--html), or the
    game's decisions asked again of a bot (--bot).

    GAME is a tournament's games.jsonl or tournament.sqlite (or its folder), one game
    record (JSON), or an arena's game (http://HOST:PORT/games/ID).  The record is
    re-verified first; one that does not is an error.  With --bot, exit code 1 when the bot
    raised, answered illegally, timed out or crashed on a request.
    """
    from tacocat_arena.cli.why import game_file

    with game_file(file, token) as path:
        _replay(path, game_id, html_out, bot_command, seat, as_json, move_timeout, sandbox, log)


def _replay(
    file: Path,
    game_id: str | None,
    html_out: Path | None,
    bot_command: str | None,
    seat: str | None,
    as_json: bool,
    move_timeout: float | None,
    sandbox: str,
    log: Path | None,
) -> None:
    if bot_command is not None:
        from tacocat_arena.cli.why import replay_bot_command
        from tacocat_arena.launch.sandbox import SandboxMode

        if html_out is not None:
            raise click.UsageError("--bot and --html do not go together")
        replay_bot_command(
            file,
            game_id,
            bot_command,
            seat=seat,
            as_json=as_json,
            move_timeout_s=move_timeout,
            sandbox=SandboxMode(sandbox),
            log=log,
        )
        return
    for name, given in (("--seat", seat), ("--json", as_json), ("--log", log)):
        if given:
            raise click.UsageError(f"{name} goes with --bot")
    from tacocat_arena.cli.run import replay_command, replay_html_command

    if html_out is not None:
        click.echo(replay_html_command(file, game_id, html_out))
        return
    for line in replay_command(file, game_id):
        click.echo(line)


@main.command()
@click.argument("file", metavar="GAME")
@click.option("--game", "game_id", help="The game's id (default: the first game in GAME).")
@click.option(
    "--seat",
    metavar="SEAT",
    help="The seat to analyse, 0, 1 or a player's name (default: the seat that lost).",
)
@click.option(
    "--reference",
    metavar="SPEC",
    help="The reference search: ismcts?iterations=N&seeds=K&uct=C "
    "(default: ismcts?iterations=6000&seeds=4).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the analysis as JSON.")
@click.option(
    "--html",
    "html_out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the game's replay page with the marks, a loss graph and the costliest "
    "decisions here.",
)
@click.option(
    "--hindsight",
    is_flag=True,
    help="Also search each decision in the true deal (the cards the seat could not see), "
    "shown apart and labelled 'with hindsight': never a mark (twice the time).",
)
@click.option("--token", envvar="TACOCAT_ARENA_TOKEN", help=TOKEN_HELP)
def analyze(
    file: str,
    game_id: str | None,
    seat: str | None,
    reference: str | None,
    as_json: bool,
    html_out: Path | None,
    hindsight: bool,
    token: str | None,
) -> None:
    """Each decision of a seat in a recorded game, re-searched from what the seat knew.

    Every action gets its value (the game's win probability) and standard error; the move
    played its loss in win-probability points, marked ?!, ? or ?? only where the loss is
    also past two standard errors; the game an accuracy %.  GAME is as for replay.  See
    docs/why-lose.md for how each figure is computed.
    """
    from tacocat_arena.cli.why import analyze_command, game_file

    with game_file(file, token) as path:
        analyze_command(
            path,
            game_id,
            seat=seat,
            reference=reference,
            as_json=as_json,
            html_out=html_out,
            hindsight=hindsight,
        )


@main.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
def verify(path: Path) -> None:
    """Re-verify every recorded game in PATH: rules, events, results, marks and timings.

    PATH is a game record (JSON), a games.jsonl, a tournament.sqlite or a tournament's output
    folder.  Prints one line per problem (game id, round, rule ID) and a summary; exits 1 on
    any problem.  See docs/game-record.md.
    """
    from tacocat_arena.cli.run import verify_command

    for line in verify_command(path):
        click.echo(line)


main.add_command(serve)  # the arena: cli/serve.py
main.add_command(players)
main.add_command(submit)
main.add_command(submissions)
main.add_command(grade)  # the course's autograder: cli/grade.py


main.add_command(bench)


@main.command()
@click.argument("command")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@options.move_timeout_option(
    "The allowance per decision, in seconds as for run, play and serve (a value over "
    "600 is read as milliseconds, the old unit, with a warning).",
    default=2.0,
    type=click.FloatRange(0.001, 600_000),
)
@click.option(
    "--log",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Keep the bot's output in this file (default: a temporary file).",
)
@click.option(
    "--name",
    default=None,
    help="Tell the bot this name (TACOCAT_ARENA_BOT), as a tournament does; by default it is "
    "told none and names itself in its Hello.",
)
@options.sandbox_option(
    "Confine the bot as `run` does (auto = bwrap where installed).", default="auto"
)
def check(
    command: str,
    as_json: bool,
    move_timeout: float,
    log: Path | None,
    name: str | None,
    sandbox: str,
) -> None:
    """Put a bot through the protocol's conformance checks: run this first on a new bot.

    COMMAND starts the bot as a tournament would, by the same launcher: the same folder rule
    (docs/tournaments.md), sandbox, limits and environment (TACOCAT_ARENA_ADDRESS,
    TACOCAT_ARENA_TOKEN, and TACOCAT_ARENA_BOT with --name); the first line says which
    sandbox.  Every check
    prints PASS or FAIL with what was expected and what came back.  Exit code 0 only when
    all pass.
    """
    from tacocat_arena.cli.check import check_command
    from tacocat_arena.launch.sandbox import SandboxMode

    if move_timeout > 600:
        click.echo(
            f"warning: --move-timeout is in seconds now; {move_timeout:g} is read as "
            f"milliseconds (write --move-timeout {move_timeout / 1000:g})",
            err=True,
        )
        move_timeout /= 1000
    check_command(
        command,
        as_json=as_json,
        move_timeout_s=move_timeout,
        log=log,
        name=name,
        sandbox=SandboxMode(sandbox),
    )
