"""Running a tournament: referee on loopback, bot processes, parallel games, durable results.

``run_tournament`` hosts the referee in process on 127.0.0.1 (a free port), starts every bot,
plays the planned games that the database does not hold yet, up to ``concurrency`` at a time,
and commits each finished game before it counts.  A bot whose process dies is restarted (its
games in progress are lost by it, recorded with reason "crash"); one that keeps dying, past
``max_restarts``, forfeits its remaining games without playing them.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tacocat_arena.engine import Outcome, Termination
from tacocat_arena.engine import record as record_format
from tacocat_arena.referee import GameReport, Referee, start_server
from tacocat_arena.tournament.bots import BotProcess, ExternalBot
from tacocat_arena.tournament.config import TournamentConfig
from tacocat_arena.tournament.schedule import PlannedGame, plan_for
from tacocat_arena.tournament.storage import TournamentStore
from tacocat_arena.tournament.tables import GameResult

ProgressCallback = Callable[[GameResult, int, int], None]


@dataclass(frozen=True)
class TournamentRun:
    """How a run went: games planned, already done before it, and played by it."""

    planned: int
    resumed_from: int
    played: int


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
) -> TournamentRun:
    """Play every planned game missing from ``store``; see the module docstring.

    Once ``should_stop()`` is true (a sequential test has decided) no further game starts;
    the games already in play finish and are saved.

    Bots with a command are started here with generated tokens; bots without one
    (``tacocat-arena serve``) connect by themselves with their token from ``tokens``.
    """
    names = [bot.name for bot in config.bots]
    plan = plan_for(config)
    finished = store.finished_ids()
    todo = [game for game in plan if game.game_id not in finished]
    on_start(len(plan), len(plan) - len(todo))
    if not todo:
        return TournamentRun(len(plan), len(plan), 0)

    secrets_by_name = {name: secrets.token_urlsafe(24) for name in names}
    secrets_by_name.update(tokens or {})
    processes: dict[str, BotProcess | ExternalBot] = {}

    async def classify_disconnect(name: str) -> Termination:
        crashed = await processes[name].has_exited(within=1.0)
        return Termination.FORFEIT_CRASH if crashed else Termination.FORFEIT_DISCONNECT

    referee = Referee(
        secrets_by_name, config.referee_settings, classify_disconnect=classify_disconnect
    )
    server, port = await start_server(referee, host, port)
    on_listening(port)
    log_dir = config.out / "logs"
    for bot in config.bots:
        if bot.is_external:
            processes[bot.name] = ExternalBot(bot)
            continue
        processes[bot.name] = BotProcess(
            bot,
            token=secrets_by_name[bot.name],
            address=f"127.0.0.1:{port}",
            log_dir=log_dir,
            cwd=config.base_dir,
            echo=config.debug,
        )
    done = len(plan) - len(todo)
    played = 0
    try:
        for process in processes.values():
            await process.start()
        await asyncio.gather(
            *(p.wait_connected(referee, config.connect_timeout_s) for p in processes.values())
        )
        slots = asyncio.Semaphore(config.concurrency)

        async def play(planned: PlannedGame) -> None:
            nonlocal done, played
            # An absent bot is waited for before the game takes a slot, and again if it left
            # while the game waited for one: waiting games never hold slots that games
            # between present bots could use.
            while True:
                present = [
                    await processes[name].ensure_running(
                        referee, config.connect_timeout_s, config.max_restarts
                    )
                    for name in planned.seats
                ]
                await slots.acquire()
                if all(present) and not all(map(referee.live_session, planned.seats)):
                    slots.release()
                    continue
                break
            try:
                if should_stop():
                    return
                report = await _play_one(planned, referee, processes, config)
                result = _result(report)
                store.save(result, report.detail, report.record)
                done += 1
                played += 1
                on_game(result, done, len(plan))
            finally:
                slots.release()

        tasks = [asyncio.create_task(play(game)) for game in todo]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        await referee.end_all_sessions("the tournament is over")
        await asyncio.gather(*(p.stop() for p in processes.values()), return_exceptions=True)
        with contextlib.suppress(Exception):
            await server.stop(grace=1.0)
    return TournamentRun(len(plan), len(plan) - len(todo), played)


async def _play_one(
    planned: PlannedGame,
    referee: Referee,
    processes: dict[str, BotProcess | ExternalBot],
    config: TournamentConfig,
) -> GameReport:
    """Play one planned game, restarting dead bots first; a bot past its restarts forfeits."""
    for seat, name in enumerate(planned.seats):
        alive = await processes[name].ensure_running(
            referee, config.connect_timeout_s, config.max_restarts
        )
        if not alive:
            if isinstance(processes[name], ExternalBot):
                detail = f"{name} (seat {seat}) was not connected; game not played"
                return _unplayed(planned, seat, detail, Termination.FORFEIT_DISCONNECT)
            detail = (
                f"{name} (seat {seat}) crashed more than {config.max_restarts} times; "
                "game not played"
            )
            return _unplayed(planned, seat, detail, Termination.FORFEIT_CRASH)
    try:
        return await referee.play(
            planned.game_id,
            planned.seats,
            seed=planned.seed,
            ruleset=config.ruleset,
            match_info=f"deal {planned.deal}",
        )
    except LookupError:
        # A bot vanished between the check and the start: count it as its crash.
        for seat, name in enumerate(planned.seats):
            if referee.live_session(name) is None:
                detail = f"{name} (seat {seat}) is not connected"
                return _unplayed(planned, seat, detail, Termination.FORFEIT_DISCONNECT)
        raise


def _unplayed(planned: PlannedGame, seat: int, detail: str, termination: Termination) -> GameReport:
    outcome = Outcome(termination, 1 - seat)
    record = {
        "format": record_format.FORMAT,
        "version": record_format.VERSION,
        "seed": planned.seed,
        "result": outcome.result(),
        "termination": outcome.termination.value,
        "winner": outcome.winner,
        "rounds": 0,
        "actions": [],
        "events": [],
        "unplayed": detail,
    }
    return GameReport(
        planned.game_id, planned.seats, planned.seed, outcome, detail, 0, given_record=record
    )


def _result(report: GameReport) -> GameResult:
    return GameResult(
        game_id=report.game_id,
        seats=report.seats,
        seed=report.seed,
        winner=report.outcome.winner,
        reason=report.outcome.termination.value,
        rounds=report.rounds,
        decisions=(report.decisions[0], report.decisions[1]),
        decision_ms=(report.think_ms[0], report.think_ms[1]),
        forfeit_by=report.forfeit_by,
    )
