"""Running a tournament: referee on loopback, bot processes, parallel games, durable results.

``run_tournament`` hosts the referee in process on 127.0.0.1 (a free port) and on one Unix
socket per sandboxed bot process, starts every bot, plays the planned games that the database
does not hold yet, up to ``concurrency`` at a time, and commits each finished game before it
counts.  A bot whose process dies is restarted (its games in progress are lost by it,
recorded with reason "crash" and how the process ended); one that keeps dying, past
``max_restarts``, forfeits its remaining games without playing them.

Twins: with ``twins`` on (the default) each bot runs as two processes, instance A (identity
``NAME``) for the first game of every duplicate pair and instance B (``NAME~B``) for its
twin, so no process ever holds a hand it will later face as its opponent's; and the two are
never alive at once (``twin_phases``: A plays the first games, then B the second ones), so
neither can pass the other what it holds.  The deals mix
the store's secret (``schedule.deal_seed``), so the config's seed alone predicts nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tacocat_arena.engine import Outcome, Termination
from tacocat_arena.launch import folder, game_output, sandbox
from tacocat_arena.launch.bots import (
    BotProcess,
    BotStartError,
    ExternalBot,
    Launch,
    check_command,
    new_token,
)
from tacocat_arena.launch.sandbox import SandboxMode, describe_limits, resolve_mode
from tacocat_arena.launch.scratch import owned_folder
from tacocat_arena.referee import GameReport, Referee, start_server, stop_server
from tacocat_arena.referee.peers import PeerCheck
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.config import TWIN_SUFFIX, BotSpec, TournamentConfig
from tacocat_arena.tournament.schedule import PlannedGame, tournament_plan
from tacocat_arena.tournament.storage import TournamentStore

ProgressCallback = Callable[[GameResult, int, int], None]


@dataclass(frozen=True)
class TournamentRun:
    """How a run went: games planned, already done before it, and played by it; how many of
    those were recorded unplayed (a bot past its restarts), and every bot process that
    ended on its own with an error (identity -> how, in order)."""

    planned: int
    resumed_from: int
    played: int
    unplayed: int = 0
    exits: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: Seconds each started process took to connect (identity -> one per start).
    startup_s: Mapping[str, tuple[float, ...]] = field(default_factory=dict)


def identities(bot: BotSpec, twins: bool) -> tuple[str, ...]:
    """The names a bot's processes connect as: one, or its A and B instances."""
    return (bot.name, bot.name + TWIN_SUFFIX) if twins and not bot.is_external else (bot.name,)


