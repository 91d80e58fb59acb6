"""What the sandbox costs: bot start-up time and decisions/s, with and without bwrap; and what
one start of each kind of bot costs (``bench_starts``).

Each measurement is a real tournament (``run_tournament``): two random bots, one game at a
time, run unsandboxed and in bwrap alternately, ``repeats`` times; the best of each mode
counts, so the ratio compares the two modes under the same load.  Start-up is the time
from launching a bot process to its session being open (the runner's ``wait_connected``),
per process; twins double the processes a tournament starts.

``bench_starts`` starts one bot at a time through the launcher (``BotProcess``, as every
runner does) against a referee of its own, for each kind (the Python example bot as a hosted
package runs it, the Node example, the C++ example where it is built) in both modes, in
turns, and stops it once its session is open: the wall time from launch to session, the
CPU of the bot's whole process tree at that moment (the launcher's helpers, bwrap, the bot;
a start, nothing played) and this process's CPU meanwhile (building the command line, the
referee's admission).  With ``--against REV`` (``bench_starts_against``) the Python kind's
starts of this tree and of a worktree of REV, in turns, each tree run by a child process in
the virtual environment ``bench arena --hosted --against`` makes for it (its bots import
that tree).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import example_bots

from tacocat_arena import referee as referee_room
from tacocat_arena.launch.bots import BotProcess, Launch, new_token
from tacocat_arena.launch.sandbox import Limits, SandboxMode, admit_bot, bwrap_path
from tacocat_arena.launch.spec import BotSpec
from tacocat_arena.referee import Referee, RefereeSettings, start_server
from tacocat_arena.referee.peers import PeerCheck, descendants
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.config import TournamentConfig
from tacocat_arena.tournament.runner import run_tournament
from tacocat_arena.tournament.storage import TournamentStore

if TYPE_CHECKING:  # only: a child runs this file with another tree's package (see below)
    from tacocat_arena.bench.trees import Comparison


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


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of ``pid`` and its live descendants: each live thread's time on a CPU
    (/proc/PID/task/TID/schedstat, in nanoseconds, where stat's utime and stime count in
    10 ms ticks) and each process's reaped children's (stat's cutime and cstime): a
    sandboxed bot is reaped inside its PID namespace, so only its live ancestors' counts
    hold it."""
    ticks, nanoseconds = 0, 0
    for member in descendants(pid):
        try:
            stat = Path(f"/proc/{member}/stat").read_text()
            threads = os.listdir(f"/proc/{member}/task")
        except OSError:
            continue  # it ended meanwhile
        fields = stat[stat.rindex(")") + 2 :].split()
        ticks += int(fields[13]) + int(fields[14])
        for thread in threads:
            with contextlib.suppress(OSError, ValueError, IndexError):
                schedstat = Path(f"/proc/{member}/task/{thread}/schedstat").read_text()
                nanoseconds += int(schedstat.split()[0])
    return ticks / os.sysconf("SC_CLK_TCK") + nanoseconds / 1e9


#: The example bots' folder (the Node and C++ examples are inside it, in a checkout).
EXAMPLES = Path(example_bots.__file__).resolve().parent

#: Where ``cmake -S example_bots/cpp -B example_bots/cpp/build`` puts the C++ example.
CPP_BOT = EXAMPLES / "cpp" / "build" / "tacocat_cpp_bot"


@dataclass(frozen=True)
class BotKind:
    """A kind of bot whose start ``bench_starts`` measures: its command and the folder it
    runs in, or why it cannot run here (``missing``)."""

    name: str
    command: str
    folder: Path | None = None  # None: a temporary folder of its own
    missing: str = ""


def bot_kinds(cpp_bot: Path | None = None) -> tuple[BotKind, ...]:
    """Python (the example package's command: ``python -m example_bots.random_bot``), Node
    (example_bots/node, once ``npm ci`` has run there) and C++ (``cpp_bot``, by default the
    example's build folder)."""
    node = EXAMPLES / "node"
    cpp = (cpp_bot or CPP_BOT).resolve()
    return (
        BotKind("python", "python -m example_bots.random_bot"),
        BotKind(
            "node",
            "node bot.js",
            node,
            "" if (node / "node_modules").is_dir() else f"no {node / 'node_modules'} (npm ci)",
        ),
        BotKind(
            "c++",
            str(cpp),
            missing="" if cpp.is_file() else f"{cpp} is not built (example_bots/cpp/README.md)",
        ),
    )


@dataclass(frozen=True)
class StartCost:
    """One kind's starts in one mode: each start's wall time (launch to session), its
    process tree's CPU then, and the runner's CPU meanwhile, in milliseconds."""

    kind: str
    mode: SandboxMode
    wall_ms: tuple[float, ...]
    bot_cpu_ms: tuple[float, ...]
    runner_cpu_ms: tuple[float, ...]


def bench_starts(
    kinds: tuple[BotKind, ...],
    starts: int,
    *,
    progress: Callable[[str], None] = lambda text: None,
) -> tuple[StartCost, ...]:
    """``starts`` starts of each kind that can run here, in each mode, in turns (one start
    of every kind and mode a round): see the module docstring."""
    modes = [SandboxMode.NONE] + ([SandboxMode.BWRAP] if bwrap_path() else [])
    runnable = [kind for kind in kinds if not kind.missing]
    figures: dict[tuple[str, SandboxMode], list[tuple[float, float, float]]] = {}
    for index in range(starts):
        for kind in runnable:
            for mode in modes:
                one = asyncio.run(_start_once(kind, mode))
                figures.setdefault((kind.name, mode), []).append(one)
                progress(
                    f"start {index + 1}/{starts} {kind.name} {mode}: {one[0]:.0f} ms, "
                    f"CPU {one[1]:.0f} ms"
                )
    return tuple(
        StartCost(name, mode, *(tuple(column) for column in zip(*values, strict=True)))
        for (name, mode), values in figures.items()
    )


