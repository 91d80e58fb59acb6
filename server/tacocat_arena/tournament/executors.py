"""Where a tournament's games are played: in this process, in local workers, or on Dask.

The unit of work is a **batch**: a few duplicate pairs of one pairing.  A worker plays a batch
as a small tournament of its own (``run_tournament`` over just those games, with its own
referee on loopback and the pairing's two bots started once for the batch) and returns the
finished games; the coordinator commits them to the one SQLite store, which stays the only
source of truth.  A batch that runs twice (its worker was lost and the batch rescheduled)
returns the same game ids, and a game already in the store is never saved again.

Every game is a function of its planned deal and the bots' answers, so deterministic bots
give the same games wherever they are played: one process, ``--workers N`` or a cluster.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import multiprocessing
import multiprocessing.connection
import os
import shlex
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tacocat_arena.launch import folder, scratch
from tacocat_arena.launch.sandbox import resolve_mode
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.config import TournamentConfig
from tacocat_arena.tournament.runner import TournamentRun, run_tournament
from tacocat_arena.tournament.schedule import PlannedGame, tournament_plan
from tacocat_arena.tournament.storage import TournamentStore

#: One finished game as a worker returns it: result, detail and full record.
FinishedGame = tuple[GameResult, str, dict[str, Any]]

#: Duplicate pairs per batch by default: enough to pay for starting the two bots.
DEFAULT_PAIRS_PER_BATCH = 5


class ExecutorError(RuntimeError):
    """The workers could not be started or reached; the message says why."""


@dataclass(frozen=True)
class Batch:
    """Some duplicate pairs of one pairing: the unit a worker plays."""

    index: int
    games: tuple[PlannedGame, ...]

    @property
    def bots(self) -> tuple[str, str]:
        """The pairing's two bots."""
        first = self.games[0].seats
        return first[0], first[1]


def make_batches(games: Iterable[PlannedGame], pairs_per_batch: int) -> list[Batch]:
    """Group games by pairing and cut each pairing into batches of ``pairs_per_batch``
    duplicate pairs (both games of a deal always go to the same batch)."""
    by_pairing: dict[frozenset[str], dict[int, list[PlannedGame]]] = {}
    for game in games:
        deals = by_pairing.setdefault(frozenset(game.seats), {})
        deals.setdefault(game.deal, []).append(game)
    batches: list[Batch] = []
    for deals in by_pairing.values():
        ordered = [deals[deal] for deal in sorted(deals)]
        for start in range(0, len(ordered), pairs_per_batch):
            chunk = [game for pair in ordered[start : start + pairs_per_batch] for game in pair]
            batches.append(Batch(len(batches), tuple(chunk)))
    return batches


class _MemoryStore:
    """A worker's store: the batch's finished games, kept in memory until returned."""

    def __init__(self) -> None:
        self.games: list[FinishedGame] = []

    def save(self, result: GameResult, detail: str, record: dict[str, Any]) -> None:
        self.games.append((result, detail, record))

    def finished_ids(self) -> set[str]:
        return {result.game_id for result, _, _ in self.games}

    def record_snapshot(self, bot: str, sha256: str) -> None:
        """A worker's copy of a bot's folder is said in its notices; the run's store holds
        only what its own process copied."""


def play_batch(config: TournamentConfig, batch: Batch) -> list[FinishedGame]:
    """Play one batch here, in a worker: a referee of its own, the pairing's two bots.

    The bots' logs go to the tournament's ``logs/`` folder when this machine has it (local
    workers), else to a temporary folder (a remote worker).
    """
    names = batch.bots
    bots = tuple(bot for bot in config.bots if bot.name in names)
    with scratch.private_folder("batch") as folder:
        out = config.out if config.out.is_dir() else folder
        sub = dataclasses.replace(config, bots=bots, out=out, concurrency=config.concurrency)
        store = _MemoryStore()
        asyncio.run(run_tournament(sub, store, plan=batch.games))  # type: ignore[arg-type]
    return store.games


def worker_pool(workers: int) -> concurrent.futures.ProcessPoolExecutor:
    """A pool of ``workers`` local processes (``run --workers``, ``serve --workers``) that
    end when this process ends, however it ends: a SIGKILLed coordinator's workers would
    otherwise play their batch to its end, bots and all, then wait for work for ever."""
    context = multiprocessing.get_context("spawn")  # no inherited event loop or gRPC state
    return concurrent.futures.ProcessPoolExecutor(
        workers, mp_context=context, initializer=_end_with_parent
    )


def _end_with_parent() -> None:
    """In a worker: exit the moment its parent has (its ``sentinel``, the end of a pipe only
    the parent holds, reads end-of-file then, already dead or not), the worker's bots with it
    (their death signal).  A thread rather than PR_SET_PDEATHSIG, which fires when the
    parent's *thread* that started the worker ends, not the parent."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return
    watch = threading.Thread(
        target=_exit_when_ready, args=(parent.sentinel,), name="parent-watch", daemon=True
    )
    watch.start()


def _exit_when_ready(sentinel: int) -> None:
    multiprocessing.connection.wait([sentinel])
    os._exit(1)


class Executor(Protocol):
    """Plays batches somewhere and hands back each one's games as it finishes."""

    #: What the progress line says about where games run.
    description: str

    def play(
        self,
        config: TournamentConfig,
        batches: Sequence[Batch],
        on_batch: Callable[[Batch, list[FinishedGame]], None],
    ) -> None:
        """Play every batch; call ``on_batch`` (in the calling thread) as each finishes."""
        ...


