"""``tacocat-arena bench referee``: what the referee costs on top of gRPC itself.

(a) a bare grpcio bidirectional-stream echo between two processes: round trips per second;
(b) referee decisions per second, one game at a time, between two trivial bots in separate
    processes over the real protocol;
(c) the same with 32 games at once;
(d) the ceiling of (b): the same bots and the referee's way of reading streams, with no game
    behind it (``measure_relay``): what (b) could reach if refereeing cost nothing.
(e) scale-out: two referee processes at once, each with its own two trivial bots and half of
    ``--scale-games`` games in flight (the shape of ``run --workers 2``), against one such
    process with all of them (decisions per second summed over the processes).
It prints (b)/(a) (the referee's overhead: 1.0 would be free) and (c)/(b) (how concurrent games
scale), from the best of a few interleaved runs.  The echo client and the trivial bots are
written alike (grpc.aio, one stream, answer each message as it arrives), so the ratio compares
like with like.

The worker roles run as ``python -m tacocat_arena.bench.referee ROLE ...``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import grpc

from tacocat.v1 import arena_pb2 as pb
from tacocat.v1 import arena_pb2_grpc
from tacocat_arena.engine import DEFAULT_RULESET

_ECHO_METHOD = "/bench.Echo/Stream"


@dataclass(frozen=True)
class RefereeRun:
    """One measurement of the three rates."""

    echo_round_trips_per_s: float
    decisions_per_s: float
    decisions_per_s_concurrent: float
    relay_decisions_per_s: float
    #: (e): one referee process with all ``scale_games`` games, and two with half each.
    scale_one_per_s: float = 0.0
    scale_two_per_s: float = 0.0


@dataclass(frozen=True)
class RefereeFigures:
    """The best of each rate over the runs, and their ratios."""

    runs: tuple[RefereeRun, ...]
    concurrent_games: int

    @property
    def echo_round_trips_per_s(self) -> float:
        """(a), best run."""
        return max(run.echo_round_trips_per_s for run in self.runs)

    @property
    def decisions_per_s(self) -> float:
        """(b), best run."""
        return max(run.decisions_per_s for run in self.runs)

    @property
    def decisions_per_s_concurrent(self) -> float:
        """(c), best run."""
        return max(run.decisions_per_s_concurrent for run in self.runs)

    @property
    def relay_decisions_per_s(self) -> float:
        """(d), the ceiling of (b), best run."""
        return max(run.relay_decisions_per_s for run in self.runs)

    @property
    def scale_out_ratio(self) -> float:
        """(e): two referee processes over one, the best run's ratio (both measured in it)."""
        return max(
            (run.scale_two_per_s / run.scale_one_per_s for run in self.runs if run.scale_one_per_s),
            default=0.0,
        )

    @property
    def overhead_ratio(self) -> float:
        """(b)/(a)."""
        return self.decisions_per_s / self.echo_round_trips_per_s

    @property
    def scaling_ratio(self) -> float:
        """(c)/(b)."""
        return self.decisions_per_s_concurrent / self.decisions_per_s


