"""Hosted play: the arena runs the versions players submitted, by itself.

``Hosting`` joins the parts.  An upload becomes a version (``submissions``); the **gate**
builds it (``launch.build``, sandboxed, network off, time-limited) and puts it through every
``check`` in the same sandbox and launcher it will play in; a version that passes is
``active``, or ``probation`` beside its player's active version until it has played
``probation_games`` (``arena/moderation.py`` has the rules, and those of suspensions,
roll-backs and revoked players).  The hosted ladder then pairs playing versions with each
other and with connected bots (``matchmaking.hosted_pairs``): least met first, games in
flight counted, a version taking any free batch slot whatever else it plays but one game
against connected bots at a time (the arena's referee knows its process by its name), each
connected bot within its own limit; two identities of one player never meet.  Two versions play
their pairing's duplicate deals as a **batch** (``tournament.executors.play_batch``: a
referee of its own, both versions sandboxed, twin instances for the two games of a deal) in a
worker process (``serve --workers N``) or on a Dask cluster (``serve --cluster``): the same
executor seam as ``run``, off the arena's loop.  Against a **connected bot** the arena starts
the version's process itself, sandboxed, for one game against its own referee (a Unix
socket, a token for that process alone), and a twin for the deal's second game.
A batch's games come back whole and are committed here, by the arena process alone; a game
already stored is never stored again, so a batch played twice (its worker was SIGKILLed and
it was sent again) records each game once, and a batch lost with its worker loses only games
never committed.

The gates run from a queue of their own (``arena.gates``): one version of a player at a time,
a few players at once, the player who used the gates least first.

**Health**: a version whose games end in its own crash, disconnect or illegal action
``health_streak`` times in a row is ``suspended`` with the reason; a process of it that could
not start counts as one, for the version its ``BotStartError`` names (by name, whatever the
message says).  Any other error is the arena's own (a bug, a worker's or the cluster's
failure): logged with its traceback, it strikes no version.  A restarted arena finds its
active versions in the store and plays on; a version left ``checking`` by a stop is checked
again.

The wing changes nothing of ``Arena`` by hand: it reserves and releases pairings, reads the
free capacity, and plays its games against connected bots through ``Arena.play_pairing`` (a
version's seat is a process started for the game: ``_seat``), as ``ladder.HostedWing``.

**Stopping a version** (suspended, revoked, replaced; by this process or by a command beside
it, noticed within ``ladder.PLAYERS_POLL_S``): it gets no new game at once, and its games
against connected bots in flight end at once (its process is stopped: the game is forfeited
by it, and not counted against its health).  A batch of it already on a worker plays out (at
most ``pairs_per_batch`` deals, seconds for most bots) and is recorded: the worker cannot be
interrupted without losing the other version's games too.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import logging
import secrets
import shutil
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from tacocat_arena import __version__
from tacocat_arena.arena import moderation
from tacocat_arena.arena.deals import ladder_game_id, ladder_seed, parse_ladder_game_id
from tacocat_arena.arena.gates import GateQueue, GateSettings
from tacocat_arena.arena.ladder import Arena, Pairing
from tacocat_arena.arena.matchmaking import hosted_pairs
from tacocat_arena.arena.players import hash_token
from tacocat_arena.arena.store import LADDER
from tacocat_arena.arena.submissions import (
    PLAYING,
    Status,
    Submissions,
    UploadQuota,
    Version,
    parse_identity,
    version_summary,
)
from tacocat_arena.check.gate import gate
from tacocat_arena.check.link import Look
from tacocat_arena.check.runner import BotCheckError
from tacocat_arena.engine import Termination
from tacocat_arena.launch import game_output
from tacocat_arena.launch.bots import BotProcess, BotStartError, Launch, new_token
from tacocat_arena.launch.build import BuildSettings
from tacocat_arena.launch.package import DEFAULT_CAPS, PackageCaps, PackageError
from tacocat_arena.launch.sandbox import Limits, SandboxError, SandboxMode, resolve_mode
from tacocat_arena.launch.scratch import owned_folder
from tacocat_arena.referee.session import next_session_id
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.config import BotSpec, TournamentConfig
from tacocat_arena.tournament.executors import (
    Batch,
    ExecutorError,
    FinishedGame,
    play_batch,
    worker_pool,
)
from tacocat_arena.tournament.runner import TWIN_SUFFIX
from tacocat_arena.tournament.schedule import PlannedGame

log = logging.getLogger(__name__)

#: The folder (in the arena's) where hosted batches keep their bots' logs.
HOSTED_DIR = "hosted"
#: How a game ends by its own seat's fault, for the health count.
OWN_FAULTS = frozenset(
    {Termination.FORFEIT_CRASH, Termination.FORFEIT_DISCONNECT, Termination.FORFEIT_ILLEGAL}
)


@dataclass(frozen=True)
class HostedSettings:
    """How the arena runs submitted versions."""

    #: The sandbox of the gate and of hosted games (AUTO: bwrap where it works).
    sandbox: SandboxMode = SandboxMode.AUTO
    #: Each hosted bot process's limits (as ``run``'s ``limits``).
    limits: Limits = field(default_factory=Limits)
    build: BuildSettings = field(default_factory=BuildSettings)
    caps: PackageCaps = DEFAULT_CAPS
    #: Uploads per player and hour (count and bytes: ``submissions.UploadQuota``).
    quota: UploadQuota = UploadQuota()
    #: Gates at once (``arena.gates``).
    gates: GateSettings = GateSettings()
    #: Duplicate deals per batch.  A batch starts the pairing's four processes once (each
    #: version's A instance plays every deal's first game, then its twin B the second ones:
    #: ``runner.twin_phases``), so a batch of 8 deals is 16 games for 4 starts, 0.25 a game;
    #: 2 deals (1 start a game) spent most of a hosted game's time starting processes
    #: (issue 41).  Fairness is per batch: a batch is one meeting slot, least met first.
    pairs_per_batch: int = 8
    #: A version is suspended after this many of its games in a row end by its own fault.
    health_streak: int = 5
    #: Times a batch is sent again after its worker was lost.
    retries: int = 2
    #: Games a new version plays beside its player's active one before it replaces it
    #: (0: it replaces it as soon as it passes the gate).  Above ``health_streak``, so a
    #: version that crashes in every game is suspended before it retires anything.
    probation_games: int = 20


class BatchRunner(Protocol):
    """Where hosted batches are played: ``slots`` at a time, off the arena's loop."""

    description: str
    slots: int

    async def play(self, config: TournamentConfig, batch: Batch) -> list[FinishedGame]:
        """Play one batch; ``LostWorker`` if the worker died with it."""
        ...

    def close(self) -> None:
        """Stop the workers."""
        ...