async def run_tournament(
    config: TournamentConfig,
    store: TournamentStore,
    *,
    on_start: Callable[[int, int], None] = lambda total, done: None,
    on_game: ProgressCallback = lambda result, done, total: None,
    host: str = "127.0.0.1",
    port: int = 0,
    tokens: Mapping[str, str] | None = None,
    on_listening: Callable[[int], None] = lambda port: None,
    should_stop: Callable[[], bool] = lambda: False,
    on_notice: Callable[[str], None] = lambda text: None,
    plan: Sequence[PlannedGame] | None = None,
    pairs_per_phase: int | None = None,
) -> TournamentRun:
    """Play every planned game missing from ``store``; see the module docstring.

    Once ``should_stop()`` is true (a sequential test has decided) no further game starts;
    the games already in play finish and are saved.  With twins, the pairs are played in
    phases of ``pairs_per_phase`` pairs (``twin_phases``; all at once if None), each a
    restart of every bot: a sequential test gives a number, so that pairs end as it goes.

    Bots with a command are started here with generated tokens; bots without one (remote
    bots, which only this function's callers can configure: ``run`` starts every bot it
    plays) connect to ``host:port`` by themselves with their token from ``tokens``.
    ``on_notice`` receives what the organizer should know before the games start: which
    sandbox each bot runs in, which limits are in force, and any warning about them.
    """
    # A worker plays the batch it was given (tournament.executors); a run plans it all.
    plan = list(plan) if plan is not None else tournament_plan(config, store)
    finished = store.finished_ids()
    todo = [game for game in plan if game.game_id not in finished]
    on_start(len(plan), len(plan) - len(todo))
    if not todo:
        return TournamentRun(len(plan), len(plan), 0)

    modes = sandbox_modes(config, on_notice)

    all_ids = {ident: bot for bot in config.bots for ident in identities(bot, config.twins)}
    secrets_by_name = {ident: new_token() for ident in all_ids}
    secrets_by_name.update(tokens or {})
    processes: dict[str, BotProcess | ExternalBot] = {}
    peer_check = PeerCheck()
    referee = _referee(config, secrets_by_name, processes, peer_check)
    socket_dir, sockets = _sockets(all_ids, modes, peer_check)
    try:
        placements = _placements(config, modes, socket_dir, store, on_notice)
        server, port = await start_server(
            referee, host, port, unix_sockets=[str(p) for p in sockets.values()]
        )
    except BaseException:
        shutil.rmtree(socket_dir, ignore_errors=True)
        raise
    for path in sockets.values():
        sandbox.admit_bot(path)
    peer_check.tcp_port = port
    on_listening(port)
    processes.update(
        _processes(config, all_ids, secrets_by_name, modes, sockets, port, peer_check, placements)
    )
    try:
        # Bots that connect by themselves are awaited now; started ones phase by phase.
        remote = [p for p in processes.values() if isinstance(p, ExternalBot)]
        await asyncio.gather(*(p.wait_connected(referee, config.connect_timeout_s) for p in remote))
        counts = await _play_all(
            todo, len(plan), referee, processes, config, store, should_stop, on_game,
            pairs_per_phase,
        )  # fmt: skip
    finally:
        await referee.end_all_sessions("the tournament is over")
        await asyncio.gather(*(p.stop() for p in processes.values()), return_exceptions=True)
        with contextlib.suppress(Exception):
            await stop_server(server, 1.0)
        shutil.rmtree(socket_dir, ignore_errors=True)
    return _summary(len(plan), len(plan) - len(todo), counts, processes)


def _referee(
    config: TournamentConfig,
    tokens: Mapping[str, str],
    processes: Mapping[str, BotProcess | ExternalBot],
    peer_check: PeerCheck,
) -> Referee:
    """The tournament's referee: its tokens, its peer check, and a lost connection called a
    crash when the bot's process (in ``processes``, filled once they exist) died."""

    async def classify_disconnect(name: str) -> Termination:
        # A process killed outright (kill -9) closes its socket before it is reaped: give
        # the exit time to show, so that a crash is never called a disconnect.
        crashed = await processes[name].has_exited(within=5.0)
        return Termination.FORFEIT_CRASH if crashed else Termination.FORFEIT_DISCONNECT

    return Referee(
        tokens,
        config.referee_settings,
        classify_disconnect=classify_disconnect,
        check_peer=peer_check,
    )


def _summary(
    total: int,
    done_before: int,
    counts: tuple[int, int],
    processes: Mapping[str, BotProcess | ExternalBot],
) -> TournamentRun:
    """What the run did, with each started process's crashes and start-up times."""
    exits = {
        ident: tuple(process.crashes)
        for ident, process in processes.items()
        if isinstance(process, BotProcess) and process.crashes
    }
    startup = {
        ident: tuple(process.startup_s)
        for ident, process in processes.items()
        if isinstance(process, BotProcess)
    }
    return TournamentRun(total, done_before, *counts, exits, startup)


def _sockets(
    all_ids: Mapping[str, BotSpec], modes: Mapping[str, SandboxMode], peer_check: PeerCheck
) -> tuple[Path, dict[str, Path]]:
    """A private folder and, in it, each sandboxed identity's own Unix socket (its only way
    out of the sandbox), each one watched by the peer check."""
    # Named for this process: a runner killed with -9 leaves it, the next one removes it.
    socket_dir = owned_folder("run")
    sockets = {
        ident: socket_dir / f"{ident}.sock"
        for ident, bot in all_ids.items()
        if modes.get(bot.name) is SandboxMode.BWRAP
    }
    for ident, path in sockets.items():
        peer_check.listen(ident, path)
    return socket_dir, sockets


