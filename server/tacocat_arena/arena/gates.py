"""The gate's queue: which submitted version is built and checked next, so that no player's
uploads stall another's.

A gate (``Hosting.gate``: build, then every check) can take its whole build time limit (600 s
by default) and a hostile upload makes sure it does.  With one gate for everyone, three such
uploads held another player's valid version for three build limits.  So:

- a player has **at most one version in a gate** at a time, and at most one waiting: a newer
  upload **supersedes** the one waiting (which is rejected, "superseded by vN", never built);
- at most ``concurrency`` gates run at once (``serve --gates N``);
- when a gate is free, the waiting player who has **used the gates least** (seconds of build
  and check, over this run of the arena) goes first, ties to the earlier upload.  A player's
  gate time is counted against that player alone: another player's version waits for the
  gates already running, at most one gate's time when there is one gate, never for the rest
  of a hostile player's queue.

The queue is in memory: a restart queues every version still ``checking`` again
(``Hosting.run``: the newest of each player, the older ones superseded), so none stays
``checking`` without a gate to come.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from tacocat_arena.arena.submissions import Version

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GateSettings:
    """How many gates run at once."""

    #: Gates at once: each builds with up to the build limits (4 GiB, 256 processes).
    concurrency: int = 2

    def __post_init__(self) -> None:
        if isinstance(self.concurrency, bool) or not isinstance(self.concurrency, int):
            raise ValueError(f"gates: concurrency must be an integer, got {self.concurrency!r}")
        if self.concurrency < 1:
            raise ValueError(f"gates: concurrency must be >= 1, got {self.concurrency}")


@dataclass(frozen=True)
class GateEvent:
    """A gate starting or ending (``GateQueue.on_event``: the log, tests)."""

    kind: str  # "queued", "superseded", "start" or "end"
    identity: str
    #: Seconds the version waited in the queue (``start``), or its gate took (``end``).
    seconds: float = 0.0


class GateQueue:
    """Versions waiting for a gate, run by ``run`` (which settles each one itself: active or
    rejected), ``concurrency`` at once, one per player, least-used player first.
    ``supersede(old, new)`` is told when ``new`` replaces ``old`` in the queue."""

    def __init__(
        self,
        settings: GateSettings,
        run: Callable[[Version], Awaitable[object]],
        supersede: Callable[[Version, Version], None],
    ) -> None:
        self.settings = settings
        self._run = run
        self._supersede = supersede
        #: The waiting version of each player, with its place in line and when it came.
        self._waiting: dict[str, tuple[int, float, Version]] = {}
        self._running: dict[str, Version] = {}
        self._order = itertools.count()
        #: Seconds of gate time each player has used (build and check), this run.
        self.used: dict[str, float] = collections.defaultdict(float)
        self._tasks: set[asyncio.Task[None]] = set()
        self.on_event: list[Callable[[GateEvent], None]] = []

    # -- what the desk reads --------------------------------------------------------------------
    @property
    def waiting(self) -> int:
        """Versions waiting for a gate."""
        return len(self._waiting)

    @property
    def running(self) -> list[Version]:
        """Versions in a gate now."""
        return list(self._running.values())

    def is_queued(self, version: Version) -> bool:
        """Whether ``version`` waits for a gate or is in one."""
        waiting = self._waiting.get(version.player)
        found = [self._running.get(version.player), waiting[2] if waiting else None]
        return any(v is not None and v.version == version.version for v in found)

    # -- queueing -------------------------------------------------------------------------------
    def put(self, version: Version) -> None:
        """Queue ``version`` for a gate: it replaces its player's waiting version if newer
        (that one is superseded), or is itself superseded if older than the one waiting or
        in a gate."""
        player = version.player
        running = self._running.get(player)
        if running is not None and running.version > version.version:
            self._tell(GateEvent("superseded", version.identity))
            self._supersede(version, running)
            return
        waiting = self._waiting.get(player)
        if waiting is not None:
            old = waiting[2]
            if old.version > version.version:
                self._tell(GateEvent("superseded", version.identity))
                self._supersede(version, old)
                return
            self._tell(GateEvent("superseded", old.identity))
            self._supersede(old, version)
        self._waiting[player] = (next(self._order), time.monotonic(), version)
        self._tell(GateEvent("queued", version.identity))
        self._pump()

    def _pump(self) -> None:
        """Start gates while some are free: the least-used waiting player first."""
        while len(self._running) < self.settings.concurrency:
            ready = [
                (self.used.get(player, 0.0), order, player)
                for player, (order, _, _) in self._waiting.items()
                if player not in self._running
            ]
            if not ready:
                return
            player = min(ready)[2]
            _, queued_at, version = self._waiting.pop(player)
            self._running[player] = version
            self._tell(GateEvent("start", version.identity, time.monotonic() - queued_at))
            task = asyncio.ensure_future(self._gate(version))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _gate(self, version: Version) -> None:
        started = time.monotonic()
        try:
            await self._run(version)
        except asyncio.CancelledError:
            raise
        except Exception:  # run settles the version itself; this only keeps the queue alive
            log.exception("the gate of %s failed", version.identity)
        finally:
            took = time.monotonic() - started
            self.used[version.player] += took
            self._running.pop(version.player, None)
            self._tell(GateEvent("end", version.identity, took))
            self._pump()

    def _tell(self, event: GateEvent) -> None:
        log.info("gate: %s %s (%.1f s)", event.identity, event.kind, event.seconds)
        for listener in self.on_event:
            listener(event)

    async def close(self) -> None:
        """Stop the gates running (their versions stay ``checking``: the next start queues
        them again) and forget the queue."""
        self._waiting.clear()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