# -- (a) the echo -------------------------------------------------------------------------
async def _echo_server(port_file: str) -> None:
    async def stream(
        requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[bytes]:
        async for message in requests:
            yield message

    server = grpc.aio.server()
    handler = grpc.method_handlers_generic_handler(
        "bench.Echo", {"Stream": grpc.stream_stream_rpc_method_handler(stream)}
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    with open(port_file, "w") as handle:
        handle.write(str(port))
    await server.wait_for_termination()


async def _echo_client(port: int, seconds: float) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.stream_stream(_ECHO_METHOD)()
        payload = bytes(64)
        count = 0
        deadline = time.perf_counter() + seconds
        started = time.perf_counter()
        while time.perf_counter() < deadline:
            await call.write(payload)
            await call.read()
            count += 1
        elapsed = time.perf_counter() - started
        await call.done_writing()
        print(count / elapsed, flush=True)


# -- (b), (c): trivial bots ---------------------------------------------------------------
async def _trivial_bot(address: str, name: str, token: str) -> None:
    """Answer every request with the first legal option, as fast as the stream allows
    (reads and writes on the call itself, exactly like the echo client).  It accepts
    batches and answers a batch's requests in one message, as any bot playing many games at
    once should."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = arena_pb2_grpc.ArenaStub(channel).Play()
        await call.write(
            pb.BotMessage(
                hello=pb.Hello(protocol_version=1, bot_name=name, token=token, accept_batches=True)
            )
        )
        while (message := await call.read()) is not grpc.aio.EOF:
            case = message.WhichOneof("message")
            if case == "decision_request":
                await call.write(pb.BotMessage(action=_first_legal(message.decision_request)))
            elif case == "batch":
                reply = pb.BotMessage()
                answers = reply.actions.actions
                for inner in message.batch.messages:
                    if inner.HasField("decision_request"):
                        answers.append(_first_legal(inner.decision_request))
                    elif inner.HasField("session_end"):
                        break
                if answers:
                    await call.write(reply)
            elif case == "session_end":
                break
        await call.done_writing()


def _first_legal(request: pb.DecisionRequest) -> pb.Action:
    action = pb.Action(game_id=request.game_id, request_id=request.request_id)
    legal = request.legal
    case = legal.WhichOneof("options")
    if case == "duel":
        action.duel.card = legal.duel.values[0]
    elif case == "attack":
        action.attack.cards.extend(legal.attack.attacks[0].cards)
    elif case == "defend":
        for _ in legal.defend.cards:
            action.defend.answers.add(sacrifice=True)
    else:
        action.replace.SetInParent()
    return action


# -- the driver --------------------------------------------------------------------------
def _spawn(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tacocat_arena.bench.referee", *args],
        stdout=subprocess.PIPE,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )


def measure_echo(seconds: float, port_file: str) -> float:
    """(a): round trips per second of a bare bidi-stream echo between two processes."""
    if os.path.exists(port_file):
        os.unlink(port_file)
    server = _spawn("echo-server", port_file)
    try:
        deadline = time.monotonic() + 30
        while not os.path.exists(port_file) or not open(port_file).read():
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError("the echo server did not start")
            time.sleep(0.05)
        port = open(port_file).read()
        client = _spawn("echo-client", port, str(seconds))
        out, _ = client.communicate(timeout=seconds + 60)
        return float(out.decode().strip())
    finally:
        server.kill()
        server.wait()


async def measure_referee(seconds: float, games_at_once: int) -> float:
    """(b)/(c): decisions per second of the referee, ``games_at_once`` games in flight."""
    return (await measure_referee_cost(seconds, games_at_once))[0]


async def measure_referee_cost(seconds: float, games_at_once: int) -> tuple[float, float]:
    """(b)/(c): decisions per second of the referee, ``games_at_once`` games in flight, and
    decisions per CPU second of the referee's process (its own cost, which a loaded machine
    blurs less than the rate: the bots' wait for a core is not in it)."""
    from tacocat_arena import referee as room
    from tacocat_arena.referee import ClockSettings, Referee, RefereeSettings, start_server

    # A child of ``--against REV`` runs this with REV's package: one before stop_server stops
    # its server with grpc's own stop.
    stop_server = getattr(room, "stop_server", None)
    tokens = {"a": "token-a", "b": "token-b"}
    settings = RefereeSettings(clock=ClockSettings(decision_ms=10_000))
    referee = Referee(tokens, settings)
    server, port = await start_server(referee)
    bots = [
        _spawn("trivial-bot", f"127.0.0.1:{port}", name, token) for name, token in tokens.items()
    ]
    try:
        for name in tokens:
            await referee.wait_for_session(name, 30)
        decisions = 0
        counter = iter(range(10**9))
        deadline = time.perf_counter() + seconds
        started, cpu = time.perf_counter(), time.process_time()

        async def worker() -> None:
            nonlocal decisions
            while time.perf_counter() < deadline:
                index = next(counter)
                seats = ("a", "b") if index % 2 == 0 else ("b", "a")
                report = await referee.play(
                    f"bench-{index}", seats, seed=index, ruleset=DEFAULT_RULESET
                )
                decisions += sum(report.decisions)

        await asyncio.gather(*(worker() for _ in range(games_at_once)))
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        return decisions / elapsed, decisions / cpu
    finally:
        await referee.end_all_sessions("bench over")
        for _ in range(100):  # let the bots see SessionEnd and leave (bounded: 5 s)
            if all(bot.poll() is not None for bot in bots):
                break
            await asyncio.sleep(0.05)
        for bot in bots:
            if bot.poll() is None:
                bot.kill()
                bot.wait()
        await (server.stop(1) if stop_server is None else stop_server(server, 1))


async def measure_relay(seconds: float) -> float:
    """The ceiling of (b): the referee's stream handling with no game behind it.

    The same two trivial bot processes connect to a bare Arena.Play handler that asks them
    in turn with one fixed, realistic DecisionRequest, and reads their answers the way the
    referee must (a reader task per stream resolving a future per request, so that one
    stream can carry several games and a silent bot can still be timed out).  No engine, no
    views, no validation: whatever (b) falls short of this is the referee's own work.
    """
    from tacocat_arena.referee import grpc_server, stop_server

    loop = asyncio.get_running_loop()
    streams: list[grpc.aio.ServicerContext] = []
    both_connected = asyncio.Event()
    finished = asyncio.Event()

    async def play(
        requests: AsyncIterator[pb.BotMessage], context: grpc.aio.ServicerContext
    ) -> None:
        await context.read()  # the Hello
        streams.append(context)
        if len(streams) == 2:
            both_connected.set()
        await finished.wait()

    server = grpc_server()
    handler = grpc.method_handlers_generic_handler(
        "tacocat.v1.Arena",
        {
            "Play": grpc.stream_stream_rpc_method_handler(
                play,
                request_deserializer=pb.BotMessage.FromString,
                response_serializer=pb.RefereeMessage.SerializeToString,
            )
        },
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    bots = [_spawn("trivial-bot", f"127.0.0.1:{port}", name, "-") for name in "ab"]
    readers: list[asyncio.Task[None]] = []
    try:
        await asyncio.wait_for(both_connected.wait(), 30)
        waiting: list[asyncio.Future[pb.BotMessage]] = [loop.create_future() for _ in streams]

        async def reader(index: int) -> None:
            while (message := await streams[index].read()) is not grpc.aio.EOF:
                waiting[index].set_result(message)

        readers = [asyncio.create_task(reader(index)) for index in range(len(streams))]
        request = _sample_request()
        decisions = 0
        deadline = time.perf_counter() + seconds
        started = time.perf_counter()
        while time.perf_counter() < deadline:
            for index, context in enumerate(streams):
                request.decision_request.request_id += 1
                await context.write(request)
                await waiting[index]
                waiting[index] = loop.create_future()
                decisions += 1
        elapsed = time.perf_counter() - started
        for context in streams:
            await context.write(pb.RefereeMessage(session_end=pb.SessionEnd()))
        return decisions / elapsed
    finally:
        for task in readers:
            task.cancel()
        finished.set()
        for bot in bots:
            try:
                bot.wait(timeout=5)
            except subprocess.TimeoutExpired:
                bot.kill()
                bot.wait()
        await stop_server(server, 1)


def _sample_request() -> pb.RefereeMessage:
    """A DecisionRequest as the referee sends it: the first attack of a real game."""
    from tacocat_arena.engine import DecisionKind, Game, build_view
    from tacocat_arena.protocol.wire import KIND_TO_PB, ViewEncoder, default_action, write_legal

    game = Game(DEFAULT_RULESET, 1)
    while True:
        seat = min(game.pending)
        view = build_view(game, seat)
        if view.kind is DecisionKind.ATTACK:
            break
        for pending in sorted(game.pending):
            game.apply(pending, default_action(build_view(game, pending)))
    message = pb.RefereeMessage(
        decision_request=pb.DecisionRequest(
            game_id="relay", kind=KIND_TO_PB[view.kind], time_left_ms=10_000
        )
    )
    ViewEncoder(seat, message.decision_request.view).update(view)
    write_legal(message.decision_request.legal, view, simultaneous=False, second=False)
    return message


def bench_referee(
    seconds: float = 5.0,
    games_at_once: int = 32,
    repeats: int = 3,
    progress: Callable[[int, RefereeRun], None] | None = None,
    scale_games: int = 128,
) -> RefereeFigures:
    """Measure (a), (b), (c) and (d) ``repeats`` times, interleaved, and keep the best of each.

    On a shared machine other work only ever slows a measurement down, so the best of a
    few interleaved runs is the closest to what the code itself costs (the practice of
    timeit and pyperf); every run is reported too.
    """
    import tempfile

    runs = []
    for index in range(repeats):
        with tempfile.TemporaryDirectory() as folder:
            echo = measure_echo(seconds, os.path.join(folder, "port"))
        single = asyncio.run(measure_referee(seconds, 1))
        many = asyncio.run(measure_referee(seconds, games_at_once))
        relay = asyncio.run(measure_relay(seconds))
        one = measure_scale_out(seconds, scale_games, 1) if scale_games else 0.0
        two = measure_scale_out(seconds, scale_games, 2) if scale_games else 0.0
        runs.append(RefereeRun(echo, single, many, relay, one, two))
        if progress is not None:
            progress(index, runs[-1])
    return RefereeFigures(tuple(runs), games_at_once)


def measure_scale_out(seconds: float, games: int, processes: int) -> float:
    """(e): decisions per second summed over ``processes`` referee processes run at once,
    each with its own two trivial bots and ``games // processes`` games in flight."""
    share = max(1, games // processes)
    workers = [_spawn("referee-worker", str(seconds), str(share)) for _ in range(processes)]
    total = 0.0
    for worker in workers:
        out, _ = worker.communicate(timeout=seconds + 120)
        if worker.returncode != 0:
            raise RuntimeError(f"a referee worker failed (exit code {worker.returncode})")
        total += float(out.decode().split()[-1])
    return total


def referee_cost_in_child(seconds: float, games_at_once: int) -> list[float]:
    """``measure_referee_cost`` in a child of ``bench referee --against`` (``trees.CHILD``):
    the tree on its path is the referee, and its bots (started with that path) are that
    tree's trivial bots, speaking that tree's protocol."""
    use_uvloop()
    return list(asyncio.run(measure_referee_cost(seconds, games_at_once)))


@dataclass(frozen=True)
class CostPair:
    """(b) or (c) of one run: this tree's and the other tree's decisions per second and
    decisions per CPU second of the referee process, measured one after the other."""

    mine: tuple[float, float]
    theirs: tuple[float, float]

    @property
    def rate_ratio(self) -> float:
        return self.mine[0] / self.theirs[0]

    @property
    def cpu_ratio(self) -> float:
        return self.mine[1] / self.theirs[1]


@dataclass(frozen=True)
class RefereeComparison:
    """``bench referee --against REV``: (a) and, for each tree, (b) and (c), run by run."""

    this: str
    other: str
    concurrent_games: int
    echo: tuple[float, ...]
    single: tuple[CostPair, ...]
    concurrent: tuple[CostPair, ...]
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]

    @staticmethod
    def ratio(pairs: tuple[CostPair, ...], part: int) -> float:
        """This tree's figure ``part`` (0: decisions/s, 1: decisions/CPU s) over the other's
        across the runs: the geometric mean of each run's ratio.  On a loaded machine the
        tree measured first in a run measured a few per cent slower (0.93-0.95 of the later
        ones, two children of one tree, load 11-25), and the runs go in both orders in turn
        (``runs_in_both_orders``), so such a factor cancels between a run and the next; the
        median of an odd count of runs kept it for the tree that went first once more.  What
        is left is the load's noise: about 12% on one run's decisions/CPU s at load 11-25."""
        return statistics.geometric_mean(p.mine[part] / p.theirs[part] for p in pairs)


def runs_in_both_orders(repeats: int) -> int:
    """The runs ``bench referee --against`` makes of ``repeats``: an even number, so that each
    tree is measured first in exactly half of them (``RefereeComparison.ratio``)."""
    return repeats + repeats % 2


def bench_referee_against(
    against: str,
    seconds: float = 5.0,
    games_at_once: int = 32,
    repeats: int = 5,
    progress: Callable[[int, float, CostPair, CostPair], None] | None = None,
) -> RefereeComparison:
    """(a) once a run, and (b) and (c) of this tree and of a worktree of commit ``against``,
    one child process per tree for the whole run, taking turns (each first in half the
    runs: ``repeats`` rounded up to even, ``runs_in_both_orders``) so a pair's two figures
    share the machine's load; raises ``trees.BenchError`` when the comparison cannot be
    made."""
    import tempfile

    from tacocat_arena.bench.trees import compared, in_turns

    load_before = os.getloadavg()
    echo: list[float] = []
    single: list[CostPair] = []
    concurrent: list[CostPair] = []
    with compared(against, __file__, "referee_cost_in_child") as (this, other, mine, theirs):
        for index in range(runs_in_both_orders(repeats)):
            with tempfile.TemporaryDirectory() as folder:
                echo.append(measure_echo(seconds, os.path.join(folder, "port")))
            for games, into in ((1, single), (games_at_once, concurrent)):
                rates = {
                    id(runner): runner.ask(seconds, games)
                    for runner in in_turns(index, mine, theirs)
                }
                into.append(CostPair(tuple(rates[id(mine)]), tuple(rates[id(theirs)])))
            if progress is not None:
                progress(index, echo[-1], single[-1], concurrent[-1])
    return RefereeComparison(
        this,
        other,
        games_at_once,
        tuple(echo),
        tuple(single),
        tuple(concurrent),
        load_before,
        os.getloadavg(),
    )


def use_uvloop() -> bool:
    """Run the referee's event loop on uvloop where it is installed (TACOCAT_UVLOOP=0 turns
    it off); True when it is in use."""
    if os.environ.get("TACOCAT_UVLOOP", "1") == "0":
        return False
    try:
        import uvloop  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return False
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    return True


def main(argv: list[str]) -> None:
    """Worker roles (see the module docstring)."""
    role, *args = argv
    if role == "referee-worker":
        use_uvloop()
        print(asyncio.run(measure_referee(float(args[0]), int(args[1]))))
        return
    if role == "echo-server":
        asyncio.run(_echo_server(args[0]))
    elif role == "echo-client":
        asyncio.run(_echo_client(int(args[0]), float(args[1])))
    elif role == "trivial-bot":
        asyncio.run(_trivial_bot(args[0], args[1], args[2]))
    else:
        raise SystemExit(f"unknown role {role!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