@functools.cache
def _bot_folder() -> Path:
    """The folder a kind without one (the Python example) runs in: one for the whole bench,
    as a bot's folder is the same at each of its starts (the runner keeps what it works out
    from it), removed at exit."""
    folder = Path(tempfile.mkdtemp(prefix="tacocat-bench-bot-"))
    folder.chmod(0o755)  # a root runner's bot is uid 65534
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


async def _start_once(kind: BotKind, mode: SandboxMode) -> tuple[float, float, float]:
    """One start of ``kind`` in ``mode`` against a referee of its own: (wall, bot CPU, runner
    CPU) in milliseconds."""
    identity = f"start-{kind.name.replace('+', 'p')}"
    token = new_token()
    check = PeerCheck()
    referee = Referee({identity: token}, RefereeSettings(), check_peer=check)
    # tempfile, not launch.scratch's owned folders: ``--against`` runs this with an older tree.
    with tempfile.TemporaryDirectory(prefix="tacocat-bench-start-") as name:
        folder = Path(name)
        folder.chmod(0o755)  # a root runner's bot is uid 65534: its folder is below this one
        cwd = kind.folder or _bot_folder()
        socket = folder / "sockets" / f"{identity}.sock" if mode is SandboxMode.BWRAP else None
        if socket is not None:
            socket.parent.mkdir(mode=0o700)
            check.listen(identity, socket)
        server, port = await start_server(referee, unix_sockets=[str(socket)] if socket else [])
        try:
            if socket is not None:
                admit_bot(socket)
            check.tcp_port = port
            launch = Launch(
                identity=identity,
                token=token,
                log_path=folder / "start.log",
                cwd=cwd,
                mode=mode,
                limits=Limits(),
                tcp_address=f"127.0.0.1:{port}",
                socket_path=socket,
                peer_check=check,
            )
            bot = BotProcess(BotSpec(identity, kind.command), launch)
            runner, wall = time.process_time(), time.perf_counter()
            await bot.start()
            try:
                await bot.wait_connected(referee, 120.0)
                wall = time.perf_counter() - wall
                runner = time.process_time() - runner
                assert bot.process is not None  # started
                cpu = tree_cpu_seconds(bot.process.pid)
            finally:
                await referee.end_all_sessions("the start was measured")
                await bot.stop()
        finally:
            # ``--against REV`` runs this with REV's package: one before stop_server stops its
            # server with grpc's own stop.
            stop_server = getattr(referee_room, "stop_server", None)
            await (server.stop(0.5) if stop_server is None else stop_server(server, 0.5))
    return wall * 1000, cpu * 1000, runner * 1000


def measure_start(kind_name: str, mode_name: str) -> list[float]:
    """One start of the kind named ``kind_name`` in ``mode_name``, in a child of ``bench
    sandbox --against`` (``trees.CHILD``): [wall, bot CPU, runner CPU] in milliseconds."""
    (kind,) = [kind for kind in bot_kinds() if kind.name == kind_name]
    return list(asyncio.run(_start_once(kind, SandboxMode(mode_name))))


def bench_starts_against(
    against: str, starts: int, *, progress: Callable[[str], None] = lambda text: None
) -> Comparison[StartCost]:
    """``starts`` starts of the Python example bot in each mode by this tree and by a worktree
    of ``against``, in turns (each tree first in half the rounds), each tree's by a child in
    its own environment (``trees.own_environments``); raises ``trees.BenchError`` if the
    comparison cannot be made.  (``trees`` is imported here: a child runs this file with the
    other tree's package, which may not have it.)"""
    from tacocat_arena.bench.trees import Child, Comparison, in_turns, own_environments

    modes = [SandboxMode.NONE] + ([SandboxMode.BWRAP] if bwrap_path() else [])
    load_before = os.getloadavg()
    found: dict[str, dict[SandboxMode, list[list[float]]]] = {"this": {}, "against": {}}
    with own_environments(against) as (this, other, trees, pythons):

        def child(key: str) -> Child:
            return Child(trees[key], __file__, "measure_start", python=pythons[key])

        with child("this") as mine, child("against") as theirs:
            names = {id(mine): "this", id(theirs): "against"}
            for index in range(starts):
                for mode in modes:
                    for child in in_turns(index, mine, theirs):
                        one = child.ask("python", str(mode))
                        found[names[id(child)]].setdefault(mode, []).append(one)
                        progress(
                            f"start {index + 1}/{starts} {names[id(child)]} {mode}: "
                            f"{one[0]:.0f} ms, CPU {one[1]:.0f} ms"
                        )

    def costs(key: str) -> tuple[StartCost, ...]:
        return tuple(
            StartCost("python", mode, *(tuple(column) for column in zip(*rows, strict=True)))
            for mode, rows in found[key].items()
        )

    return Comparison(this, other, costs("this"), costs("against"), load_before, os.getloadavg())
