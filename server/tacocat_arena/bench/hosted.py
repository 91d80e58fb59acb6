"""``tacocat-arena bench arena --hosted``: hosted games/s with 1 and 2 workers, and the page's
response time while they play.

For each worker count it starts ``tacocat-arena serve --workers N`` on a fresh folder
(loopback, free ports), submits four example packages over HTTP as four players (two
``python-random``, two ``python-greedy``: two pairings can play at once), waits until all four
are active (gated against a 5 s move timeout, which a busy machine's check survives) and
have played, then for ``seconds`` asks for ``/`` and ``/api/leaderboard`` in
turn at a steady rate over one keep-alive connection, timing each, and counts the games
committed.  A hosted game's cost includes starting its batch's sandboxed processes (four per
batch: each version and its twin), which was most of it for these fast bots at two deals a
batch; ``--pairs-per-batch 2 --pairs-per-batch 8`` compares batch sizes in one run.
Starts are counted, not assumed: the bot processes under the arena (an example bot's
``python -m example_bots...``) seen in its process table, sampled every 50 ms while the
window lasts, from its first commit of a batch's games to its last, over the games those
commits stored (one worker starts a batch once the last one's games are in, so these are
the starts of those games' batches; a whole window's count would add a batch cut in two
at each edge).

``bench arena --hosted --against REV`` (``bench_hosted_against``) measures this tree and a
git worktree of REV in one run, in turns, one worker each.  Each tree runs in a virtual
environment of its own that the bench makes (``trees.tree_python``): a ``.pth`` file puts the
tree's folders first and this environment's site-packages (grpcio, protobuf, ...) after
them, so ``serve``, its workers and the bots in their sandboxes all import that tree (this
environment's editable install would send the bots to this checkout), and both trees run
under the same kind of installation.

``bench arena --spread`` (``bench_spread``) instead submits six packages to one worker and
counts, after 300 games, how often each pair of versions met (issue 35's soak).
"""

from __future__ import annotations

import collections
import http.client
import itertools
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import example_bots

from tacocat_arena.arena.uploader import follow, upload
from tacocat_arena.bench.arena import (
    _addresses,
    _latency,
    _phase,
    _status,
    load_line,
    stop_server,
)
from tacocat_arena.bench.sandbox import tree_cpu_seconds
from tacocat_arena.bench.trees import Comparison, in_turns, own_environments, tree_env
from tacocat_arena.referee.peers import descendants

#: The example packages (example_bots/packages in the repository).
PACKAGES = Path(example_bots.__file__).resolve().parent / "packages"


@dataclass(frozen=True)
class HostedRun:
    """One worker count's figures."""

    workers: int
    seconds: float
    games: int
    latencies_ms: dict[str, list[float]]
    cpu_s: float
    #: The batch size the arena ran with (None: ``serve``'s default).
    pairs_per_batch: int | None = None
    #: CPU of the arena and everything under it (workers, referees, the bots' sandboxes).
    tree_cpu_s: float = 0.0
    #: Bot processes seen starting during the window (None: not counted).
    starts: int | None = None
    #: (starts, games) from the window's first commit of games to its last (None: fewer
    #: than two commits seen): the starts of the very batches whose games they are.
    batches: tuple[int, int] | None = None

    @property
    def games_per_s(self) -> float:
        return self.games / self.seconds

    @property
    def starts_per_game(self) -> float | None:
        """Bot processes started per hosted game: between the window's first and last
        commits where there were two, else over the whole window (whose edges count starts
        of batches whose games it does not see)."""
        if self.batches is not None and self.batches[1]:
            return self.batches[0] / self.batches[1]
        return None if self.starts is None else self.starts / max(1, self.games)

    @property
    def cpu_ms_per_game(self) -> float:
        """CPU of the arena and everything under it, per hosted game."""
        return 1000 * self.tree_cpu_s / max(1, self.games)


@dataclass(frozen=True)
class HostedFigures:
    """What ``bench arena --hosted`` prints."""

    runs: tuple[HostedRun, ...]
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]

    def summary(self) -> str:
        """The lines to print."""
        lines = [
            load_line(self.load_before, self.load_after),
            "4 hosted versions (2 python-random, 2 python-greedy), bwrap where it works",
        ]
        for run in self.runs:
            batch = "default" if run.pairs_per_batch is None else str(run.pairs_per_batch)
            starts = run.starts_per_game
            lines.append(
                f"--workers {run.workers} --pairs-per-batch {batch}: {run.games_per_s:6.2f} "
                f"hosted games/s ({run.games} games in {run.seconds:.1f} s; arena process CPU "
                f"{run.cpu_s / run.seconds:.2f} of a core; "
                + (f"{starts:.2f} starts a game; " if starts is not None else "")
                + f"CPU a game, arena and all under it: {run.cpu_ms_per_game:.0f} ms)"
            )
            every = [ms for values in run.latencies_ms.values() for ms in values]
            lines.append(f"  page while hosted games play: {_latency(every)}")
            for path, values in run.latencies_ms.items():
                lines.append(f"    {path:<18} {_latency(values)}")
        return "\n".join(lines)


