"""The referee's front door: authentication, the handshake, hostile bytes and sizes.

Real loopback gRPC, raw-protocol clients (tests/bots/arena_harness.py).  After every refused
stream the referee must still serve: each test ends by playing with a legitimate session.
"""

from __future__ import annotations

import asyncio
from typing import Any

import arena_harness as h  # tests/bots (pytest pythonpath)
import grpc
import pytest

from tacocat.v1 import arena_pb2 as pb
from tacocat_arena.engine import DEFAULT_RULESET, Termination
from tacocat_arena.referee import ClockSettings, RefereeSettings

SETTINGS = RefereeSettings(clock=ClockSettings(decision_ms=5000), handshake_timeout_s=0.5)
FINISHED = (Termination.GOAL, Termination.ROUND_CAP)


async def _refused(port: int, hello: pb.BotMessage | None, **kwargs: Any) -> grpc.aio.AioRpcError:
    """Open a stream, send ``hello`` (nothing if None) and return the error that ends it."""
    client = h.RawClient(port, **kwargs)
    try:
        if hello is not None:
            await client.send(hello)
        return await client.rejected()
    finally:
        await client.close()


def _hello(
    name: str = "a", token: str | None = None, version: int = 1, **extra: Any
) -> pb.BotMessage:
    token = h.TOKENS.get(name, "") if token is None else token
    return pb.BotMessage(
        hello=pb.Hello(protocol_version=version, bot_name=name, token=token, **extra)
    )


async def _play_one_game(referee: Any, port: int, game_id: str) -> Any:
    """A normal game between fresh sessions of a and b: the referee still serves."""
    async with h.raw_clients(port, 2) as clients:
        for client, name in zip(clients, "ab", strict=True):
            await client.connect(name)
        game = asyncio.create_task(
            referee.play(game_id, ("a", "b"), seed=1, ruleset=DEFAULT_RULESET)
        )
        await asyncio.gather(*(h.play_raw(c, seed=i) for i, c in enumerate(clients)))
        report = await game
        assert report.outcome.termination in FINISHED
        return report


# ---------------------------------------------------------------------------------------------
# 5. Authentication and the handshake
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("hello", "metadata"),
    [
        pytest.param(_hello("a", token="wrong"), (), id="wrong-token"),
        pytest.param(_hello("a", token=""), (), id="missing-token"),
        pytest.param(_hello("zed", token="token-a"), (), id="unknown-bot"),
        pytest.param(_hello("a", token="token-b"), (), id="another-bots-token"),
        pytest.param(_hello("a", token="token-a "), (), id="token-with-suffix"),
        pytest.param(
            _hello("a", token=""), (("authorization", "Bearer wrong"),), id="wrong-bearer"
        ),
        pytest.param(_hello("a", token=""), (("authorization", "token-a"),), id="not-bearer"),
        pytest.param(
            _hello("a", token="wrong"),
            (("authorization", "Bearer token-a"),),
            id="hello-token-wins-over-metadata",
        ),
    ],
)
def test_bad_credentials_are_unauthenticated(
    hello: pb.BotMessage, metadata: tuple[tuple[str, str], ...]
) -> None:
    async def scenario() -> None:
        async with h.arena(SETTINGS) as (referee, port):
            error = await _refused(port, hello, metadata=metadata)
            assert error.code() == grpc.StatusCode.UNAUTHENTICATED, error
            assert error.details()
            assert referee.sessions == {}
            await _play_one_game(referee, port, "after")

    h.run_async(scenario(), 20)


def test_bearer_metadata_authenticates_when_hello_has_no_token() -> None:
    async def scenario() -> None:
        async with h.arena(SETTINGS) as (referee, port):
            client = h.RawClient(port, metadata=(("authorization", "Bearer token-a"),))
            try:
                welcome = await client.connect("a", token="")
                assert welcome.bot_name == "a"
                assert referee.live_session("a") is not None
            finally:
                await client.close()

    h.run_async(scenario(), 20)


def test_wrong_token_never_takes_another_bots_seat() -> None:
    async def scenario() -> None:
        async with h.arena(SETTINGS) as (referee, port), h.raw_clients(port, 2) as clients:
            real_a, real_b = clients
            welcome = await real_a.connect("a")
            await real_b.connect("b")
            session = referee.live_session("a")
            assert session is not None and session.session_id == welcome.session_id
            for impostor in (
                _hello("a", token="wrong"),
                _hello("a", token="token-b"),
                _hello("a", token=""),
                _hello(" a ", token="wrong"),
            ):
                error = await _refused(port, impostor)
                assert error.code() == grpc.StatusCode.UNAUTHENTICATED
            # Even with the right token a second session cannot replace the live one.
            error = await _refused(port, _hello("a"))
            assert error.code() == grpc.StatusCode.ALREADY_EXISTS
            assert referee.live_session("a") is session

            # The real bot still plays its games, and nothing went to the impostors.
            game = asyncio.create_task(
                referee.play("real", ("a", "b"), seed=2, ruleset=DEFAULT_RULESET)
            )
            logs = await asyncio.gather(*(h.play_raw(c, seed=i) for i, c in enumerate(clients)))
            report = await game
            assert report.outcome.termination in FINISHED
            assert report.seats == ("a", "b")
            assert logs[0].starts["real"].seat == 0 and logs[0].requests
            assert sum(report.decisions) == len(logs[0].requests) + len(logs[1].requests)

    h.run_async(scenario(), 20)


