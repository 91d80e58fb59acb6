"""``tacocat-arena bench load`` and ``bench soak``: the referee under many games at once.

The referee runs in this process (so its RSS is this process's), with two instant bots in
their own processes (the ``trivial-bot`` role of ``bench.referee``: first legal option,
batches accepted and answered in one message) playing each other over loopback gRPC on one
stream each.  ``games_at_once`` workers play games back to back.

What it reports, per level of concurrency:

- decisions per second (wall clock);
- the decision clock as the bots are charged it (from hand-over of the request to the
  session to the reading of the Action: ``GameReport.clock_ms``), p50/p99/max: for instant
  bots this is all transport and queueing, the time the grace margin has to cover;
- the longest untimed gap: the longest time any game waited on the referee alone with no
  seat's clock running (``GameReport.max_untimed_ms``): time no bot is charged for, and
  that a stalled referee would stretch;
- false timeouts: games an instant bot lost on time (any is a referee fault);
- the worst ruling lag: the longest the referee took to rule on a decision once it was due
  (its Action read, or its deadline passed: ``GameReport.max_ruling_lag_ms``), the lag a
  timeout's recorded time includes;
- the referee's RSS over time;
- why a gap can be long on a shared machine: the longest lag of the event loop (a 5 ms
  ticker's lateness), the longest garbage-collector pause, and how much of the time the
  loop's thread was runnable but waiting for a CPU (Linux schedstat).

The soak plays a fixed number of games and samples RSS every so many games: the curve must
level off (every cache and memory of past requests is bounded).
"""

from __future__ import annotations

import asyncio
import gc
import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from tacocat_arena.engine import DEFAULT_RULESET, Termination
from tacocat_arena.referee import (
    ClockSettings,
    GameReport,
    Referee,
    RefereeSettings,
    start_server,
    stop_server,
)

_TOKENS = {"a": "token-a", "b": "token-b"}
#: Clock histogram resolution and range (milliseconds); longer times are kept exactly.
_BUCKET_MS = 0.1
_BUCKETS = 50_000


class ClockHistogram:
    """Decision clock times in fixed buckets of 0.1 ms: constant memory, however long the run
    (a list of every time would itself grow the RSS being measured)."""

    def __init__(self) -> None:
        self.counts = [0] * _BUCKETS
        self.beyond: list[float] = []
        self.total = 0
        self.largest = 0.0

    def add(self, ms: float) -> None:
        """Count one decision's clock time."""
        index = int(ms / _BUCKET_MS)
        if index < _BUCKETS:
            self.counts[index] += 1
        else:
            self.beyond.append(ms)
        self.total += 1
        self.largest = max(self.largest, ms)

    def quantile(self, q: float) -> float:
        """The ``q`` quantile (upper edge of its bucket), in milliseconds."""
        if not self.total:
            return 0.0
        rank = max(1, round(q * self.total))
        seen = 0
        for index, count in enumerate(self.counts):
            seen += count
            if seen >= rank:
                return (index + 1) * _BUCKET_MS
        return sorted(self.beyond)[rank - seen - 1]


@dataclass(frozen=True)
class LoadFigures:
    """One level of concurrency."""

    games_at_once: int
    seconds: float
    games: int
    decisions: int
    clock_p50_ms: float
    clock_p99_ms: float
    clock_max_ms: float
    max_untimed_ms: float
    false_timeouts: int
    other_forfeits: int
    #: The worst ruling lag: the longest the referee took to rule on a decision once it was
    #: due (``GameReport.max_ruling_lag_ms``).
    max_ruling_lag_ms: float
    #: (seconds since the start, RSS in MiB) samples.
    rss: tuple[tuple[float, float], ...]
    load_average: tuple[float, float, float]
    max_loop_lag_ms: float
    max_gc_pause_ms: float
    #: The CPU time of that pause (the collection's own work).
    max_gc_pause_cpu_ms: float
    #: Share of the wall time the loop's thread was runnable but not running (None: unknown).
    cpu_wait_share: float | None
    #: CPU time of this process (the referee, with gRPC's threads) per decision.
    cpu_ms_per_decision: float

    @property
    def decisions_per_s(self) -> float:
        """Decisions per wall-clock second."""
        return self.decisions / self.seconds