class InstanceInUse(RuntimeError):
    """The arena was about to start a second hosted process under a name one of its live
    processes has (``Hosting._start_process``): its mistake, never the version's fault."""


class LostWorker(RuntimeError):
    """The worker playing a batch died (a SIGKILL, the OOM killer): the batch may be sent
    again, nothing of it was committed."""


class WorkerProcesses:
    """``serve --workers N``: N local worker processes (``run --workers``'s pool, kept
    for as long as the arena runs; a pool a dead worker broke is replaced)."""

    def __init__(self, workers: int) -> None:
        self.slots = workers
        self.description = f"{workers} local worker process{'es' if workers > 1 else ''}"
        self._pool = self._new_pool()

    def _new_pool(self) -> concurrent.futures.ProcessPoolExecutor:
        return worker_pool(self.slots)  # its workers end with the arena

    async def play(self, config: TournamentConfig, batch: Batch) -> list[FinishedGame]:
        pool = self._pool
        try:
            future = pool.submit(play_batch, config, batch)
            return await asyncio.wrap_future(future)
        except concurrent.futures.process.BrokenProcessPool:
            if self._pool is pool:
                pool.shutdown(wait=False, cancel_futures=True)
                self._pool = self._new_pool()
            raise LostWorker("a worker process died with the batch") from None

    def pids(self) -> list[int]:
        """The worker processes' ids (a test kills one)."""
        return [p.pid for p in getattr(self._pool, "_processes", {}).values() if p.pid]

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


