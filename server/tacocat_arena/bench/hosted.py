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

    @property
    def games_per_s(self) -> float:
        return self.games / self.seconds

    @property
    def starts_per_game(self) -> float | None:
        """Bot processes started per hosted game: four a batch (two versions and their twins)
        over its games (two a deal)."""
        return None if self.pairs_per_batch is None else 4 / (2 * self.pairs_per_batch)


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
                + f"CPU a game, arena and all under it: "
                f"{1000 * run.tree_cpu_s / max(1, run.games):.0f} ms)"
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


def _tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of ``pid`` and its live descendants, each with its reaped children's
    (/proc/PID/stat's utime, stime, cutime, cstime): the arena, its workers, and the bots
    they started and waited for."""
    parents: dict[int, int] = {}
    times: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue  # it ended meanwhile
        fields = stat[stat.rindex(")") + 2 :].split()
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = sum(int(value) for value in fields[11:15])
    tree, grew = {pid}, True
    while grew:
        more = {child for child, parent in parents.items() if parent in tree} - tree
        grew = bool(more)
        tree |= more
    return sum(times.get(member, 0) for member in tree) / os.sysconf("SC_CLK_TCK")


def _run(
    workers: int, seconds: float, requests_per_s: float, pairs_per_batch: int | None = None
) -> HostedRun:
    with tempfile.TemporaryDirectory(prefix="tacocat-bench-hosted-") as folder:
        names = {"r1": "python-random", "r2": "python-random", "g1": "python-greedy",
                 "g2": "python-greedy"}  # fmt: skip
        tokens = {name: f"bench-hosted-token-{name}" for name in names}
        tokens_file = Path(folder) / "tokens.toml"
        tokens_file.write_text("".join(f'{n} = "{t}"\n' for n, t in tokens.items()))
        server = subprocess.Popen(
            [sys.executable, "-m", "tacocat_arena.cli", "serve", "--dir", str(Path(folder) / "a"),
             "--tokens", str(tokens_file), "--port", "0", "--web", "127.0.0.1:0",
             "--workers", str(workers), "--move-timeout", "5",
             *([] if pairs_per_batch is None else ["--pairs-per-batch", str(pairs_per_batch)])],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            _, web = _addresses(server)
            for name, package in names.items():
                version = upload(PACKAGES / package, web, tokens[name])
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
            tree_before = _tree_cpu_seconds(server.pid)
            phase = _phase(connection, server.pid, seconds, (latencies, requests_per_s))
            tree_cpu = _tree_cpu_seconds(server.pid) - tree_before
            connection.close()
        finally:
            stop_server(server, 60.0)
    return HostedRun(
        workers, phase.seconds, phase.games, latencies, phase.server_cpu_s, pairs_per_batch,
        tree_cpu,
    )  # fmt: skip


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