def bench_hosted(
    seconds: float,
    requests_per_s: float,
    workers: tuple[int, ...] = (1, 2),
    pairs_per_batch: tuple[int, ...] = (),
) -> HostedFigures:
    """Run the measurement (module docstring) once per worker count; with
    ``pairs_per_batch``, instead once per batch size with one worker, in that order (one run
    on one machine compares batch sizes: issue 41)."""
    load_before = os.getloadavg()
    if pairs_per_batch:
        runs = tuple(_run(1, seconds, requests_per_s, pairs) for pairs in pairs_per_batch)
    else:
        runs = tuple(_run(count, seconds, requests_per_s) for count in workers)
    return HostedFigures(runs, load_before, os.getloadavg())


#: How often the process table is read for bot starts while a window lasts.
SAMPLE_S = 0.05


def _bot_instances(pid: int) -> set[tuple[int, str]]:
    """The example bots' processes under ``pid`` (a sandboxed one's host pid), each with its
    start time: one entry per start, whatever its pid is reused for later."""
    found = set()
    for member in descendants(pid):
        try:
            argv = Path(f"/proc/{member}/cmdline").read_bytes().split(b"\0")
            stat = Path(f"/proc/{member}/stat").read_text()
        except OSError:
            continue
        if argv[1:2] == [b"-m"] and argv[2].startswith(b"example_bots."):  # python, not sh
            found.add((member, stat[stat.rindex(")") + 2 :].split()[19]))
    return found