def sandbox_modes(
    config: TournamentConfig, on_notice: Callable[[str], None]
) -> dict[str, SandboxMode]:
    """Each started bot's resolved sandbox; the organizer is told them and the limits (by
    ``run`` before it hands games to workers too: they start their bots the same way)."""
    started = [bot for bot in config.bots if not bot.is_external]
    # Each mode asked for is resolved once: its warning (no bwrap under auto) said once.
    resolved = {
        asked: resolve_mode(asked, warn=on_notice)
        for asked in dict.fromkeys(bot.sandbox or config.sandbox for bot in started)
    }
    modes = {bot.name: resolved[bot.sandbox or config.sandbox] for bot in started}
    if started:
        by_mode: dict[SandboxMode, list[str]] = {}
        for name, mode in modes.items():
            by_mode.setdefault(mode, []).append(name)
        on_notice(
            "Sandbox: "
            + "; ".join(f"{mode} for {', '.join(bots)}" for mode, bots in by_mode.items())
            + (". Twins: two processes per bot (A, B), never alive at once" if config.twins else "")
        )
        for limits, mode in dict.fromkeys(
            (bot.limits or config.limits, modes[bot.name]) for bot in started
        ):
            on_notice(f"Limits per bot process ({mode}): {describe_limits(limits, mode)}")
    return modes


def _placements(
    config: TournamentConfig,
    modes: Mapping[str, SandboxMode],
    scratch: Path,
    store: TournamentStore,
    on_notice: Callable[[str], None],
) -> dict[str, folder.Placement]:
    """Each started bot's folder and command line (``folder.place``); for a root runner's
    bot whose folder its uid cannot read, a private copy (``folder.readable_copy``, in the
    run's own scratch folder), said once with its size and recorded with its hash."""
    placements = {}
    for bot in config.bots:
        if bot.is_external:
            continue
        placement = folder.place(bot, config.base_dir)
        try:
            placement, snapshot = folder.readable_copy(
                bot, placement, modes[bot.name], scratch / "snapshots"
            )
        except OSError as error:
            raise BotStartError(
                f"bot {bot.name!r}: cannot copy its folder: {error}", bot=bot.name
            ) from None
        if snapshot is not None:
            on_notice(snapshot.describe(bot.name))
            store.record_snapshot(bot.name, snapshot.sha256)
        placements[bot.name] = placement
    return placements


def _processes(
    config: TournamentConfig,
    all_ids: Mapping[str, BotSpec],
    tokens: Mapping[str, str],
    modes: Mapping[str, SandboxMode],
    sockets: Mapping[str, Path],
    port: int,
    peer_check: PeerCheck,
    placements: Mapping[str, folder.Placement],
) -> dict[str, BotProcess | ExternalBot]:
    """One process per identity (a bot, or each twin), as ``Launch`` describes it."""
    log_dir = config.out / "logs"
    hide = _private_paths(config)
    processes: dict[str, BotProcess | ExternalBot] = {}
    for ident, bot in all_ids.items():
        if bot.is_external:
            processes[ident] = ExternalBot(bot)
            continue
        placement = placements[bot.name]
        own_dir = placement.folder
        processes[ident] = BotProcess(
            bot,
            Launch(
                identity=ident,
                token=tokens[ident],
                log_path=log_dir / f"{ident}.log",
                cwd=own_dir,
                mode=modes[bot.name],
                limits=bot.limits or config.limits,
                tcp_address=f"127.0.0.1:{port}",
                socket_path=sockets.get(ident),
                hide=tuple(p for p in hide if p != own_dir),
                log_limit_bytes=config.log_limit_kib * 1024,
                peer_check=peer_check,
                echo=config.debug,
                argv=placement.argv,
            ),
        )
    return processes


