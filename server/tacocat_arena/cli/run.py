"""The tournament commands' work, kept out of Click so it can be tested as plain functions."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from tacocat_arena.arena.store import DB_NAME as ARENA_DB
from tacocat_arena.arena.verify_arena import is_arena, verify_arena
from tacocat_arena.grade.verify_grade import is_grade, verify_grades
from tacocat_arena.human.challenges import verify_games
from tacocat_arena.launch.bots import BotStartError
from tacocat_arena.launch.builtins import BuiltinError, is_builtin, parse_builtin
from tacocat_arena.launch.sandbox import SandboxError
from tacocat_arena.play.narrate import narrate
from tacocat_arena.referee import ListenError
from tacocat_arena.referee.stopping import Stopped, run_until_signalled, stop_signals
from tacocat_arena.report import render_replay
from tacocat_arena.report.outputs import (
    OUTPUT_FILES,
    Tables,
    compute_tables,
    finish_event,
    write_outputs,
)
from tacocat_arena.report.tables import (
    render_crosstable,
    render_standings,
    render_swiss_standings,
)
from tacocat_arena.report.verify_tables import verify_run_folder
from tacocat_arena.stats.live import EXIT_CODES, default_report_every
from tacocat_arena.stats.pair_report import render_pairings, sprt_closing
from tacocat_arena.stats.sprt import Sprt
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.commitments import (
    COMMITMENT_FILE,
    commitment_words,
)
from tacocat_arena.tournament.config import (
    BUILTIN_BOTS,
    ConfigError,
    TournamentConfig,
    TournamentFormat,
    load_config,
    with_out,
)
from tacocat_arena.tournament.executors import (
    DaskCluster,
    Executor,
    ExecutorError,
    LocalWorkers,
    run_on_workers,
)
from tacocat_arena.tournament.finals import finals_lines, finals_words
from tacocat_arena.tournament.knockout import bracket_lines, first_entrants, reseeded
from tacocat_arena.tournament.lifecycle import Event, open_event, play_event
from tacocat_arena.tournament.notify import check_url, post
from tacocat_arena.tournament.notify import summary as notify_summary
from tacocat_arena.tournament.runner import (
    TournamentRun,
    preflight_bots,
    sandbox_modes,
)
from tacocat_arena.tournament.schedule import games_planned
from tacocat_arena.tournament.stages import STAGED, Stage
from tacocat_arena.tournament.storage import DB_NAME, StorageError, read_games
from tacocat_arena.tournament.verify import (
    GameEntry,
    InputError,
    Verification,
    load_games,
    verify_game,
    verify_lines,
    verify_path,
    with_problems,
)


def run_command(
    config_file: Path | None,
    bots: Sequence[str],
    *,
    overrides: Mapping[str, Any],
    resume: bool,
    quiet: bool,
    debug: bool = False,
    strict: bool = False,
    sprt: Sprt | None = None,
    report_every: int | None = None,
    workers: int | None = None,
    cluster: str | None = None,
    seeding: Path | None = None,
    notify: str | None = None,
    entrants: int | None = None,
) -> None:
    """``tacocat-arena run`` (and ``play``): load, play, write, show.

    ``debug`` is the debug mode of ``--debug``: see ``DEBUG_OVERRIDES``.  ``strict`` sets
    the SDK's strict mode in the environment that the bots inherit.  ``sprt`` (two bots
    only) stops the match once the test decides, and the exit code says how it ended
    (``live.EXIT_CODES``); ``report_every`` prints the standings every so many games (None:
    ``live.default_report_every``, 0: never).  ``workers`` or ``cluster`` play the games
    elsewhere (``tournament.executors``).  ``seeding`` is a prior event's folder whose
    standings order the bots (``knockout.reseeded``), and ``entrants`` keeps the first
    so many of them (``knockout.first_entrants``).  ``notify`` is an http(s) URL that
    gets the event's summary once it has run (``tournament.notify``).
    """
    console = output_console()
    executor = _executor(workers, cluster, debug=debug)
    if strict:
        os.environ[STRICT_ENV] = "1"
    if debug:
        overrides = {**overrides, **DEBUG_OVERRIDES}
        quiet = True  # a progress bar would fight the bots' output
    config = _loaded(
        config_file, overrides, bots, executor, seeding=seeding, entrants=entrants, notify=notify
    )
    moved = ""
    if overrides.get("out") is None and not resume:
        config, moved = _fresh_out(config)
    try:
        event = open_event(config, resume=resume, sprt=sprt)
    except (StorageError, OSError, ConfigError) as error:
        raise click.ClickException(str(error)) from None
    _announce(console, event, moved)
    started = time.monotonic()
    try:
        outcome = _run_with_progress(event, console, quiet, report_every, executor)
    except (BotStartError, ListenError, ExecutorError) as error:
        event.close()
        raise click.ClickException(str(error)) from None
    except Stopped as stop:
        _interrupted(config_file, event, console, stop)
    tables = finish_event(event, outcome)
    _show(console, event, tables, outcome, time.monotonic() - started)
    _after(console, event, tables, notify)


def _after(console: Console, event: Event, tables: Tables, notify: str | None) -> None:
    """Once the files are written: ``--notify``'s POST, then a match's SPRT verdict and its
    exit code (``live.EXIT_CODES``)."""
    out = event.config.out
    if notify is not None:
        document = json.loads((out / "results.json").read_text(encoding="utf-8"))
        body = notify_summary(document["metadata"], document["standings"], document, out)
        if post(notify, body, say=console.print):
            console.print(f"Notified {notify}")
    state = event.sprt
    if state is not None:
        console.print(sprt_closing(state, tables.pairings), soft_wrap=True)
        if EXIT_CODES[state.decision]:
            raise SystemExit(EXIT_CODES[state.decision])


def _loaded(
    config_file: Path | None,
    overrides: Mapping[str, Any],
    bots: Sequence[str],
    executor: Executor | None,
    *,
    seeding: Path | None,
    entrants: int | None,
    notify: str | None,
) -> TournamentConfig:
    """The config (reseeded by a prior event's standings, its first ``entrants`` kept), its
    ``notify`` URL and its bots' commands looked at before anything is written; a Click
    error saying what is wrong."""
    try:
        config = load_config(config_file, overrides, bots)
        if seeding is not None:
            config = reseeded(config, seeding)
        if entrants is not None:
            config = first_entrants(config, entrants)
        if notify is not None:
            check_url(notify)
    except ConfigError as error:
        raise click.ClickException(str(error)) from None
    if executor is not None and config.format in STAGED:
        raise click.UsageError(
            f"a {config.format.value} event plans each round from the last one's results, "
            "here: drop --workers/--cluster"
        )
    try:
        preflight_bots(config)
    except (BotStartError, SandboxError) as error:
        raise click.ClickException(str(error)) from None
    return config


def _announce(console: Console, event: Event, moved: str) -> None:
    """What is about to be played, its commitment and (a match with --sprt) its test."""
    config = event.config
    names = ", ".join(b.name for b in config.bots)
    clock = f"{config.move_timeout_s:g} s per move" if config.move_timeout_s else "no clock"
    console.print(
        f"Tournament: {len(config.bots)} bots ({names}), "
        + _format_words(config)
        + f"{config.games_per_pairing} games per "
        f"pairing, concurrency {config.concurrency}, {clock}; output in {config.out}{moved}"
        + (
            "\nDebug mode: one game at a time, no clock, the bots' output below."
            if config.debug
            else ""
        )
    )
    words = commitment_words(event.commitment)
    console.print(f"Commitment: {words} ({config.out / COMMITMENT_FILE})")
    monitor = event.monitor
    if monitor is not None and monitor.sprt is not None:
        test = monitor.sprt.sprt
        console.print(
            f"SPRT of {monitor.a} against {monitor.b}: H0 elo {test.elo0:g}, H1 elo {test.elo1:g} "
            f"(logistic Elo of A - B), alpha {test.alpha:g}, beta {test.beta:g}; it stops at "
            f"LLR <= {test.lower:.2f} (H0) or >= {test.upper:.2f} (H1), or after "
            f"{config.games_per_pairing} games"
        )
        console.print(sprt_estimate(test, config.games_per_pairing), soft_wrap=True)


def _format_words(config: TournamentConfig) -> str:
    """The announcement's words for a format other than the round robin."""
    if config.format is TournamentFormat.GAUNTLET:
        return f"a gauntlet of {config.gauntlet_name}, "
    if config.format is TournamentFormat.SWISS:
        return f"a Swiss of {config.swiss_rounds} rounds, "
    if config.format is TournamentFormat.KNOCKOUT:
        return (
            f"a knockout (level matches: up to {config.knockout_extra_pairs} more pairs, then "
            "the higher seed), "
        )
    if config.format is TournamentFormat.FINALS:
        return finals_words(config)
    return ""


def _show(
    console: Console, event: Event, tables: Tables, outcome: TournamentRun, elapsed: float
) -> None:
    """The tables once the event is over, what it played, and where its files are."""
    config = event.config
    if tables.swiss is not None:
        console.print(render_swiss_standings(tables.swiss.standings))
    if tables.knockout is not None:
        console.print("\n".join(bracket_lines(tables.knockout)))
    if tables.finals is not None:
        console.print("\n".join(finals_lines(tables.finals)))
    console.print(render_standings(tables.standings))
    console.print(render_crosstable(tables.bots, tables.crosstable))
    title = "Pairs"
    if config.format is TournamentFormat.GAUNTLET:
        title = f"Gauntlet: {config.gauntlet_name} against each opponent"
    console.print(render_pairings(tables.pairings, title=title))
    console.print(
        f"{outcome.played} games played in {elapsed:.1f} s"
        + (f" ({outcome.resumed_from} were already done)" if outcome.resumed_from else "")
        + f". Results: {', '.join(str(config.out / f) for f in OUTPUT_FILES)}"
    )
    for line in run_summary(outcome):
        console.print(line)
    console.print(f"Open the report in a browser: {config.out / 'report.html'}")


def _interrupted(
    config_file: Path | None, event: Event, console: Console, stop: Stopped
) -> NoReturn:
    """After a stop by a signal (every game's task, the bots and the server already ended):
    the partial tables, what is saved, how to resume; exit 128 + the signal's number."""
    config, store = event.config, event.store
    done = store.count()
    planned = games_planned(config)
    tables = write_outputs(config, store, complete=False, planned=planned)
    store.close()
    if done:
        console.print(
            render_standings(
                tables.standings, title=f"Standings (partial: {done} of {planned} games)"
            )
        )
    console.print(
        f"\nInterrupted{'' if stop.signum == signal.SIGINT else f' ({stop.name})'}. {done} "
        f"finished games are saved in {store.path}."
        f"\nResume with: tacocat-arena {_resume_hint(config_file, config)} --resume"
    )
    raise SystemExit(stop.exit_code) from None


def sprt_estimate(test: Sprt, cap_games: int) -> str:
    """How long ``play --sprt`` may take, before its first game (issue 37: a gap of 194 Elo
    took 104 pairs at 0,10 and nobody had said so): the pairs it takes on average if A - B
    is elo1, elo0 or far apart, and the bounds that decide a large gap sooner."""

    def pairs(elo: float) -> str:
        expected = test.expected_pairs(elo)
        over = f" (over the cap of {cap_games // 2})" if expected * 2 > cap_games else ""
        return f"~{expected:.0f} pairs{over}"

    wide = Sprt(test.elo0, test.elo0 + 100, test.alpha, test.beta).expected_pairs(test.elo0 + 200)
    line = (
        f"Estimate (normal approximation): {pairs(test.elo1)} if A - B is {test.elo1:g} Elo, "
        f"{pairs(test.elo0)} if {test.elo0:g}, {pairs(test.elo0 + 200)} if "
        f"{test.elo0 + 200:g}"
    )
    if test.elo1 - test.elo0 < 100:
        line += (
            f"; for a gap you expect to be large, --sprt {test.elo0:g},{test.elo0 + 100:g} "
            f"decides one of {test.elo0 + 200:g} Elo in ~{wide:.0f} pairs"
        )
    return line


def run_summary(outcome: TournamentRun) -> list[str]:
    """What went wrong with bots in a run: games not played, processes that ended badly."""
    lines = []
    if outcome.unplayed:
        lines.append(
            f"{outcome.unplayed} games went unplayed (a bot crashed more often than "
            "max_restarts allows; each is recorded as its forfeit)"
        )
    for name, ends in outcome.exits.items():
        lines.append(f"bot {name}: {'; '.join(ends)} (see logs/{name}.log)")
    return lines


def output_console() -> Console:
    """The console of stdout.  Where stdout is not a terminal (a file, a pipe, CI) and no
    COLUMNS is set, lines are not wrapped at rich's default of 80 columns, so that a table
    row or a path stays on one line for grep and for whoever reads the log."""
    if sys.stdout.isatty() or "COLUMNS" in os.environ:
        return Console()
    return Console(width=_UNWRAPPED_WIDTH)


_UNWRAPPED_WIDTH = 1000


@contextlib.contextmanager
def sigterm_as_ctrl_c() -> Iterator[list[int]]:
    """Within the block (``--workers``: a loop of no asyncio), SIGTERM (``kill``, systemd, a
    container stop) and SIGHUP (the terminal closing, unless ``nohup`` ignored it) do what
    Ctrl-C does: KeyboardInterrupt, the workers' batches abandoned, the finished games kept.
    (In process, ``referee.stopping`` handles these signals.)

    It calls the SIGINT handler in force, or raises KeyboardInterrupt where SIGINT is
    ignored (a background job).  The list it yields gets the signal's number once one has
    arrived.
    """
    received: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt

    previous: dict[signal.Signals, Any] = {}
    try:
        for signum in stop_signals():
            if signum != signal.SIGINT:
                previous[signum] = signal.signal(signum, on_signal)
    except ValueError:  # not the main thread: leave the signals alone
        yield received
        return
    try:
        yield received
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _progress(console: Console, quiet: bool, event: Event) -> Progress:
    """The progress line: a bar with the rate and ETA, or a match's score, Elo and LLR."""
    columns: list[ProgressColumn | str] = [
        TextColumn("[bold]games"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    ]
    if event.monitor is not None:  # a match: its score, Elo and LLR matter more than a bar
        columns = [TextColumn("[bold]{task.completed} games:"), "{task.fields[match]}"]
    return Progress(*columns, console=console, disable=quiet, transient=False)


def _run_with_progress(
    event: Event, console: Console, quiet: bool, report_every: int | None, executor: Executor | None
) -> TournamentRun:
    """Play the event (``play_event``, or on ``executor``'s workers) under a progress line,
    with the standings every ``report_every`` games."""
    config, store, monitor = event.config, event.store, event.monitor
    progress = _progress(console, quiet, event)
    task_id = progress.add_task(
        "games", total=None, rate="", match=monitor.progress_text() if monitor else ""
    )
    started = time.monotonic()
    first_done = every = 0

    def on_start(total: int, done: int) -> None:
        nonlocal first_done, every
        first_done = done
        every = default_report_every(total) if report_every is None else report_every
        progress.update(task_id, total=total, completed=done)

    def on_game(result: GameResult, done: int, total: int) -> None:
        rate = (done - first_done) / max(1e-9, time.monotonic() - started)
        progress.update(task_id, completed=done, rate=f"{rate:.1f} games/s")
        if config.debug:
            progress.console.print(f"game {done}/{total}: {describe_result(result)}")
        if monitor is not None:  # counted by the event already (Event.watch)
            progress.update(task_id, match=monitor.progress_text())
        if every and not quiet and done % every == 0 and done < total:
            standings = compute_tables(config, store).standings
            progress.console.print(render_standings(standings, title=f"After {done} games"))

    if executor is not None:
        return _on_workers(event, executor, progress, on_start, on_game)

    def on_stage(stage: Stage) -> None:
        progress.console.print("\n".join(stage.lines[:1] if quiet else stage.lines))

    with progress:
        return run_until_signalled(
            play_event(
                event,
                on_start=on_start,
                on_game=on_game,
                on_stage=on_stage,
                on_notice=progress.console.print,
                # A sequential test sees pairs end as it goes: phases of a few pairs each.
                pairs_per_phase=16,
            )
        )


def _on_workers(
    event: Event,
    executor: Executor,
    progress: Progress,
    on_start: Callable[[int, int], None],
    on_game: Callable[[GameResult, int, int], None],
) -> TournamentRun:
    """The event's games on ``executor``, in batches of duplicate pairs (no event loop here:
    SIGTERM and SIGHUP stop them as Ctrl-C does)."""
    progress.console.print(f"Games run on {executor.description}, in batches of duplicate pairs")
    sandbox_modes(event.config, progress.console.print)  # as each worker starts its bots
    with progress, sigterm_as_ctrl_c() as terminated:
        try:
            return run_on_workers(
                event.config,
                event.store,
                executor,
                on_start=on_start,
                on_game=event.watch(on_game),
                on_notice=progress.console.print,
            )
        except KeyboardInterrupt:
            raise Stopped(terminated[0] if terminated else signal.SIGINT) from None


def _executor(workers: int | None, cluster: str | None, *, debug: bool) -> Executor | None:
    """Where the games run: here (None), in local workers, or on a Dask cluster."""
    if workers is None and cluster is None:
        return None
    if workers is not None and cluster is not None:
        raise click.UsageError("--workers and --cluster exclude each other: choose one")
    if debug:
        raise click.UsageError("--debug plays in this process: drop --workers/--cluster")
    if cluster is not None:
        return DaskCluster(cluster)
    assert workers is not None
    return LocalWorkers(workers)


#: The variable that puts the Python SDK in strict mode (``tacocat_bot.client.STRICT_ENV``;
#: the tournament layer does not import the SDK).
STRICT_ENV = "TACOCAT_BOT_STRICT"

#: What ``--debug`` sets: no clock at all (the referee waits as long as a bot stands at a
#: breakpoint), and one game at a time so that the bots' output reads in order.
DEBUG_OVERRIDES: Mapping[str, Any] = {
    "move_timeout_s": 0.0,
    "time_bank_s": 0.0,
    "concurrency": 1,
    "debug": True,
}


def describe_result(result: GameResult) -> str:
    """One line for a finished game: who won, how, in how many rounds."""
    if result.winner is None:
        head = "draw"
    else:
        head = f"{result.seats[result.winner]} won"
    by = f" ({result.seats[result.forfeit_by]} forfeited)" if result.forfeit_by is not None else ""
    return (
        f"{result.game_id}, {result.seats[0]} vs {result.seats[1]}: {head} by {result.reason.value}"
        f"{by} after {result.rounds} rounds"
    )


def _fresh_out(config: TournamentConfig) -> tuple[TournamentConfig, str]:
    """The config with an output folder of its own when none was asked for (no ``--out``)
    and the default one holds games of another tournament, or a finished one: the demo's
    ``tacocat-results``, or this very command's before its bot's code changed.  A reader
    who runs the next documented command must not be refused, nor lose those results.  The
    first of ``OUT-2``, ``OUT-3``... holding no game is taken; the text (for the header
    line) says why.  An unfinished run of this same tournament keeps its folder: the store
    then says to add --resume."""
    held, fingerprint = _games_in(config.out)
    if not held or (fingerprint == config.fingerprint() and not _complete(config.out)):
        return config, ""
    for number in range(2, 10_000):
        candidate = config.out.with_name(f"{config.out.name}-{number}")
        if not _games_in(candidate)[0]:
            return (
                with_out(config, candidate),
                f" ({config.out} already holds {held} games; --out chooses a folder)",
            )
    return config, ""  # 10,000 runs: let the store's own message say it


def _games_in(folder: Path) -> tuple[int, str | None]:
    """How many finished games the tournament database in ``folder`` holds (0: none) and
    the fingerprint of the tournament they belong to, read without writing anything."""
    path = folder / DB_NAME
    if not path.is_file():
        return 0, None
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
            (count,) = db.execute("SELECT COUNT(*) FROM games").fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return 1, None  # unreadable: not ours to take over
    return int(count), None if row is None else str(row[0])


def _complete(folder: Path) -> bool:
    """Whether the tournament in ``folder`` ran to its end (its results.json says so)."""
    try:
        metadata = json.loads((folder / "results.json").read_text(encoding="utf-8"))["metadata"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return bool(metadata.get("complete"))


def _resume_hint(config_file: Path | None, config: TournamentConfig) -> str:
    """The arguments after ``tacocat-arena`` that resume this run: the command line as
    typed (its --bot options, its overrides: they make the tournament's fingerprint)
    with --out set to the folder actually used, or else the config file and --out."""
    words = sys.argv[1:]
    context = click.get_current_context(silent=True)
    if context is not None and words and words[0] == context.info_name:
        kept: list[str] = []
        skip = False
        for word in words:
            if skip:
                skip = False
            elif word == "--out":
                skip = True
            elif not word.startswith("--out=") and word != "--resume":
                kept.append(word)
        return shlex.join([*kept, "--out", str(config.out)])
    parts = ["run", str(config_file)] if config_file else ["run"]
    return shlex.join([*parts, "--out", str(config.out)])


#: How ``play FILE`` runs a script named alone (it need not be executable, nor on PATH).
_INTERPRETERS = {".py": "python", ".js": "node", ".mjs": "node"}


def match_bots(first: str, second: str) -> list[str]:
    """``--bot`` specs for ``tacocat-arena play A B``: names from the commands (a script
    named alone, ``mine.py``, runs with its interpreter)."""
    specs = [match_bot(text, index) for index, text in enumerate((first, second))]
    if specs[0][0] == specs[1][0]:
        specs[0][0] += "-A"
        specs[1][0] += "-B"
    return [f"{name}={command}" for name, command in specs]


def match_bot(text: str, index: int = 0) -> list[str]:
    """[name, command] of one of ``play``'s bots (``index``: 0 for A, 1 for B)."""
    command = f"builtin:{text}" if text.partition("?")[0] in BUILTIN_BOTS else text
    interpreter = _INTERPRETERS.get(Path(text).suffix)
    if interpreter and Path(text).is_file():
        command = shlex.join([interpreter, text])  # `play mine.py ...`: a script, run
    if is_builtin(command):
        try:
            name = parse_builtin(command).label
        except BuiltinError as error:
            raise click.ClickException(str(error)) from None
    else:
        try:
            words = shlex.split(command)
        except ValueError as error:
            raise click.ClickException(f"cannot parse {text!r}: {error}") from None
        if len(words) == 1 and shutil.which(words[0]) is None and not Path(words[0]).exists():
            builtins = ", ".join(BUILTIN_BOTS)
            raise click.ClickException(
                f"{'AB'[index]} = {text!r} is neither an example bot ({builtins}) nor a "
                'command found on your PATH; give a command such as "python my_bot.py"'
            )
        words = words or [f"bot{index}"]
        name = Path(words[-1]).stem or f"bot{index}"
    return [name, command]


def replay_command(file: Path, game_id: str | None) -> Iterator[str]:
    """Lines of ``tacocat-arena replay``: verify the record, then narrate it; a record that
    does not re-verify is an error (it names the round and rule), never a narration."""
    entry = load_game_entry(file, game_id)
    record = entry.record
    names = entry.seat_names
    if not record.get("unplayed"):
        _reverify(entry)  # before any output: a record that does not verify is not told
    header = f"Game {entry.game_id}: {names[0]} (seat 0) vs {names[1]} (seat 1)"
    yield header + f", seed {record.get('seed')}"
    if record.get("unplayed"):
        yield f"Not played: {record['unplayed']}"
        return
    yield "(record re-verified against the rules: every action legal, every event matches)"
    yield from narrate(record, names)


def replay_html_command(file: Path, game_id: str | None, out: Path) -> str:
    """``tacocat-arena replay --html OUT``: write the game's replay page; return a summary."""
    entry = load_game_entry(file, game_id)
    record = entry.record
    if record.get("unplayed"):
        raise click.ClickException(f"game {entry.game_id} was not played: {record['unplayed']}")
    _reverify(entry)
    page = render_replay(dict(record), list(entry.seat_names), game_id=entry.game_id)
    try:
        out.write_text(page, encoding="utf-8")
    except OSError as error:
        raise click.ClickException(f"cannot write {out}: {error.strerror}") from None
    return f"Replay of game {entry.game_id} written to {out} (open it in a browser)"


def _reverify(entry: GameEntry) -> None:
    problems = verify_game(entry)
    if problems:
        raise click.ClickException(
            f"the record of game {problems[0]} (it does not re-verify; "
            "tacocat-arena verify lists every problem)"
        )


def load_game_entry(file: Path, game_id: str | None) -> GameEntry:
    """The game ``game_id`` (the first by default) of a games.jsonl, a tournament.sqlite or
    one game record."""
    try:
        entries = load_games(file)
    except InputError as error:
        raise click.ClickException(str(error)) from None
    if not entries:
        raise click.ClickException(f"{file} holds no game")
    if game_id is None:
        return entries[0]
    for entry in entries:
        if entry.game_id == game_id:
            return entry
    ids = ", ".join(entry.game_id for entry in entries[:5])
    raise click.ClickException(f"no game {game_id!r} in {file} (first ids: {ids}, ...)")


def verify_any(path: Path) -> Verification:
    """``verify`` of whatever the product wrote at ``path``: a tournament's (or a grading
    tier's) output folder with its tables, or a record file; the folder kinds of the rooms
    above the tournament's are told apart here, where they meet."""
    if is_arena(path):
        human = path / "human" if path.is_dir() else path.parent / "human"
        if not (human / "games.sqlite").is_file():
            return verify_arena(path)
        # A person's games (human/challenges.py), also in an arena whose store has none yet.
        store = path / ARENA_DB if path.is_dir() else path
        played = next(read_games(store), None) is not None
        result = verify_arena(path) if played else Verification(0, 0, 0, ())
        return with_problems(result, *verify_games(human))
    if is_grade(path):
        return verify_grades(path)
    if path.is_dir():
        return verify_run_folder(path)
    return verify_path(path)


def verify_command(path: Path) -> Iterator[str]:
    """Lines of ``tacocat-arena verify``; raises ClickException (exit 1) on any problem."""
    try:
        result = verify_any(path)
    except InputError as error:
        raise click.ClickException(str(error)) from None
    lines = list(verify_lines(result, path))
    yield from lines[:-1]
    if not result.ok:
        raise click.ClickException(lines[-1])
    yield lines[-1]