class _StartCounter:
    """Counts the bot processes that start under ``pid`` while it runs (a thread sampling
    the process table every ``SAMPLE_S``), and the games the arena at ``web`` has stored
    (every ``STATUS_EVERY`` samples), so that starts are set against the games of the same
    batches (``starts_per_game``)."""

    def __init__(self, pid: int, web: tuple[str, int]) -> None:
        self.pid = pid
        self.web = web
        self.before = _bot_instances(pid)
        self.seen: set[tuple[int, str]] = set(self.before)
        #: (games stored, starts seen) at each status sample.
        self.timeline: list[tuple[int, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        connection = http.client.HTTPConnection(*self.web, timeout=30)
        count = 0
        try:
            while not self._stop.wait(SAMPLE_S):
                self.seen |= _bot_instances(self.pid)
                count += 1
                if count % STATUS_EVERY == 0:
                    self.timeline.append((_status(connection)["games"], self.starts))
        finally:
            connection.close()

    def __enter__(self) -> _StartCounter:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def starts(self) -> int:
        """Starts seen since the counter began."""
        return len(self.seen - self.before)

    def between_commits(self) -> tuple[int, int] | None:
        """(starts, games) from the window's first commit of games to its last: a batch's
        games are stored together once it has played, and one worker starts the next batch
        then, so these starts are those of the batches whose games these are (the window's
        own edges cut batches in two).  None with fewer than two commits seen."""
        changes = [
            index
            for index in range(1, len(self.timeline))
            if self.timeline[index][0] != self.timeline[index - 1][0]
        ]
        if len(changes) < 2:
            return None
        (games_a, starts_a), (games_b, starts_b) = (
            self.timeline[changes[0]],
            self.timeline[changes[-1]],
        )
        return starts_b - starts_a, games_b - games_a


#: Status samples (of the games stored) every this many process-table samples.
STATUS_EVERY = 4


def _run(
    workers: int,
    seconds: float,
    requests_per_s: float,
    pairs_per_batch: int | None = None,
    *,
    python: str = sys.executable,
    env: dict[str, str] | None = None,
    packages: Path = PACKAGES,
) -> HostedRun:
    with tempfile.TemporaryDirectory(prefix="tacocat-bench-hosted-") as folder:
        names = {"r1": "python-random", "r2": "python-random", "g1": "python-greedy",
                 "g2": "python-greedy"}  # fmt: skip
        tokens = {name: f"bench-hosted-token-{name}" for name in names}
        tokens_file = Path(folder) / "tokens.toml"
        tokens_file.write_text("".join(f'{n} = "{t}"\n' for n, t in tokens.items()))
        server = subprocess.Popen(
            [python, "-m", "tacocat_arena.cli", "serve", "--dir", str(Path(folder) / "a"),
             "--tokens", str(tokens_file), "--port", "0", "--web", "127.0.0.1:0",
             "--workers", str(workers), "--move-timeout", "5",
             *([] if pairs_per_batch is None else ["--pairs-per-batch", str(pairs_per_batch)])],
            stdout=subprocess.PIPE, text=True, cwd=folder, env=env,
        )  # fmt: skip
        try:
            _, web = _addresses(server)
            for name, package in names.items():
                version = upload(packages / package, web, tokens[name])
                version = follow(web, version, timeout=300)
                if version["status"] != "active":
                    raise RuntimeError(f"{package} was not accepted: {version['reason']}")
            host, port = web.removeprefix("http://").rstrip("/").split(":")
            connection = http.client.HTTPConnection(host, int(port), timeout=30)
            deadline = time.monotonic() + 120
            while _status(connection)["games"] < 8:
                if time.monotonic() > deadline:
                    raise RuntimeError("the hosted versions did not start playing")
                time.sleep(0.5)
            latencies: dict[str, list[float]] = {"/": [], "/api/leaderboard": []}
            tree_before = tree_cpu_seconds(server.pid)
            with _StartCounter(server.pid, (host, int(port))) as counter:
                phase = _phase(connection, server.pid, seconds, (latencies, requests_per_s))
            tree_cpu = tree_cpu_seconds(server.pid) - tree_before
            connection.close()
        finally:
            stop_server(server, 60.0)
    return HostedRun(
        workers, phase.seconds, phase.games, latencies, phase.server_cpu_s, pairs_per_batch,
        tree_cpu, counter.starts, counter.between_commits(),
    )  # fmt: skip


@dataclass(frozen=True)
class HostedComparison(Comparison[HostedRun]):
    """``bench arena --hosted --against REV``: each tree's runs, round by round, in turns."""

    @staticmethod
    def _total(runs: tuple[HostedRun, ...]) -> tuple[float, float, float]:
        """Games/s, starts a game and CPU a game over all of a tree's runs."""
        games = sum(run.games for run in runs)
        pairs = [run.batches or (run.starts or 0, run.games) for run in runs]
        counted = sum(s for s, _ in pairs) / max(1, sum(g for _, g in pairs))
        cpu = 1000 * sum(run.tree_cpu_s for run in runs) / max(1, games)
        return games / sum(run.seconds for run in runs), counted, cpu

    def summary(self) -> str:
        """The lines to print."""
        lines = [
            f"this tree: {self.this}",
            f"against:   {self.other}",
            load_line(self.load_before, self.load_after),
            "4 hosted versions (2 python-random, 2 python-greedy), --workers 1, each tree's "
            "own serve --pairs-per-batch default, bwrap where it works",
            f"{'round':>5} {'tree':<8} {'games/s':>8} {'games':>6} {'starts/game':>12} "
            f"{'CPU ms/game':>12}",
        ]
        for index, (a, b) in enumerate(zip(self.mine, self.theirs, strict=True)):
            for name, run in (("this", a), ("against", b)):
                played = run.games > 0  # no game: nothing to divide the starts and CPU by
                starts = "-" if run.starts_per_game is None or not played else (
                    f"{run.starts_per_game:.2f}")  # fmt: skip
                cpu = f"{run.cpu_ms_per_game:.0f}" if played else "-"
                lines.append(
                    f"{index + 1:>5} {name:<8} {run.games_per_s:8.2f} {run.games:6d} "
                    f"{starts:>12} {cpu:>12}"
                )
        (rate_a, starts_a, cpu_a), (rate_b, starts_b, cpu_b) = (
            self._total(self.mine),
            self._total(self.theirs),
        )
        ratios = [_ratio(a.games_per_s, b.games_per_s) for a, b in zip(
            self.mine, self.theirs, strict=True)]  # fmt: skip
        lines.append(
            f"all rounds: this {_per_game(self.mine, rate_a, starts_a, cpu_a)}; "
            f"against {_per_game(self.theirs, rate_b, starts_b, cpu_b)}"
        )
        committed = sum(run.games for run in self.mine), sum(run.games for run in self.theirs)
        lines.append(
            f"this/against games/s: {_ratio(rate_a, rate_b)} over all rounds "
            f"(each round: {', '.join(ratios)}); CPU a game "
            f"{_ratio(cpu_a, cpu_b) if all(committed) else 'n/a'}"
        )
        for name, games in zip(("this tree", "against"), committed, strict=True):
            if not games:
                lines.append(
                    f"{name} committed no hosted game in any window: no ratio; give it "
                    f"longer (--seconds), its first batch may not have ended yet"
                )
        return "\n".join(lines)


def _ratio(a: float, b: float) -> str:
    """``a / b`` to two decimals, or ``n/a`` when ``b`` is 0 (a tree that committed no
    game: its rate is no divisor, and dividing by a tiny floor printed 1599979214.19)."""
    return f"{a / b:.2f}" if b > 0 else "n/a"


def _per_game(runs: tuple[HostedRun, ...], rate: float, starts: float | None, cpu: float) -> str:
    """A tree's figures over all rounds; without a game, its rate alone."""
    if not sum(run.games for run in runs):
        return f"{rate:.2f} games/s (no game committed)"
    return f"{rate:.2f} games/s, {starts or 0:.2f} starts a game, {cpu:.0f} ms CPU a game"


def bench_hosted_against(
    against: str, seconds: float, requests_per_s: float, rounds: int = 2
) -> HostedComparison:
    """``rounds`` runs (module docstring) of this tree and as many of a worktree of commit
    ``against``, in turns (each first in half the rounds), one worker each, with each
    tree's default batch size; raises ``trees.BenchError`` if it cannot be made."""
    load_before = os.getloadavg()
    runs: dict[str, list[HostedRun]] = {"this": [], "against": []}
    with own_environments(against) as (this, other, trees, pythons):
        for index in range(rounds):
            for key in in_turns(index, "this", "against"):
                runs[key].append(
                    _run(
                        1,
                        seconds,
                        requests_per_s,
                        python=pythons[key],
                        env=tree_env(),
                        packages=trees[key] / "example_bots" / "packages",
                    )  # fmt: skip
                )
    return HostedComparison(
        this, other, tuple(runs["this"]), tuple(runs["against"]), load_before, os.getloadavg()
    )


@dataclass(frozen=True)
class SpreadFigures:
    """What ``bench arena --spread`` prints: how evenly the hosted ladder pairs."""

    versions: tuple[str, ...]
    meetings: dict[tuple[str, str], int]
    games: dict[str, int]
    seconds: float
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]

    def summary(self) -> str:
        """The lines to print."""
        met = [self.meetings.get(pair, 0) for pair in itertools.combinations(self.versions, 2)]
        total = sum(self.games.values()) // 2
        low, high = min(met), max(met)
        ratio = f"{high / low:.2f}" if low else "inf (a pair never met)"
        per_bot = [self.games.get(v, 0) for v in self.versions]
        return "\n".join([
            load_line(self.load_before, self.load_after),
            f"{len(self.versions)} hosted versions (python-random and python-greedy), --workers 1, "
            f"{total} games in {self.seconds:.1f} s",
            f"pairs met: {sum(1 for m in met if m)} of {len(met)}; meetings per pair "
            f"min {low}, max {high}, max/min {ratio}",
            f"games per version: min {min(per_bot)}, max {max(per_bot)}",
        ])  # fmt: skip


def bench_spread(games: int = 300, versions: int = 6) -> SpreadFigures:
    """``serve --workers 1`` with ``versions`` submitted example packages (one player each),
    until ``games`` games are stored: the meetings of every pair (issue 35's soak)."""
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="tacocat-bench-spread-") as folder:
        packages = ("python-random", "python-greedy")
        names = {f"p{i}": packages[i % 2] for i in range(versions)}
        tokens = {name: f"bench-spread-token-{name}" for name in names}
        tokens_file = Path(folder) / "tokens.toml"
        tokens_file.write_text("".join(f'{n} = "{t}"\n' for n, t in tokens.items()))
        server = subprocess.Popen(
            [sys.executable, "-m", "tacocat_arena.cli", "serve", "--dir", str(Path(folder) / "a"),
             "--tokens", str(tokens_file), "--port", "0", "--web", "127.0.0.1:0",
             "--workers", "1", "--move-timeout", "5"],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            _, web = _addresses(server)
            for name, package in names.items():
                version = follow(web, upload(PACKAGES / package, web, tokens[name]), timeout=300)
                if version["status"] != "active":
                    raise RuntimeError(f"{package} was not accepted: {version['reason']}")
            host, port = web.removeprefix("http://").rstrip("/").split(":")
            connection = http.client.HTTPConnection(host, int(port), timeout=30)
            started = time.monotonic()
            while _status(connection)["games"] < games:
                if time.monotonic() - started > 3600:
                    raise RuntimeError("the hosted ladder stopped making progress")
                time.sleep(1.0)
            seconds = time.monotonic() - started
            connection.close()
        finally:
            stop_server(server, 60.0)
        with sqlite3.connect(Path(folder) / "a" / "arena.sqlite") as db:
            rows = db.execute("SELECT seat0, seat1 FROM games").fetchall()
    meetings: collections.Counter[tuple[str, str]] = collections.Counter()
    played: collections.Counter[str] = collections.Counter()
    for a, b in rows:
        meetings[(a, b) if a < b else (b, a)] += 1
        played.update((a, b))
    return SpreadFigures(
        tuple(sorted(f"{name}@v1" for name in names)), dict(meetings), dict(played), seconds,
        load_before, os.getloadavg(),
    )  # fmt: skip