@dataclass(frozen=True)
class SoakSlice:
    """What one slice of a soak ended with, and the worst of it."""

    games: int
    rss_mib: float
    #: The longest untimed gap of any game finished in the slice.
    max_untimed_ms: float
    #: The longest garbage-collector pause in the slice (it grows with the heap).
    max_gc_pause_ms: float


@dataclass(frozen=True)
class SoakFigures:
    """RSS after each slice of a long run of games."""

    games: int
    seconds: float
    #: (games finished, RSS in MiB) samples, the first before any game.
    rss: tuple[tuple[int, float], ...]
    false_timeouts: int
    max_untimed_ms: float = 0.0
    max_gc_pause_ms: float = 0.0

    @property
    def growth_first_half_mib(self) -> float:
        """RSS growth over the first half of the games."""
        return self._at(self.games // 2) - self.rss[0][1]

    @property
    def growth_second_half_mib(self) -> float:
        """RSS growth over the second half: near 0 when memory has levelled off."""
        return self.rss[-1][1] - self._at(self.games // 2)

    def _at(self, games: int) -> float:
        return min(self.rss, key=lambda sample: abs(sample[0] - games))[1]


def rss_mib() -> float:
    """This process's resident set size now, in MiB (Linux /proc; else the peak)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _schedstat() -> tuple[float, float] | None:
    """(seconds run on a CPU, seconds waited for one) of this thread so far (Linux only)."""
    try:
        with open(f"/proc/self/task/{threading.get_native_id()}/schedstat") as stat:
            ran, waited, _ = stat.read().split()
    except (OSError, ValueError):
        return None
    return int(ran) / 1e9, int(waited) / 1e9


class _Pauses:
    """The longest garbage-collector pause while active (``gc.callbacks``), in wall time and
    in the CPU time the collection itself used (the rest was waiting for a CPU)."""

    def __init__(self) -> None:
        self.longest = 0.0
        self.longest_cpu = 0.0
        self._began = (0.0, 0.0)

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = (time.perf_counter(), time.thread_time())
        else:
            wall, cpu = time.perf_counter() - self._began[0], time.thread_time() - self._began[1]
            if wall > self.longest:
                self.longest, self.longest_cpu = wall, cpu

    def __enter__(self) -> _Pauses:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


class _Arena:
    """A referee on loopback and two instant bot processes."""

    def __init__(self, games_at_once: int, decision_ms: int) -> None:
        self.settings = RefereeSettings(
            clock=ClockSettings(decision_ms=decision_ms),
            max_concurrent_games=max(64, games_at_once),
        )
        self.referee = Referee(_TOKENS, self.settings)
        self.bots: list[subprocess.Popen[bytes]] = []

    async def __aenter__(self) -> _Arena:
        self.server, port = await start_server(self.referee)
        for name, token in _TOKENS.items():
            self.bots.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "tacocat_arena.bench.referee",
                        "trivial-bot",
                        f"127.0.0.1:{port}",
                        name,
                        token,
                    ],
                    stdin=subprocess.DEVNULL,
                )
            )
        for name in _TOKENS:
            await self.referee.wait_for_session(name, 60)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.referee.end_all_sessions("bench over")
        for _ in range(100):  # let the bots see SessionEnd and leave (bounded: 5 s)
            if all(bot.poll() is not None for bot in self.bots):
                break
            await asyncio.sleep(0.05)
        for bot in self.bots:
            if bot.poll() is None:
                bot.kill()
                bot.wait()
        await stop_server(self.server, 1)

    async def play(self, index: int) -> GameReport:
        seats = ("a", "b") if index % 2 == 0 else ("b", "a")
        return await self.referee.play(f"load-{index}", seats, seed=index, ruleset=DEFAULT_RULESET)


async def measure_load(games_at_once: int, seconds: float, decision_ms: int = 1000) -> LoadFigures:
    """Play ``games_at_once`` games at a time for ``seconds`` and measure (module docstring)."""
    histogram = ClockHistogram()
    games = decisions = false_timeouts = other_forfeits = 0
    max_untimed = max_ruling = 0.0
    rss: list[tuple[float, float]] = []
    max_lag = 0.0
    async with _Arena(games_at_once, decision_ms) as arena:
        counter = iter(range(10**9))
        started = time.monotonic()
        deadline = started + seconds
        sched_before = _schedstat()
        cpu_before = time.process_time()
        pauses = _Pauses().__enter__()

        async def tick() -> None:
            nonlocal max_lag
            while True:
                before = time.monotonic()
                await asyncio.sleep(0.005)
                max_lag = max(max_lag, time.monotonic() - before - 0.005)

        async def sample() -> None:
            while True:
                rss.append((time.monotonic() - started, rss_mib()))
                await asyncio.sleep(max(0.25, seconds / 20))

        def count(report: GameReport) -> None:
            nonlocal games, decisions, false_timeouts, other_forfeits, max_untimed, max_ruling
            games += 1
            decisions += sum(report.decisions)
            for seat_clock in report.clock_ms:
                for ms in seat_clock:
                    histogram.add(ms)
            max_untimed = max(max_untimed, report.max_untimed_ms)
            max_ruling = max(max_ruling, report.max_ruling_lag_ms)
            termination = report.outcome.termination
            if termination is Termination.FORFEIT_TIMEOUT:
                false_timeouts += 1
            elif termination.is_forfeit:
                other_forfeits += 1

        async def worker() -> None:
            # The report is counted and let go before the next game: a worker holding its
            # last report through the next game would add finished games to the heap.
            while time.monotonic() < deadline:
                count(await arena.play(next(counter)))

        sampler = asyncio.create_task(sample())
        ticker = asyncio.create_task(tick())
        await asyncio.gather(*(worker() for _ in range(games_at_once)))
        elapsed = time.monotonic() - started
        sampler.cancel()
        ticker.cancel()
        pauses.__exit__()
        sched_after = _schedstat()
        cpu = time.process_time() - cpu_before
        rss.append((elapsed, rss_mib()))
    wait_share = None
    if sched_before is not None and sched_after is not None:
        wait_share = (sched_after[1] - sched_before[1]) / elapsed
    return LoadFigures(
        games_at_once=games_at_once,
        seconds=elapsed,
        games=games,
        decisions=decisions,
        clock_p50_ms=histogram.quantile(0.5),
        clock_p99_ms=histogram.quantile(0.99),
        clock_max_ms=histogram.largest,
        max_untimed_ms=max_untimed,
        false_timeouts=false_timeouts,
        other_forfeits=other_forfeits,
        max_ruling_lag_ms=max_ruling,
        rss=tuple(rss),
        load_average=os.getloadavg(),
        max_loop_lag_ms=max_lag * 1000,
        max_gc_pause_ms=pauses.longest * 1000,
        max_gc_pause_cpu_ms=pauses.longest_cpu * 1000,
        cpu_wait_share=wait_share,
        cpu_ms_per_decision=cpu * 1000 / max(1, decisions),
    )


async def measure_soak(
    games: int,
    games_at_once: int = 64,
    samples: int = 20,
    progress: Callable[[SoakSlice], None] | None = None,
) -> SoakFigures:
    """Play ``games`` games, ``games_at_once`` at a time, sampling RSS ``samples`` times
    (with each slice's longest untimed gap and GC pause: neither may grow as caches fill)."""
    every = max(1, games // samples)
    rss = [(0, rss_mib())]
    finished = false_timeouts = 0
    slice_untimed = max_untimed = max_pause = 0.0
    async with _Arena(games_at_once, 1000) as arena:
        counter = iter(range(games))
        started = time.monotonic()
        pauses = _Pauses().__enter__()

        def count(report: GameReport) -> None:
            nonlocal finished, false_timeouts, slice_untimed, max_untimed, max_pause
            finished += 1
            slice_untimed = max(slice_untimed, report.max_untimed_ms)
            if report.outcome.termination is Termination.FORFEIT_TIMEOUT:
                false_timeouts += 1
            if finished % every == 0 or finished == games:
                rss.append((finished, rss_mib()))
                pause_ms = pauses.longest * 1000
                if progress is not None:
                    progress(SoakSlice(finished, rss[-1][1], slice_untimed, pause_ms))
                max_untimed, max_pause = max(max_untimed, slice_untimed), max(max_pause, pause_ms)
                slice_untimed = pauses.longest = 0.0

        async def worker() -> None:
            for index in counter:
                count(await arena.play(index))

        try:
            await asyncio.gather(*(worker() for _ in range(games_at_once)))
        finally:
            pauses.__exit__()
        elapsed = time.monotonic() - started
    return SoakFigures(games, elapsed, tuple(rss), false_timeouts, max_untimed, max_pause)
