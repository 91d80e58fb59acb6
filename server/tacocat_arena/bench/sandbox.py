"""What the sandbox costs: bot start-up time and decisions/s, with and without bwrap.

Each measurement is a real tournament (``run_tournament``): two random bots, one game at a
time, run unsandboxed and in bwrap alternately, ``repeats`` times; the best of each mode
counts, so the ratio compares the two modes under the same load.  Start-up is the time
from launching a bot process to its session being open (the runner's ``wait_connected``),
per process; twins double the processes a tournament starts.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tacocat_arena.launch.sandbox import SandboxMode, bwrap_path
from tacocat_arena.referee.peers import descendants
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.config import BotSpec, TournamentConfig
from tacocat_arena.tournament.runner import run_tournament
from tacocat_arena.tournament.storage import TournamentStore


@dataclass(frozen=True)
class ModeFigures:
    """One mode's best figures over the repeats."""

    mode: SandboxMode
    startup_ms: float  # median start-to-connected time of one bot process
    decisions_per_s: float  # decisions over the wall time of the games after the first
    #: CPU time per decision of the bot processes (bwrap included) and of the runner, over
    #: the whole run (start-up included): less at the mercy of the machine's load than rates.
    bots_cpu_us: float = 0.0
    runner_cpu_us: float = 0.0


@dataclass(frozen=True)
class SandboxFigures:
    """Both modes, measured alternately in one run."""

    none: ModeFigures
    bwrap: ModeFigures | None  # None where bwrap cannot run

    @property
    def rate_ratio(self) -> float | None:
        """Decisions/s in bwrap over decisions/s without it."""
        if self.bwrap is None:
            return None
        return self.bwrap.decisions_per_s / self.none.decisions_per_s


def bench_sandbox(
    games: int, repeats: int, *, progress: Callable[[str], None] = lambda text: None
) -> SandboxFigures:
    """Measure both modes ``repeats`` times each, alternating; see the module docstring."""
    modes = [SandboxMode.NONE] + ([SandboxMode.BWRAP] if bwrap_path() else [])
    best: dict[SandboxMode, ModeFigures] = {}
    for index in range(repeats):
        for mode in modes:
            figures = asyncio.run(_measure(mode, games))
            progress(
                f"run {index + 1}/{repeats} {mode}: start-up {figures.startup_ms:.0f} ms, "
                f"{figures.decisions_per_s:,.0f} decisions/s"
            )
            old = best.get(mode)
            if old is None:
                best[mode] = figures
            else:
                best[mode] = ModeFigures(
                    mode,
                    min(old.startup_ms, figures.startup_ms),
                    max(old.decisions_per_s, figures.decisions_per_s),
                    min(old.bots_cpu_us, figures.bots_cpu_us),
                    min(old.runner_cpu_us, figures.runner_cpu_us),
                )
    return SandboxFigures(best[SandboxMode.NONE], best.get(SandboxMode.BWRAP))


async def _measure(mode: SandboxMode, games: int) -> ModeFigures:
    finished: list[tuple[float, int]] = []

    bots_cpu = 0.0

    def on_game(result: GameResult, done: int, total: int) -> None:
        nonlocal bots_cpu
        finished.append((time.perf_counter(), sum(result.decisions)))
        if done == total:  # the bots are still running: read what they have used
            bots_cpu = _descendants_cpu()

    with tempfile.TemporaryDirectory(prefix="tacocat-bench-") as folder:
        Path(folder).chmod(0o755)  # a root runner's bots are uid 65534: they read it
        config = TournamentConfig(
            bots=(BotSpec("a", "builtin:random"), BotSpec("b", "builtin:random")),
            games_per_pairing=games,
            concurrency=1,
            move_timeout_s=10.0,
            out=Path(folder) / "out",
            base_dir=Path(folder),
            sandbox=mode,
        )
        store = TournamentStore(config.out)
        store.claim(config.fingerprint(), resume=False)
        runner = time.process_time()
        try:
            run = await run_tournament(config, store, on_game=on_game)
        finally:
            store.close()
        runner_cpu = time.process_time() - runner
    startups = [seconds for times in run.startup_s.values() for seconds in times]
    span = finished[-1][0] - finished[0][0]
    decisions = sum(count for _, count in finished[1:])
    every = sum(count for _, count in finished)
    return ModeFigures(
        mode,
        statistics.median(startups) * 1000,
        decisions / span,
        bots_cpu / every * 1e6,
        runner_cpu / every * 1e6,
    )


def _descendants_cpu() -> float:
    """CPU seconds used so far by every process below this one (the bots, their launchers
    and bwrap), read from /proc: a sandboxed bot is reaped inside its PID namespace, so
    RUSAGE_CHILDREN would never see its time."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in descendants(os.getpid())[1:]:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks
