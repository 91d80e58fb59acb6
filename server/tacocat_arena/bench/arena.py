"""``tacocat-arena bench arena``: the web page's response time while the ladder plays flat out.

It starts ``tacocat-arena serve`` on a fresh folder (a subprocess, loopback, free ports), and
N trivial bots (they answer every request with the first legal option at once: the ladder's
full speed) in two driver processes.  Phase A measures games/s and decisions/s with no page
requests; phase B the same while this process asks for ``/`` and ``/api/leaderboard`` in turn,
one request at a time at a steady rate, over one keep-alive connection, and times each
(request sent to body read).  With ``sse`` > 0, phase B runs with that many of the index
page's event streams open (a third process reading them, as browser tabs would), from
several 127.x addresses so the per-address cap (``web/limits.py``) is not what is measured.
It prints both phases' rates, the pages' median and p99, and the server's CPU share, with
the machine's load from ``os.getloadavg``.

The bot driver role runs as ``python -m tacocat_arena.bench.arena bots ADDRESS NAME=TOKEN...``,
the stream readers as ``python -m tacocat_arena.bench.arena sse HOST PORT N``.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tacocat_arena.bench.load import SoakFigures
from tacocat_arena.bench.referee import _trivial_bot

#: How much lower the bot drivers' scheduling priority is than the server's.
BOT_NICENESS = 10


@dataclass(frozen=True)
class Phase:
    """Rates over one measured window."""

    seconds: float
    games: int
    decisions: int
    server_cpu_s: float

    @property
    def games_per_s(self) -> float:
        return self.games / self.seconds

    @property
    def decisions_per_s(self) -> float:
        return self.decisions / self.seconds

    @property
    def server_cpu_share(self) -> float:
        """The server's CPU seconds per wall second (1.0 = one core busy)."""
        return self.server_cpu_s / self.seconds


@dataclass(frozen=True)
class ArenaFigures:
    """What ``bench arena`` prints."""

    bots: int
    concurrency: int
    #: Event streams open during phase B, and the events they read meanwhile.
    streams: int
    stream_events: int
    quiet: Phase
    loaded: Phase
    latencies_ms: dict[str, list[float]]
    #: The same requests with the ladder paused: what this machine's noise alone costs.
    idle_latencies_ms: dict[str, list[float]]
    paused: Phase
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]

    def summary(self) -> str:
        """The lines to print."""
        lines = [
            load_line(self.load_before, self.load_after),
            f"{self.bots} trivial bots, concurrency {self.concurrency} games"
            + (
                f"; phase B with {self.streams} SSE streams open (they read "
                f"{self.stream_events:,} events, {self.stream_events / self.loaded.seconds:,.0f}/s)"
                if self.streams
                else ""
            ),
        ]
        for name, phase in (("A, no page requests", self.quiet), ("B, with requests", self.loaded)):
            lines.append(
                f"phase {name}: {phase.games_per_s:,.1f} games/s, "
                f"{phase.decisions_per_s:,.0f} decisions/s, server CPU "
                f"{phase.server_cpu_share:.2f} cores ({phase.seconds:.1f} s)"
            )
        all_ms: list[float] = []
        for path, values in self.latencies_ms.items():
            all_ms += values
            lines.append(f"GET {path:<18} {_latency(values)}")
        lines.append(f"GET (all)              {_latency(all_ms)}")
        idle = [ms for values in self.idle_latencies_ms.values() for ms in values]
        lines.append(f"GET (all), ladder paused (baseline) {_latency(idle)}")
        if idle:
            cpu_ms = self.paused.server_cpu_s * 1000 / len(idle)
            lines.append(f"server CPU per request, ladder paused: {cpu_ms:.2f} ms")
        ratio = self.loaded.games_per_s / max(self.quiet.games_per_s, 1e-9)
        lines.append(f"games/s with requests / without: {ratio:.2f}")
        return "\n".join(lines)


def load_line(before: tuple[float, float, float], after: tuple[float, float, float]) -> str:
    """The machine's load average before and after a bench, and its cores."""
    return f"load average before: {_load(before)}; after: {_load(after)} ({os.cpu_count()} cores)"


def _load(values: tuple[float, float, float]) -> str:
    return " ".join(f"{v:.2f}" for v in values)


def _latency(values: list[float]) -> str:
    if not values:
        return "no requests"
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return (
        f"n={len(values):>5}  median {statistics.median(values):6.1f} ms  p99 {p99:6.1f} ms  "
        f"max {ordered[-1]:6.1f} ms"
    )


@dataclass(frozen=True)
class RunningArena:
    """A ``serve`` subprocess with trivial bots connected and playing."""

    server: subprocess.Popen[str]
    folder: Path
    host: str
    port: int
    drivers: list[subprocess.Popen[bytes]]

    def connect(self) -> http.client.HTTPConnection:
        """A keep-alive connection to the web page."""
        return http.client.HTTPConnection(self.host, self.port, timeout=30)


@contextlib.contextmanager
def running_arena(bots: int, concurrency: int) -> Iterator[RunningArena]:
    """Start ``serve`` on a fresh folder and ``bots`` trivial bots in two driver processes;
    return once every bot is connected and has played; stop them all on exit."""
    with tempfile.TemporaryDirectory(prefix="tacocat-bench-arena-") as folder:
        tokens = {f"bot{i:02d}": f"bench-token-{i:02d}" for i in range(bots)}
        tokens_file = Path(folder) / "tokens.toml"
        tokens_file.write_text("".join(f'{n} = "{t}"\n' for n, t in tokens.items()))
        server = subprocess.Popen(
            [sys.executable, "-m", "tacocat_arena.cli", "serve", "--dir", str(Path(folder) / "a"),
             "--tokens", str(tokens_file), "--port", "0", "--web", "127.0.0.1:0",
             "--concurrency", str(concurrency), "--per-bot", str(max(2, concurrency // bots + 1)),
             "--move-timeout", "5"],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        drivers: list[subprocess.Popen[bytes]] = []
        try:
            address, web = _addresses(server)
            host, port = web.removeprefix("http://").rstrip("/").split(":")
            names = list(tokens)
            for half in (names[: bots // 2], names[bots // 2 :]):
                drivers.append(
                    subprocess.Popen(
                        [
                            sys.executable,
                            "-m",
                            "tacocat_arena.bench.arena",
                            "bots",
                            address,
                            *(f"{n}={tokens[n]}" for n in half),
                        ],
                    )  # fmt: skip
                )
            arena = RunningArena(server, Path(folder) / "a", host, int(port), drivers)
            connection = arena.connect()
            _wait_for(connection, lambda s: s["connected"] == bots and s["games"] >= 2 * bots)
            connection.close()
            yield arena
        finally:
            stop_server(server, 30.0)
            for driver in drivers:
                try:
                    driver.wait(15)
                except subprocess.TimeoutExpired:
                    driver.kill()
                    driver.wait()


def bench_arena(
    bots: int, seconds: float, concurrency: int, requests_per_s: float, sse: int = 0
) -> ArenaFigures:
    """Run the measurement (see the module docstring)."""
    load_before = os.getloadavg()
    with running_arena(bots, concurrency) as arena:
        server, host, port = arena.server, arena.host, arena.port
        connection = arena.connect()
        time.sleep(1.0)  # warm-up: every bot has played
        quiet = _phase(connection, server.pid, seconds, None)
        latencies: dict[str, list[float]] = {"/": [], "/api/leaderboard": []}
        if sse:
            arena.drivers.append(_open_streams(host, port, sse))
        loaded = _phase(connection, server.pid, seconds, (latencies, requests_per_s))
        stream_events = _close_streams(arena.drivers.pop()) if sse else 0
        organizer = (arena.folder / "organizer.token").read_text().strip()
        _post(connection, "/api/pause", organizer)
        _wait_for(connection, lambda s: s["live"] == 0)
        idle: dict[str, list[float]] = {"/": [], "/api/leaderboard": []}
        paused = _phase(connection, server.pid, min(seconds, 5.0), (idle, requests_per_s))
        connection.close()
    return ArenaFigures(
        bots,
        concurrency,
        sse,
        stream_events,
        quiet,
        loaded,
        latencies,
        idle,
        paused,
        load_before,
        os.getloadavg(),
    )


def stop_server(server: subprocess.Popen[str], timeout: float) -> None:
    """SIGTERM the arena server and wait for it (killed after ``timeout`` seconds)."""
    server.send_signal(signal.SIGTERM)
    try:
        server.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        server.kill()
        server.communicate()


def arena_soak(
    games: int,
    bots: int = 8,
    concurrency: int = 8,
    samples: int = 20,
    progress: Callable[[int, float], None] | None = None,
) -> SoakFigures:
    """``serve``'s RSS (from /proc) against its stored games (``/api/status``) while trivial
    bots play ``games`` games on the ladder, sampled ``samples`` times (the first once every
    bot has played: start-up is not growth)."""
    every = max(1, games // samples)
    with running_arena(bots, concurrency) as arena:
        connection = arena.connect()
        started = time.monotonic()
        first = _status(connection)["games"]
        rss = [(0, _rss_mib(arena.server.pid))]
        if progress is not None:
            progress(*rss[0])
        while rss[-1][0] < games:
            time.sleep(0.2)
            played = _status(connection)["games"] - first
            if played >= rss[-1][0] + every or played >= games:
                rss.append((played, _rss_mib(arena.server.pid)))
                if progress is not None:
                    progress(*rss[-1])
        connection.close()
        elapsed = time.monotonic() - started
    return SoakFigures(rss[-1][0], elapsed, tuple(rss), 0, 0.0, 0.0)


def _rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _addresses(server: subprocess.Popen[str]) -> tuple[str, str]:
    address = web = ""
    assert server.stdout is not None
    deadline = time.monotonic() + 60
    while not (address and web):
        line = server.stdout.readline()
        if not line or time.monotonic() > deadline:
            raise RuntimeError("the arena server did not start")
        if line.startswith("arena: "):
            address = line.split()[1]
        elif line.startswith("web: "):
            web = line.split()[1]
    return address, web


def _get(connection: http.client.HTTPConnection, path: str) -> bytes:
    try:
        connection.request("GET", path)
        response = connection.getresponse()
    except (http.client.RemoteDisconnected, ConnectionError):
        # The server closes an idle keep-alive connection after a few seconds (phase A
        # sends nothing): open it again.  Timed requests run back to back and never idle.
        connection.close()
        connection.request("GET", path)
        response = connection.getresponse()
    body = response.read()
    if response.status != 200:
        raise RuntimeError(f"GET {path}: HTTP {response.status}")
    return body


def _post(connection: http.client.HTTPConnection, path: str, token: str) -> None:
    connection.request("POST", path, headers={"Authorization": f"Bearer {token}"})
    response = connection.getresponse()
    response.read()
    if response.status != 200:
        raise RuntimeError(f"POST {path}: HTTP {response.status}")


def _status(connection: http.client.HTTPConnection) -> dict[str, int]:
    status: dict[str, int] = json.loads(_get(connection, "/api/status"))
    return status


def _wait_for(
    connection: http.client.HTTPConnection, ready: Callable[[dict[str, int]], bool]
) -> None:
    deadline = time.monotonic() + 120
    while not ready(_status(connection)):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the bots did not start playing: {_status(connection)}")
        time.sleep(0.2)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _phase(
    connection: http.client.HTTPConnection,
    pid: int,
    seconds: float,
    requests: tuple[dict[str, list[float]], float] | None,
) -> Phase:
    before, cpu_before, started = _status(connection), _cpu_seconds(pid), time.monotonic()
    end = started + seconds
    paths = ["/", "/api/leaderboard"]
    count = 0
    while (now := time.monotonic()) < end:
        if requests is None:
            time.sleep(min(0.2, end - now))
            continue
        latencies, rate = requests
        path = paths[count % len(paths)]
        sent = time.perf_counter()
        _get(connection, path)
        latencies[path].append((time.perf_counter() - sent) * 1000)
        count += 1
        next_at = started + count / rate
        time.sleep(max(0.0, next_at - time.monotonic()))
    elapsed = time.monotonic() - started
    after, cpu_after = _status(connection), _cpu_seconds(pid)
    return Phase(
        elapsed,
        after["games"] - before["games"],
        after["decisions_since_start"] - before["decisions_since_start"],
        cpu_after - cpu_before,
    )


#: Streams opened from one source address (under the web server's per-address cap).
STREAMS_PER_ADDRESS = 25


def _open_streams(host: str, port: int, count: int) -> subprocess.Popen[bytes]:
    """Start the stream readers; return once all ``count`` streams answered 200."""
    reader = subprocess.Popen(
        [sys.executable, "-m", "tacocat_arena.bench.arena", "sse", host, str(port), str(count)],
        stdout=subprocess.PIPE,
        preexec_fn=lambda: os.nice(BOT_NICENESS),  # as the bots: browsers are elsewhere
    )
    assert reader.stdout is not None
    line = reader.stdout.readline()
    if not line.startswith(b"open "):
        reader.kill()
        raise RuntimeError(f"the event streams did not open: {line!r}")
    return reader


def _close_streams(reader: subprocess.Popen[bytes]) -> int:
    """Stop the stream readers; the events they read."""
    reader.send_signal(signal.SIGTERM)
    out, _ = reader.communicate(timeout=30)
    return int(out.split()[-1]) if out.startswith(b"read ") else -1


async def _read_streams(host: str, port: int, count: int) -> None:
    async def one(index: int) -> None:
        source = f"127.0.{100 + index // STREAMS_PER_ADDRESS}.1"
        reader, writer = await asyncio.open_connection(host, port, local_addr=(source, 0))
        writer.write(b"GET /events HTTP/1.1\r\nHost: bench\r\n\r\n")
        status = await reader.readline()
        if not status.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"stream {index}: {status!r}")
        opened.append((reader, writer))  # a writer collected would close its stream

    opened: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    await asyncio.gather(*(one(i) for i in range(count)))
    print(f"open {len(opened)}", flush=True)

    events = 0

    async def drain(reader: asyncio.StreamReader) -> None:
        nonlocal events
        while chunk := await reader.read(65536):
            events += chunk.count(b"\nevent: ") + chunk.startswith(b"event: ")

    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    drains = [asyncio.ensure_future(drain(r)) for r, _ in opened]
    await stop.wait()
    print(f"read {events}", flush=True)
    for task in drains:
        task.cancel()


async def _bots(address: str, pairs: list[str]) -> None:
    named = [pair.split("=", 1) for pair in pairs]
    await asyncio.gather(
        *(_trivial_bot(address, name, token) for name, token in named), return_exceptions=True
    )


def main(argv: list[str]) -> None:
    """Worker role (see the module docstring)."""
    role, *args = argv
    if role == "bots":
        asyncio.run(_bots(args[0], args[1:]))
    elif role == "sse":
        asyncio.run(_read_streams(args[0], int(args[1]), int(args[2])))
    else:
        raise SystemExit(f"unknown role {role!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