@pytest.mark.parametrize("version", [0, 2, 1000])
def test_unsupported_protocol_version_is_failed_precondition(version: int) -> None:
    async def scenario() -> None:
        async with h.arena(SETTINGS) as (referee, port):
            error = await _refused(port, _hello("a", version=version))
            assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert "1" in error.details()  # names the version the referee speaks
            assert referee.sessions == {}
            await _play_one_game(referee, port, "after")

    h.run_async(scenario(), 20)


@pytest.mark.parametrize(
    "first",
    [
        pytest.param(pb.BotMessage(action=pb.Action(game_id="g", request_id=1)), id="action"),
        pytest.param(pb.BotMessage(), id="empty-envelope"),
        pytest.param(_hello("", token="token-a"), id="empty-name"),
        pytest.param(_hello("a\x07b", token="token-a"), id="unprintable-name"),
        pytest.param(_hello("x" * 65, token="token-a"), id="long-name"),
    ],
)
def test_first_message_must_be_a_valid_hello(first: pb.BotMessage) -> None:
    async def scenario() -> None:
        async with h.arena(SETTINGS) as (referee, port):
            error = await _refused(port, first)
            assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error
            assert referee.sessions == {}
            await _play_one_game(referee, port, "after")

    h.run_async(scenario(), 20)


def test_silent_client_gets_deadline_exceeded() -> None:
    async def scenario() -> None:
        async with h.arena(SETTINGS) as (referee, port):
            error = await _refused(port, None)  # opens the stream, never says Hello
            assert error.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            await _play_one_game(referee, port, "after")

    h.run_async(scenario(), 20)


# ---------------------------------------------------------------------------------------------
# 9. Oversized messages and garbage bytes
# ---------------------------------------------------------------------------------------------
def test_oversized_hello_is_resource_exhausted_and_server_stays_up() -> None:
    async def scenario() -> None:
        async with h.arena(SETTINGS) as (referee, port):
            assert SETTINGS.max_message_bytes < 200_000
            error = await _refused(port, _hello("a", client_info="x" * 200_000))
            assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert referee.sessions == {}
            await _play_one_game(referee, port, "after")

    h.run_async(scenario(), 20)


def test_oversized_action_mid_session_ends_only_that_session() -> None:
    async def scenario() -> None:
        async with h.arena(SETTINGS) as (referee, port):
            client = h.RawClient(port)
            try:
                await client.connect("a")
                await client.answer(pb.Action(game_id="g" * 200_000, request_id=1))
                await asyncio.wait_for(client.ended.wait(), 5)
                assert client.status is not None
                assert client.status.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                await h.wait_until(lambda: referee.live_session("a") is None, 5, "unregister")
            finally:
                await client.close()
            await _play_one_game(referee, port, "after")

    h.run_async(scenario(), 20)


@pytest.mark.parametrize("after_hello", [False, True], ids=["first-message", "after-hello"])
def test_garbage_bytes_get_an_error_status_and_server_stays_up(after_hello: bool) -> None:
    async def scenario() -> None:
        async with h.arena(SETTINGS) as (referee, port):
            channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
            try:
                play = channel.stream_stream(
                    h.PLAY_METHOD,
                    request_serializer=lambda data: data,
                    response_deserializer=pb.RefereeMessage.FromString,
                )
                call = play()
                if after_hello:
                    await call.write(_hello("a").SerializeToString())
                    first = await asyncio.wait_for(call.read(), 5)
                    assert first.WhichOneof("message") == "welcome"
                await call.write(b"\xff\xff\xff")
                with pytest.raises(grpc.aio.AioRpcError) as raised:
                    for _ in range(10):
                        message = await asyncio.wait_for(call.read(), 5)
                        assert message is not grpc.aio.EOF, "stream ended with status OK"
                # Not OK (which would read as a normal end), and not UNKNOWN: a clear refusal.
                assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT, raised.value
                await h.wait_until(lambda: referee.live_session("a") is None, 5, "unregister")
            finally:
                await channel.close()
            await _play_one_game(referee, port, "after")

    h.run_async(scenario(), 20)


def test_many_bad_streams_at_once_do_not_disturb_a_game() -> None:
    async def scenario() -> None:
        async with h.arena(SETTINGS) as (referee, port):
            bad = [
                _hello("a", token="wrong"),
                _hello("a", version=7),
                pb.BotMessage(),
                _hello("a", client_info="y" * 100_000),
                _hello("nobody", token="x"),
            ] * 4
            results = await asyncio.gather(
                _play_one_game(referee, port, "busy"), *(_refused(port, m) for m in bad)
            )
            codes = {error.code() for error in results[1:]}
            assert grpc.StatusCode.OK not in codes
            assert codes <= {
                grpc.StatusCode.UNAUTHENTICATED,
                grpc.StatusCode.FAILED_PRECONDITION,
                grpc.StatusCode.INVALID_ARGUMENT,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
            }

    h.run_async(scenario(), 30)
