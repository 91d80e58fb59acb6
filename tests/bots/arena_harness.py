"""Shared helpers of tests/test_referee*.py: a referee on loopback, SDK bot processes and a
raw-protocol client.  Loaded by path from the test modules (tests/ is not a package).

Everything here is real gRPC over 127.0.0.1 (port 0): nothing is mocked.  Every wait is
bounded; every process and channel is closed by the context managers below.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from process_support import RealProcess, start_process

from tacocat.v1 import arena_pb2 as pb
from tacocat_arena.engine import DecisionKind, Ruleset, Termination
from tacocat_arena.play.policies import RandomPolicy
from tacocat_arena.protocol.wire import (
    KIND_FROM_PB,
    PROTOCOL_VERSION,
    action_to_pb,
    ruleset_from_pb,
    view_from_pb,
)
from tacocat_arena.referee import Referee, RefereeSettings, start_server, stop_server

BOTS_DIR = Path(__file__).resolve().parent
SCRIPTED_BOT = BOTS_DIR / "scripted_bot.py"
TOKENS = {"a": "token-a", "b": "token-b"}
PLAY_METHOD = "/tacocat.v1.Arena/Play"


# -- referee --------------------------------------------------------------------------------------
@contextlib.asynccontextmanager
async def arena(
    settings: RefereeSettings,
    tokens: Mapping[str, str] | None = TOKENS,
    classify_disconnect: Callable[[str], Awaitable[Termination]] | None = None,
) -> AsyncIterator[tuple[Referee, int]]:
    """A referee serving on 127.0.0.1:<free port>; stopped (sessions ended) on exit."""
    referee = Referee(tokens, settings, classify_disconnect=classify_disconnect)
    server, port = await start_server(referee)
    try:
        yield referee, port
    finally:
        with contextlib.suppress(Exception):
            await referee.end_all_sessions("test over")
        await stop_server(server, 0.5)


def run_async(coro: Any, timeout: float) -> Any:
    """``asyncio.run`` with a hard per-test timeout."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


# -- bot processes ------------------------------------------------------------------------------
@dataclass
class BotProcess:
    """One SDK bot (tests/bots/scripted_bot.py) in its own process (started by
    tests/process_support.py; ``stderr`` is its output: what it does is in ``record``)."""

    name: str
    process: subprocess.Popen[bytes]
    record: Path
    stderr: Path

    def events(self) -> list[dict[str, Any]]:
        """The JSON lines the bot has written so far (see scripted_bot.py)."""
        if not self.record.exists():
            return []
        lines = self.record.read_text().splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def game_ends(self) -> dict[str, dict[str, Any]]:
        return {e["game_id"]: e for e in self.events() if e["event"] == "game_end"}

    def errors(self) -> list[str]:
        return [e["text"] for e in self.events() if e["event"] == "error"]

    def stderr_text(self) -> str:
        return self.stderr.read_text(errors="replace") if self.stderr.exists() else ""


class BotFarm:
    """Starts bot processes and kills whatever is still running on exit."""

    def __init__(self, tmp_path: Path, port: int) -> None:
        self.tmp_path = tmp_path
        self.port = port
        self.bots: list[BotProcess] = []
        self._real: list[RealProcess] = []

    def start(
        self, name: str, token: str | None = None, script: Path = SCRIPTED_BOT, **options: Any
    ) -> BotProcess:
        index = len(self.bots)
        record = self.tmp_path / f"bot{index}-{name}.jsonl"
        env = dict(
            os.environ,
            TACOCAT_ARENA_ADDRESS=f"127.0.0.1:{self.port}",
            TACOCAT_ARENA_TOKEN=TOKENS.get(name, "") if token is None else token,
            TACOCAT_ARENA_BOT=name,
            TACOCAT_TEST_RECORD=str(record),
        )
        for key, value in options.items():
            env[f"TACOCAT_TEST_{key.upper()}"] = str(value)
        real = start_process(
            [sys.executable, str(script)], name=f"bot{index}-{name}", log_dir=self.tmp_path, env=env
        )
        bot = BotProcess(name, real.popen, record, real.log)
        self.bots.append(bot)
        self._real.append(real)
        return bot

    def close(self) -> None:
        for real in self._real:
            real.kill()