async def _play_all(
    todo: Sequence[PlannedGame],
    total: int,
    referee: Referee,
    processes: dict[str, BotProcess | ExternalBot],
    config: TournamentConfig,
    store: TournamentStore,
    should_stop: Callable[[], bool],
    on_game: ProgressCallback,
    pairs_per_phase: int | None,
) -> tuple[int, int]:
    """Play ``todo`` phase by phase (``twin_phases``) with bounded concurrency, saving each
    game before it counts; return how many were played and how many decided unplayed."""
    done = total - len(todo)
    played = unplayed = 0
    slots = asyncio.Semaphore(config.concurrency)

    async def play(planned: PlannedGame) -> None:
        nonlocal done, played, unplayed
        # An absent bot is waited for before the game takes a slot, and again if it left
        # while the game waited for one: waiting games never hold slots that games
        # between present bots could use.
        seats = [_instance(name, planned, processes) for name in planned.seats]
        while True:
            present = [
                await processes[name].ensure_running(
                    referee, config.connect_timeout_s, config.max_restarts
                )
                for name in seats
            ]
            await slots.acquire()
            if all(present) and not all(map(referee.live_session, seats)):
                slots.release()
                continue
            break
        try:
            if should_stop():
                return
            captures = _capture_output(planned, processes, config)
            try:
                report = await _play_one(planned, referee, processes, config)
            finally:
                for process, capture in captures:
                    process.log.taps.close(capture.game_id)
                    game_output.save(config.out / game_output.OUTPUT_DIR, capture)
            result = game_result(report, planned.seats)
            store.save(result, report.detail, report.record)
            done += 1
            played += 1
            unplayed += bool(report.record.get("unplayed"))
            on_game(result, done, total)
        finally:
            slots.release()

    for phase in twin_phases(todo, config.twins, pairs_per_phase):
        if should_stop():
            break
        await _bring_in(phase, processes, referee, config)
        tasks = [asyncio.create_task(play(game)) for game in phase]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    return played, unplayed


def preflight_bots(config: TournamentConfig) -> None:
    """Before anything is written: BotStartError if a started bot's program cannot be found
    or its command names a path its sandbox will not show (``launch.folder``); SandboxError
    if a bot asks for bwrap where there is none."""
    for bot in config.bots:
        if bot.is_external:
            continue
        mode = resolve_mode(bot.sandbox or config.sandbox, warn=lambda _: None)  # said later
        placement = folder.place(bot, config.base_dir)
        check_command(
            bot, placement.folder, sandboxed=mode is SandboxMode.BWRAP, argv=list(placement.argv)
        )
        try:
            folder.preflight(bot, placement, mode)
        except folder.FolderError as error:
            raise BotStartError(str(error), bot=bot.name) from None


def twin_phases(
    todo: Sequence[PlannedGame], twins: bool, pairs_per_phase: int | None = None
) -> list[list[PlannedGame]]:
    """The games in the order of the processes that play them.  With twins, the duplicate
    pairs go in batches of ``pairs_per_phase`` (all of them if None): first every batch's
    first games (the A instances), then its second games (the B instances, A's stopped), as
    ACPC restarts bots between the halves of a duplicate match.  So no instance is alive
    while its twin plays a deal it has seen, and no channel between live processes (a lock
    on a file both see, the CPU's load) can carry a hand across."""
    if not twins:
        return [list(todo)]
    batches: list[list[PlannedGame]] = []
    pairs: set[tuple[frozenset[str], int]] = set()
    for game in todo:
        pair = (frozenset(game.seats), game.deal)
        if pair not in pairs and pairs_per_phase and len(pairs) == pairs_per_phase:
            pairs.clear()
        if not pairs:
            batches.append([])
        pairs.add(pair)
        batches[-1].append(game)
    halves = (
        [g for g in batch if g.twin is second] for batch in batches for second in (False, True)
    )
    return [half for half in halves if half]


async def _bring_in(
    phase: Sequence[PlannedGame],
    processes: Mapping[str, BotProcess | ExternalBot],
    referee: Referee,
    config: TournamentConfig,
) -> None:
    """Pause every started process that plays none of ``phase``, then start (or resume)
    those that do and wait for them to connect."""
    needed = {_instance(name, game, processes) for game in phase for name in game.seats}
    idle = [p for i, p in processes.items() if i not in needed and isinstance(p, BotProcess)]
    await asyncio.gather(*(process.pause() for process in idle))
    wanted = [p for i, p in processes.items() if i in needed and isinstance(p, BotProcess)]
    await asyncio.gather(*(p.resume(referee, config.connect_timeout_s) for p in wanted))