class DaskWorkers:
    """``serve --cluster tcp://HOST:PORT``: batches as tasks on a Dask cluster (``client``
    may be given instead: tests use a ``LocalCluster``).  Dask reschedules a lost worker's
    task by itself."""

    def __init__(self, address: str | None = None, client: Any = None, slots: int = 0) -> None:
        try:
            from distributed import Client
        except ImportError:
            raise ExecutorError("--cluster needs Dask: pip install 'tacocat-arena[dask]'") from None
        self._own = client is None
        if client is None:
            try:
                client = Client(address, timeout="20s")
            except OSError as error:
                raise ExecutorError(
                    f"cannot reach the Dask cluster at {address}: {error}"
                ) from None
        self.client = client
        workers = len(client.scheduler_info().get("workers", {})) or 1
        self.slots = slots or workers
        self.description = f"the Dask cluster at {address or client.scheduler.address}"

    async def play(self, config: TournamentConfig, batch: Batch) -> list[FinishedGame]:
        future = self.client.submit(play_batch, config, batch, pure=False)
        try:
            games: list[FinishedGame] = await asyncio.to_thread(future.result)
        finally:
            future.release()
        return games

    def close(self) -> None:
        if self._own:
            self.client.close()


class Hosting:
    """The submitted bots' side of an arena: uploads, the gate, hosted batches, health."""

    def __init__(self, arena: Arena, settings: HostedSettings, runner: BatchRunner) -> None:
        self.arena = arena
        self.settings = settings
        self.runner = runner
        self.submissions = Submissions(arena.store, settings.caps, settings.quota)
        self.folder = arena.store.folder / HOSTED_DIR
        (self.folder / "logs").mkdir(parents=True, exist_ok=True)
        self.mode = resolve_mode(settings.sandbox, warn=log.warning)
        self.streaks: collections.Counter[str] = collections.Counter()
        self.batches_played = 0
        self.batches_lost = 0
        self.gates = GateQueue(settings.gates, self.gate, self._superseded)
        self._tasks: set[asyncio.Task[None]] = set()
        #: Batches on the workers now (each takes one of ``runner.slots``).
        self._batches = 0
        #: The versions on the ladder (active or in probation), by identity.
        self._active: dict[str, Version] = {}
        #: The processes this arena runs for games against connected bots, by version
        #: identity: stopped at once when their version stops playing.
        self._processes: dict[str, set[BotProcess]] = collections.defaultdict(set)
        #: Token hashes of the hosted processes the arena runs itself (games against
        #: connected bots: ``_play_mixed``), by identity; the arena's referee accepts them.
        self._process_hashes: dict[str, str] = {}
        #: The versions playing a pairing against a connected bot now: one at a time each
        #: (``matchmaking.hosted_pairs``: the arena's referee knows a process by its name).
        self._mixed: set[str] = set()
        #: A version's output of its last game against a connected bot, until the game's
        #: result names it (``_mixed_counted``): its process played that game alone.
        self._captured: dict[str, game_output.GameCapture] = {}
        #: Where sandboxed hosted processes reach the arena's referee (``serve`` listens
        #: there), and where unsandboxed ones do (set once the referee listens).
        #: Named for this process (``launch.scratch``): an arena killed with -9 leaves it, the
        #: next arena's start removes it, and never the folder of an arena still alive.
        self._socket_dir = owned_folder("hosted")
        self.socket = self._socket_dir / "arena.sock"
        self.tcp_address = ""
        #: Called with each batch's games once committed (tests and the bench listen).
        self.on_batch: list[Callable[[list[GameResult]], None]] = []
        arena.attach(self)
        self.refresh()

    #: The arena hosts submitted bots (``ladder.HostedWing``; ``NoHosting`` says it does not).
    enabled = True

    # -- what the pages and the API read ------------------------------------------------------
    def versions(self, player: str | None = None) -> list[Version]:
        """Every version (of ``player``), oldest first."""
        return self.submissions.versions(player)

    def version(self, player: str, number: int) -> Version | None:
        """One version, or None."""
        return self.submissions.get(player, number)

    def with_status(self, *statuses: Status) -> list[Version]:
        """The versions in any of ``statuses``, oldest first."""
        return self.submissions.with_status(*statuses)

    def summaries(self) -> list[dict[str, Any]]:
        """Every version, oldest first, as ``GET /api/submissions`` lists them (public)."""
        return [self.summary(v) for v in self.submissions.versions()]

    def summary(self, version: Version, private: bool = False) -> dict[str, Any]:
        """One version as the API lists it (``private``: its owner's or the organizer's
        view, ``version_summary``), with the games its probation has left."""
        games = self.arena.games_played[version.identity]
        left = 0
        if version.status is Status.PROBATION:
            left = max(0, self.settings.probation_games - games)
        return {**version_summary(version, games, private), "probation_left": left}

    def detail(self, player: str, number: int, private: bool = False) -> dict[str, Any] | None:
        """One version, or None; ``private`` (its owner, the organizer): with the full reason
        and the gate's log (build output, check results)."""
        version = self.submissions.get(player, number)
        if version is None:
            return None
        found = self.summary(version, private)
        return {**found, "log": version.log} if private else found

    def is_hosted(self, name: str) -> bool:
        """Whether ``name`` is a hosted version's ladder name."""
        return parse_identity(name) is not None

    # -- uploads and the gate -----------------------------------------------------------------
    async def submit(self, player: str, body: Path) -> Version:
        """Store a received upload as ``player``'s next version and queue its gate."""
        version = await self.submissions.add(player, body)
        if version.status is Status.CHECKING:
            self.gates.put(version)
        self.arena.changes.fire()
        return version

    def _superseded(self, old: Version, new: Version) -> None:
        """``new`` took ``old``'s place in the gate's queue: ``old`` is never built."""
        reason = f"superseded by v{new.version} while waiting for its gate"
        self._settled(self.submissions.settle(old, Status.REJECTED, reason))

    async def gate(self, version: Version) -> Version:
        """Build the version, then check it in its sandbox: active or rejected, whatever
        goes wrong (a version never stays ``checking`` with no gate to come).  A version an
        earlier run left ``checking`` is unpacked afresh from its archive first."""
        try:
            if not self.submissions.has_package(version):
                version = await self.submissions.unpack(version)
                if version.status is not Status.CHECKING:
                    return self._settled(version)
            return await self._gate(version)
        except (PackageError, SandboxError, BotCheckError, OSError) as error:
            public = "the gate could not run it"
            settled = self.submissions.settle(version, Status.REJECTED, str(error), public=public)
        except Exception as error:  # a bug of ours: rejected and logged, never a dead task
            log.exception("the gate of %s failed", version.identity)
            reason = f"the gate failed ({type(error).__name__}: {error})"
            settled = self.submissions.settle(version, Status.REJECTED, reason, public=reason)
        return self._settled(settled)

    async def _gate(self, version: Version) -> Version:
        verdict = await gate(
            self.submissions.package(version),
            self.arena.settings.referee.clock,  # as its games' clock: "no limit" stays so
            self.mode,
            self.folder / "logs" / f"{version.identity}.check.log",
            identity=version.identity,  # as in its games: nothing tells the gate apart
            look=self._gate_look(version),
            limits=self.settings.limits,
            build=self.settings.build,
        )
        if not verdict.passed:
            settled = self.submissions.settle(
                version, Status.REJECTED, verdict.reason, verdict.log, public=verdict.public
            )
            return self._settled(settled)
        return self._settled(self._passed(version, verdict.log))

    def _passed(self, version: Version, log_text: str) -> Version:
        """The gate passed: probation or active (``moderation.passed_gate``), or revoked if
        its player was revoked while it was checked."""
        if not self.arena.is_registered(version.player):
            reason = "its player was revoked by the organizer"
            return self.submissions.settle(version, Status.REVOKED, reason, log_text)
        return moderation.passed_gate(
            self.submissions, version, log_text, self.settings.probation_games
        )

    def _gate_look(self, version: Version) -> Look:
        """The gate's referee as a ladder game's: the arena's name and clock, another
        version's name as the opponent (any active one), a pair number of the ladder's."""
        clock = self.arena.settings.referee.clock
        others = [name for name in self._active if name != version.identity]
        opponent = secrets.choice(others) if others else "greedy@v1"  # none yet to play
        return Look.ladder(
            server_info=f"tacocat-arena/{__version__}",
            session_id=next_session_id(),
            decision_ms=clock.decision_ms,
            bank_ms=clock.bank_ms,
            opponent_name=opponent,
            pair=secrets.randbelow(10_000),
            max_concurrent_games=self.arena.settings.referee.max_concurrent_games,
        )

    def _settled(self, version: Version) -> Version:
        self.refresh()
        log.info("version %s: %s (%s)", version.identity, version.status, version.reason)
        self.arena.wake()
        return version

    def refresh(self) -> None:
        """Re-read which versions play (after a gate, a suspension, a roll-back; or another
        process's change) and stop at once the processes of those that no longer do."""
        self._active = {v.identity: v for v in self.submissions.with_status(*PLAYING)}
        for name in [n for n, found in self._processes.items() if found and n not in self._active]:
            for process in self._processes.pop(name):
                log.info("version %s stopped playing: stopping its process", name)
                self._spawn(process.stop(grace=0))  # now: its game is forfeited, not finished

    def sync(self) -> None:
        """The store changed (``Arena.check_players``): revoke the versions of players
        revoked since (by the desk, or ``players revoke`` in another process), then
        ``refresh``."""
        for player in self.arena.revoked_players():
            moderation.revoke_versions(self.submissions, player)
        self.refresh()

    # -- moderation (``arena/moderation.py``'s rules; the web API and CLI call these) ---------
    def suspend(self, player: str, number: int, reason: str) -> Version:
        """The organizer suspends a version (NoSuchVersion, NotAllowed)."""
        return self._changed(moderation.suspend(self.submissions, player, number, reason))

    def reinstate(self, player: str, number: int) -> Version:
        """The organizer reinstates a suspended version."""
        self.streaks.pop(moderation.find(self.submissions, player, number).identity, None)
        return self._changed(moderation.reinstate(self.submissions, player, number))

    def choose(self, player: str, number: int) -> Version:
        """The player makes one of its passed versions the active one (a roll-back)."""
        registered = self.arena.is_registered(player)
        return self._changed(
            moderation.choose(self.submissions, player, number, registered=registered)
        )

    def _changed(self, version: Version) -> Version:
        log.info("version %s: %s (%s)", version.identity, version.status, version.reason)
        self.refresh()
        self.arena.wake()
        return version

    # -- playing --------------------------------------------------------------------------------
    async def run(self, stop: asyncio.Event) -> None:
        """Gate the versions a stop left ``checking``, then keep hosted batches going until
        ``stop``; the batches in flight are then abandoned (nothing of them is committed)."""
        await self.submissions.load_packages(self.submissions.with_status(Status.ACTIVE))
        checking = self.submissions.with_status(Status.CHECKING)
        newest = {v.player: v for v in sorted(checking, key=lambda v: v.version)}
        for version in checking:  # a stop left them: the newest of each player is gated
            if version != newest[version.player]:
                self._superseded(version, newest[version.player])
        for version in newest.values():
            self.gates.put(version)
        try:
            while not stop.is_set():
                if self.arena.pairing:
                    self.start_games()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.arena.changes.wait(1.0), 1.5)
        finally:
            await self.gates.close()
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            self.runner.close()
            shutil.rmtree(self._socket_dir, ignore_errors=True)

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        """A task of the wing ended; an error that escaped it is a bug of the arena's (the
        bots' failures are caught where they happen), logged as one, and strikes no one."""
        self._tasks.discard(task)
        if not task.cancelled() and (error := task.exception()) is not None:
            log.error("a hosted task failed by the arena's fault (no version struck)",
                      exc_info=error)  # fmt: skip

    def human_spec(self, name: str) -> BotSpec | None:
        """Playing version ``name`` as a person's game starts it (``human.challenges``, on a
        referee of its own): its package, in this wing's sandbox and limits, as its hosted
        games start it.  None if it is not playing (or its package is gone)."""
        try:
            package = self.submissions.package(self._active[name])
        except (KeyError, PackageError):
            return None
        spec = package.spec(name, hosted=True)
        return replace(spec, sandbox=self.mode, limits=self.settings.limits)

    def process_hash(self, name: str) -> str | None:
        """The token hash of hosted process ``name`` while the arena runs it, else None."""
        return self._process_hashes.get(name)

    def start_games(self) -> bool:
        """Start what the free slots allow (``matchmaking.hosted_pairs``): batches of two
        playing versions on the workers, and games of the arena's own referee, a version
        against a connected bot or two connected bots (``Arena.start_pair``), least met
        first over all of them.  True: the hosted wing pairs everyone (``HostedWing``)."""
        arena = self.arena
        batch_slots = self.runner.slots - self._batches if self._active else 0
        free = arena.capacity()
        if batch_slots <= 0 and not free.connected:
            return True
        batches, games = hosted_pairs(
            list(self._active),
            free.connected,
            arena.expected_meetings(),
            arena.ratings,
            batch_slots,
            free.slots,
            arena.rng,
            self._mixed,
        )
        for a, b in batches:
            pairs = self.settings.pairs_per_batch
            pairing = arena.reserve(a, b, deals=pairs, games=2 * pairs, local=False)
            self._batches += 1
            self._spawn(self._play(self._batch(a, b, pairing.pairs), pairing))
        for a, b in games:
            if a not in self._active and b not in self._active:
                arena.start_pair(a, b)
                continue
            mine, theirs = (a, b) if a in self._active else (b, a)
            deals = arena.deals_of(mine, theirs)
            pairing = arena.reserve(mine, theirs, deals=deals, games=2, local=True)
            self._mixed.add(mine)
            self._spawn(self._play_mixed(pairing))
        return True

    def _batch(self, a: str, b: str, pairs: range) -> Batch:
        games = []
        for pair in pairs:
            seed = ladder_seed(self.arena.seed, self.arena.secret, LADDER, (a, b), pair)
            games.append(PlannedGame(ladder_game_id(pair, False), (a, b), seed, pair))
            games.append(PlannedGame(ladder_game_id(pair, True), (b, a), seed, pair, twin=True))
        return Batch(pairs.start, tuple(games))

    def config(self, batch: Batch) -> TournamentConfig:
        """The small tournament a worker plays a batch as: the two versions' packages, under
        their ladder names, on the arena's clock as it is (milliseconds end to end)."""
        return TournamentConfig(
            bots=tuple(
                self.submissions.package(self._active[name]).spec(name, hosted=True)
                for name in batch.bots
            ),
            games_per_pairing=2,
            seed=self.arena.seed,
            concurrency=2,
            clock=self.arena.settings.referee.clock,
            ruleset=self.arena.settings.ruleset,
            out=self.folder,
            name=LADDER,
            base_dir=self.folder,
            sandbox=self.mode,
            limits=self.settings.limits,
            max_restarts=1,
            game_output_kib=game_output.GAME_OUTPUT_CAP // 1024,  # its authors read it
        )

    async def _play(self, batch: Batch, pairing: Pairing) -> None:
        try:
            for attempt in range(self.settings.retries + 1):
                try:
                    config = self.config(batch)
                    games = await self.runner.play(config, batch)
                except LostWorker:
                    self.batches_lost += 1
                    log.warning("batch %s: its worker died (attempt %d)", batch.index, attempt + 1)
                    continue
                except (KeyError, PackageError):
                    return  # a version left the ladder since the batch was planned
                except Exception as error:
                    self._failed(batch, error)
                    return
                await self._commit(games, pairing)
                return
        finally:
            self.arena.release(pairing)
            self._batches -= 1

    def _failed(self, batch: Batch, error: Exception) -> None:
        """A batch failed.  A bot that could not start (``BotStartError``) is its version's
        fault: the version it names is struck (both, were it neither of the batch's).  Any
        other error is ours (the arena's, a worker's, the cluster's): logged as such, and no
        version is struck for it."""
        a, b = batch.bots
        if not isinstance(error, BotStartError):
            log.error("batch %s of %s and %s failed by the arena's fault, no version struck",
                      batch.index, a, b, exc_info=error)  # fmt: skip
            return
        log.warning("batch %s of %s and %s failed: %s", batch.index, a, b, error)
        guilty = [error.bot] if error.bot in batch.bots else [a, b]
        for name in guilty:
            self._strike(name, str(error))

    async def _play_mixed(self, pairing: Pairing) -> None:
        """The two games of a hosted version against a connected bot, seats swapped
        (``Arena.play_pairing``: independent deals by default), on the arena's referee: the
        version's process (its twin for the second game) is started for its game alone."""
        try:
            await self.arena.play_pairing(pairing, self._plays, self._seat, self._mixed_counted)
        finally:
            self._mixed.discard(pairing.seats[0])  # reserved as (version, connected bot)

    def _plays(self, name: str) -> bool:
        """Whether a side of a pairing on the arena's referee may still play."""
        return name in self._active if self.is_hosted(name) else self.arena.can_play(name)

    @contextlib.asynccontextmanager
    async def _seat(self, name: str, half: int) -> AsyncIterator[str | None]:
        """How a side comes to a game on the arena's referee (``ladder.SeatStart``): a
        connected bot as itself; a version as a process started here, sandboxed, for that
        game (``name`` for the first, its twin for the second), stopped after it."""
        if not self.is_hosted(name):
            yield name
            return
        process = await self._started(name, half)
        if process is None:
            yield None
            return
        self._processes[name].add(process)
        capture = process.log.taps.open(process.name)  # its game's id comes with the result
        try:
            yield process.name
        finally:
            self._processes[name].discard(process)
            await process.stop()
            self._process_hashes.pop(process.name, None)
            process.log.taps.close(process.name)
            self._captured[name] = capture

    def _mixed_counted(self, result: GameResult) -> None:
        """A game against a connected bot is over: its version's output of it (all its
        process printed, from its start to its stop: exact) is kept, then it is counted."""
        for name in result.seats:
            capture = self._captured.pop(name, None)
            if capture is not None:
                capture.game_id = result.game_id
                game_output.save(self.folder / game_output.OUTPUT_DIR, capture)
        self._health(result)

    async def _started(self, name: str, half: int) -> BotProcess | None:
        """Version ``name``'s process for a game's ``half``, connected; None if it could not
        start: struck when that is the version's fault, not when it is the arena's."""
        instance = name if half == 0 else name + TWIN_SUFFIX
        try:
            return await self._start_process(instance, self._active[name])
        except InstanceInUse as error:  # the arena's mistake: no strike for the version
            log.error("hosted %s not started: %s", instance, error)
        except (BotStartError, PackageError, SandboxError) as error:
            log.warning("hosted %s could not start: %s", instance, error)
            self._strike(name, str(error))
        return None

    async def _start_process(self, instance: str, version: Version) -> BotProcess:
        """Start hosted process ``instance`` of ``version`` and wait for its session.

        One process per instance name at a time: a second one would authenticate as the
        same bot and its connection would replace the first's session mid-game (a
        disconnect forfeited by a version that did nothing wrong), so ``InstanceInUse``
        (the arena's own error, never a strike) instead."""
        if instance in self._process_hashes:
            raise InstanceInUse(f"a process named {instance!r} already plays on this arena")
        package = self.submissions.package(version)
        token = new_token()
        self._process_hashes[instance] = hash_token(token)
        spec = package.spec(version.identity, hosted=True)
        process = BotProcess(
            spec,
            Launch(
                identity=instance,
                token=token,
                log_path=self.folder / "logs" / f"{instance}.log",
                cwd=package.root,
                mode=self.mode,
                limits=self.settings.limits,
                tcp_address=self.tcp_address,
                socket_path=self.socket,
            ),
        )
        try:
            await process.start()
            await process.wait_connected(self.arena.referee, 30.0)
        except BaseException:
            await process.stop()
            self._process_hashes.pop(instance, None)
            raise
        return process

    async def _commit(self, games: list[FinishedGame], pairing: Pairing) -> None:
        committed = []
        for result, detail, record in games:
            if self.arena.is_committed(result.game_id):
                continue  # played twice (a batch sent again): recorded once
            pair, _ = parse_ladder_game_id(result.game_id)
            await self.arena.commit_result(result, detail, record, LADDER, pair, pairing.booking)
            committed.append(result)
            self._health(result)
        self.batches_played += 1
        for listener in self.on_batch:
            listener(committed)

    def _health(self, result: GameResult) -> None:
        """Count a game for its versions' health; a version in probation that has played
        its games and is still in it replaces its player's active one."""
        for seat, name in enumerate(result.seats):
            if name not in self._active:
                continue
            if result.reason in OWN_FAULTS and result.forfeit_by == seat:
                self.streaks[name] += 1
                if self.streaks[name] >= self.settings.health_streak:
                    self._suspend(name, f"{result.reason.value} ({result.game_id})")
                    continue
            else:
                self.streaks[name] = 0
            version = self._active[name]
            if (
                version.status is Status.PROBATION
                and self.arena.games_played[name] >= self.settings.probation_games
            ):
                self._settled(moderation.end_probation(self.submissions, version))

    def _strike(self, name: str, message: str) -> None:
        if name in self._active:
            self.streaks[name] += 1
            if self.streaks[name] >= self.settings.health_streak:
                self._suspend(name, message.splitlines()[0])

    def _suspend(self, name: str, last: str) -> None:
        version = self._active[name]
        streak = self.settings.health_streak
        reason = f"suspended: {streak} games in a row ended by its own fault; the last: {last}"
        self.streaks.pop(name, None)
        self._settled(self.submissions.settle(version, Status.SUSPENDED, reason))


def hosted_of(arena: Arena) -> Hosting | None:
    """The arena's hosted wing where it has one (the pages that take uploads, moderate
    versions or show the workers need the wing itself), else None."""
    return arena.hosting if isinstance(arena.hosting, Hosting) else None