@contextlib.contextmanager
def bot_farm(tmp_path: Path, port: int) -> Iterator[BotFarm]:
    farm = BotFarm(tmp_path, port)
    try:
        yield farm
    finally:
        farm.close()


async def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``predicate`` every 20 ms; AssertionError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.02)


async def wait_for_exit(process: subprocess.Popen[bytes], timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while (code := process.poll()) is None:
        if time.monotonic() > deadline:
            raise AssertionError(f"process {process.pid} still running after {timeout} s")
        await asyncio.sleep(0.05)
    return code


# -- raw protocol client --------------------------------------------------------------------------
class RawClient:
    """A bot speaking the protocol by hand on one stream, in the test's event loop.

    Every RefereeMessage is kept as received bytes (``raw``) and parsed (``envelopes``);
    ``log`` and ``recv`` see a batch's elements one by one (``batches`` counts batches).
    ``recv`` returns the next message, None once the stream has ended; ``status`` then holds
    the AioRpcError that ended it (None for status OK).
    """

    def __init__(self, port: int, metadata: tuple[tuple[str, str], ...] = ()) -> None:
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        play = self.channel.stream_stream(
            PLAY_METHOD,
            request_serializer=pb.BotMessage.SerializeToString,
            response_deserializer=lambda data: data,
        )
        self.call = play(metadata=metadata or None)
        self.raw: list[bytes] = []
        self.envelopes: list[pb.RefereeMessage] = []  # as received (batches not unpacked)
        self.batches = 0
        self.log: list[pb.RefereeMessage] = []
        self.status: grpc.aio.AioRpcError | None = None
        self.ended = asyncio.Event()
        self._inbox: asyncio.Queue[pb.RefereeMessage | None] = asyncio.Queue()
        self._reader = asyncio.create_task(self._read())
        self.rulesets: dict[str, Ruleset] = {}

    async def _read(self) -> None:
        try:
            while True:
                data = await self.call.read()
                if data is grpc.aio.EOF:
                    break
                envelope = pb.RefereeMessage.FromString(data)
                self.raw.append(data)
                self.envelopes.append(envelope)
                # A batch is unpacked: ``log`` and ``recv`` see its elements one by one.
                if envelope.HasField("batch"):
                    self.batches += 1
                    messages = list(envelope.batch.messages)
                else:
                    messages = [envelope]
                for message in messages:
                    self.log.append(message)
                    if message.WhichOneof("message") == "game_start":
                        start = message.game_start
                        self.rulesets[start.game_id] = ruleset_from_pb(start.ruleset)
                    await self._inbox.put(message)
        except grpc.aio.AioRpcError as error:
            self.status = error
        except asyncio.CancelledError:
            pass
        finally:
            self.ended.set()
            self._inbox.put_nowait(None)

    async def send(self, message: pb.BotMessage) -> None:
        await self.call.write(message)

    async def hello(
        self,
        name: str,
        token: str | None = None,
        *,
        version: int = PROTOCOL_VERSION,
        client_info: str = "raw test client",
        max_concurrent_games: int = 0,
        accept_batches: bool = False,
    ) -> None:
        await self.send(
            pb.BotMessage(
                hello=pb.Hello(
                    protocol_version=version,
                    bot_name=name,
                    token=TOKENS.get(name, "") if token is None else token,
                    client_info=client_info,
                    max_concurrent_games=max_concurrent_games,
                    accept_batches=accept_batches,
                )
            )
        )

    async def answer(self, action: pb.Action) -> None:
        await self.send(pb.BotMessage(action=action))

    async def recv(self, timeout: float = 5.0) -> pb.RefereeMessage | None:
        return await asyncio.wait_for(self._inbox.get(), timeout)

    async def recv_case(self, case: str, timeout: float = 5.0) -> pb.RefereeMessage:
        """The next message; it must be of envelope ``case``."""
        message = await self.recv(timeout)
        assert message is not None, f"stream ended ({self.status}) while waiting for {case}"
        assert message.WhichOneof("message") == case, f"expected {case}, got {message}"
        return message

    async def rejected(self, timeout: float = 5.0) -> grpc.aio.AioRpcError:
        """Wait for the stream to end with an error status (no Welcome) and return it."""
        await asyncio.wait_for(self.ended.wait(), timeout)
        assert not self.log, f"expected no message, got {self.log}"
        assert self.status is not None, "the stream ended with status OK"
        return self.status

    async def connect(self, name: str, token: str | None = None, **hello: Any) -> pb.Welcome:
        """Say Hello and return the Welcome."""
        await self.hello(name, token, **hello)
        return (await self.recv_case("welcome")).welcome

    def engine_view(self, request: pb.DecisionRequest) -> Any:
        """The request's view in engine form (as the SDK rebuilds it)."""
        max_replace = request.legal.replace.max_discard if request.legal.HasField("replace") else 0
        return view_from_pb(
            request.view, self.rulesets[request.game_id], KIND_FROM_PB[request.kind], max_replace
        )

    def random_action(self, request: pb.DecisionRequest, rng: random.Random) -> pb.Action:
        """A uniformly random legal answer to ``request``."""
        action = RandomPolicy(rng).act(self.engine_view(request))
        return action_to_pb(request.game_id, request.request_id, action)

    async def close(self) -> None:
        self.call.cancel()
        self._reader.cancel()
        with contextlib.suppress(BaseException):
            await self._reader
        await self.channel.close()


@contextlib.asynccontextmanager
async def raw_clients(port: int, count: int) -> AsyncIterator[list[RawClient]]:
    clients = [RawClient(port) for _ in range(count)]
    try:
        yield clients
    finally:
        for client in clients:
            await client.close()


#: What a raw player does with a request: return an Action to send, or None for a random one.
Hook = Callable[[pb.DecisionRequest], "pb.Action | None | Any"]


@dataclass
class PlayLog:
    """What a raw player saw: requests, errors and game ends, in order."""

    requests: list[pb.DecisionRequest] = field(default_factory=list)
    errors: list[pb.Error] = field(default_factory=list)
    ends: dict[str, pb.GameEnd] = field(default_factory=dict)
    starts: dict[str, pb.GameStart] = field(default_factory=dict)


async def play_raw(
    client: RawClient,
    *,
    games: int = 1,
    seed: int = 0,
    hook: Hook | None = None,
    max_messages: int = 20_000,
    timeout: float = 10.0,
) -> PlayLog:
    """Answer requests (randomly, or as ``hook`` says) until ``games`` GameEnds arrived.

    ``hook`` may also be a coroutine function; it may send messages itself and return
    ``False`` to send nothing.
    """
    rng = random.Random(seed)
    log = PlayLog()
    for _ in range(max_messages):
        if len(log.ends) >= games:
            return log
        message = await client.recv(timeout)
        assert message is not None, f"stream ended early: {client.status}"
        case = message.WhichOneof("message")
        if case == "game_start":
            log.starts[message.game_start.game_id] = message.game_start
        elif case == "game_end":
            log.ends[message.game_end.game_id] = message.game_end
        elif case == "error":
            log.errors.append(message.error)
        elif case == "decision_request":
            request = message.decision_request
            log.requests.append(request)
            action = None
            if hook is not None:
                action = hook(request)
                if asyncio.iscoroutine(action):
                    action = await action
            if action is False:
                continue
            if action is None:
                action = client.random_action(request, rng)
            await client.answer(action)
    raise AssertionError(f"no end after {max_messages} messages")


def kind_of(request: pb.DecisionRequest) -> DecisionKind:
    return KIND_FROM_PB[request.kind]