class LocalWorkers:
    """``--workers N``: N local worker processes (the standard library's process pool).

    A worker that dies breaks the whole pool (``BrokenProcessPool``): the batches not yet
    returned are then played again in a new pool, up to ``retries`` times.
    """

    def __init__(self, workers: int, retries: int = 2) -> None:
        self.workers = workers
        self.retries = retries
        self.description = f"{workers} local worker processes"

    def play(
        self,
        config: TournamentConfig,
        batches: Sequence[Batch],
        on_batch: Callable[[Batch, list[FinishedGame]], None],
    ) -> None:
        pending = list(batches)
        for attempt in range(self.retries + 1):
            with worker_pool(self.workers) as pool:
                futures = {pool.submit(play_batch, config, batch): batch for batch in pending}
                broken = False
                for future in concurrent.futures.as_completed(futures):
                    batch = futures[future]
                    try:
                        games = future.result()
                    except concurrent.futures.process.BrokenProcessPool:
                        broken = True
                        continue
                    pending.remove(batch)
                    on_batch(batch, games)
            if not broken or not pending:
                return
            if attempt == self.retries:
                raise ExecutorError(
                    f"a worker process died {self.retries + 1} times; {len(pending)} batches "
                    "were not played (run again with --resume to continue)"
                )


class DaskCluster:
    """``--cluster tcp://HOST:PORT``: batches as tasks on an existing Dask cluster.

    Dask reschedules the tasks of a lost worker by itself; the bots' commands must exist on
    every worker (docs/scaling.md).  ``client`` may be given instead of an address (tests use
    a ``LocalCluster``).
    """

    def __init__(self, address: str | None = None, client: Any = None) -> None:
        self.address = address
        self.client = client
        self.description = f"the Dask cluster at {address}" if address else "a Dask cluster"

    def play(
        self,
        config: TournamentConfig,
        batches: Sequence[Batch],
        on_batch: Callable[[Batch, list[FinishedGame]], None],
    ) -> None:
        try:
            from distributed import Client, as_completed
        except ImportError:
            raise ExecutorError("--cluster needs Dask: pip install 'tacocat-arena[dask]'") from None
        client = self.client
        own = client is None
        if own:
            try:
                client = Client(self.address, timeout="20s")
            except OSError as error:
                raise ExecutorError(
                    f"cannot reach the Dask cluster at {self.address}: {error}"
                ) from None
        try:
            futures = {
                client.submit(play_batch, config, batch, pure=False): batch for batch in batches
            }
            for future in as_completed(futures):
                on_batch(futures[future], future.result())
        finally:
            if own:
                client.close()


def run_on_workers(
    config: TournamentConfig,
    store: TournamentStore,
    executor: Executor,
    *,
    pairs_per_batch: int = DEFAULT_PAIRS_PER_BATCH,
    on_start: Callable[[int, int], None] = lambda total, done: None,
    on_game: Callable[[GameResult, int, int], None] = lambda result, done, total: None,
    on_notice: Callable[[str], None] = lambda text: None,
) -> TournamentRun:
    """Play every planned game missing from ``store`` on ``executor``, batch by batch,
    committing each returned game once (a batch played twice returns its games twice).
    Local workers play a root runner's unreadable bot folders from copies made here once
    (``snapshot_for_workers``, said on ``on_notice``)."""
    plan = tournament_plan(config, store)
    saved = store.finished_ids()
    todo = [game for game in plan if game.game_id not in saved]
    on_start(len(plan), len(plan) - len(todo))
    planned_ids = {game.game_id for game in plan}
    done, played = len(plan) - len(todo), 0

    def on_batch(batch: Batch, games: list[FinishedGame]) -> None:
        nonlocal done, played
        for result, detail, record in games:
            if result.game_id not in planned_ids:
                raise ExecutorError(f"a worker returned game {result.game_id!r}, never planned")
            if result.game_id in saved:
                continue
            store.save(result, detail, record)
            saved.add(result.game_id)
            done += 1
            played += 1
            on_game(result, done, len(plan))

    if todo:
        batches = make_batches(todo, pairs_per_batch)
        if not isinstance(executor, LocalWorkers):  # a cluster's workers have their own disks
            executor.play(config, batches, on_batch)
        else:
            with scratch.private_folder("workers") as into:
                shown = snapshot_for_workers(config, store, into, on_notice)
                executor.play(shown, batches, on_batch)
    return TournamentRun(len(plan), len(plan) - len(todo), played)


def snapshot_for_workers(
    config: TournamentConfig,
    store: TournamentStore,
    into: Path,
    on_notice: Callable[[str], None],
) -> TournamentConfig:
    """The config local workers play: a root runner's bot whose folder its uid cannot read
    points at one private copy made here (``folder.readable_copy`` in ``into``, said once
    with its size, its hash recorded in ``store``), where each batch would otherwise copy it
    again in its worker, unsaid and unrecorded.  Other bots are left as they are."""
    bots = []
    for bot in config.bots:
        if bot.is_external:
            bots.append(bot)
            continue
        mode = resolve_mode(bot.sandbox or config.sandbox, warn=lambda text: None)  # said by run
        placement = folder.place(bot, config.base_dir)
        try:
            placement, snapshot = folder.readable_copy(bot, placement, mode, into / "snapshots")
        except OSError as error:
            raise ExecutorError(f"bot {bot.name!r}: cannot copy its folder: {error}") from None
        if snapshot is None:
            bots.append(bot)
            continue
        on_notice(snapshot.describe(bot.name))
        store.record_snapshot(bot.name, snapshot.sha256)
        words = placement.argv[: len(placement.argv) - len(bot.args)]  # its args come after
        bots.append(dataclasses.replace(bot, dir=placement.folder, command=shlex.join(words)))
    return dataclasses.replace(config, bots=tuple(bots))