def _private_paths(config: TournamentConfig) -> list[Path]:
    """What no sandboxed bot may see even inside its own folder: the config file, the
    output folder (the store, the logs) and every bot's folder but the config's own (each
    bot's own is taken out of the list for it)."""
    paths = [config.out.resolve()]
    if config.config_file is not None:
        paths.append(config.config_file)
    placed = (folder.place(bot, config.base_dir).folder for bot in config.bots if bot.command)
    paths += [path for path in placed if path != config.base_dir]
    return paths


def _capture_output(
    planned: PlannedGame,
    processes: Mapping[str, BotProcess | ExternalBot],
    config: TournamentConfig,
) -> list[tuple[BotProcess, game_output.GameCapture]]:
    """With ``game_output_kib``, open the game's capture on each started process it plays
    (closed once the game is over, a crashed process's last words read: ``_play_one``)."""
    if config.game_output_kib <= 0:
        return []
    captures = []
    for name in dict.fromkeys(_instance(n, planned, processes) for n in planned.seats):
        process = processes[name]
        if isinstance(process, BotProcess):
            cap = config.game_output_kib * 1024
            captures.append((process, process.log.taps.open(planned.game_id, cap)))
    return captures


def _instance(name: str, planned: PlannedGame, processes: Mapping[str, object]) -> str:
    twin = name + TWIN_SUFFIX
    return twin if planned.twin and twin in processes else name


async def _play_one(
    planned: PlannedGame,
    referee: Referee,
    processes: dict[str, BotProcess | ExternalBot],
    config: TournamentConfig,
) -> GameReport:
    """Play one planned game, restarting dead bots first; a bot past its restarts forfeits.
    A crash's detail says how the process ended (and the limit it ran into)."""
    seats = (
        _instance(planned.seats[0], planned, processes),
        _instance(planned.seats[1], planned, processes),
    )
    for seat, name in enumerate(seats):
        alive = await processes[name].ensure_running(
            referee, config.connect_timeout_s, config.max_restarts
        )
        if not alive:
            if isinstance(processes[name], ExternalBot):
                detail = f"{name} (seat {seat}) was not connected; game not played"
                return _unplayed(planned, seat, detail, Termination.FORFEIT_DISCONNECT)
            last = processes[name].last_exit()
            detail = (
                f"{name} (seat {seat}) crashed more than {config.max_restarts} times"
                + (f" (last: {last})" if last else "")
                + "; game not played"
            )
            return _unplayed(planned, seat, detail, Termination.FORFEIT_CRASH)
    try:
        report = await referee.play(
            planned.game_id,
            seats,
            seed=planned.seed,
            ruleset=config.ruleset,
            match_info=f"deal {planned.deal}",
        )
    except LookupError:
        # A bot vanished between the check and the start: count it as its crash.
        for seat, name in enumerate(seats):
            if referee.live_session(name) is None:
                detail = f"{name} (seat {seat}) is not connected"
                return _unplayed(planned, seat, detail, Termination.FORFEIT_DISCONNECT)
        raise
    report.players = planned.seats  # the record names the bots, whichever instance played
    loser = report.forfeit_by
    if report.outcome.termination is Termination.FORFEIT_CRASH and loser is not None:
        how = await processes[seats[loser]].ended()
        if how:
            report.add_to_detail(how)
    return report


def _unplayed(planned: PlannedGame, seat: int, detail: str, termination: Termination) -> GameReport:
    outcome = Outcome(termination, 1 - seat)
    return GameReport.unplayed(planned.game_id, planned.seats, planned.seed, outcome, detail)


def game_result(report: GameReport, seats: tuple[str, str] | None = None) -> GameResult:
    """The stored result of a referee's report; ``seats`` names the bots when the sessions
    that played were other instances of them (twins: ``NAME~B``)."""
    return GameResult(
        game_id=report.game_id,
        seats=seats or report.seats,
        seed=report.seed,
        winner=report.outcome.winner,
        reason=report.outcome.termination,
        rounds=report.rounds,
        decisions=(report.decisions[0], report.decisions[1]),
        decision_ms=(report.think_ms[0], report.think_ms[1]),
        forfeit_by=report.forfeit_by,
        fallbacks=report.fallbacks,
    )
