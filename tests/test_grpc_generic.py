"""A generic gRPC client (grpcurl-style, no generated code) can find and use the referee.

The referee is started in process on a free loopback port. The client side only uses what
any language's tooling has: server reflection (to list services and fetch the schema), the
standard health service, and a Play call built from the reflected schema alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from tacocat_arena.referee import Referee, RefereeSettings, start_server, stop_server

ARENA = "tacocat.v1.Arena"
HEALTH = "grpc.health.v1.Health"


def _with_referee(
    body: Callable[[grpc.aio.Channel], Awaitable[Any]], tokens: dict[str, str] | None = None
) -> Any:
    """Run ``body(channel)`` against a fresh in-process referee on 127.0.0.1:0."""

    async def main() -> Any:
        referee = Referee(tokens if tokens is not None else {}, RefereeSettings())
        server, port = await start_server(referee, "127.0.0.1", 0)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                return await asyncio.wait_for(body(channel), 20)
        finally:
            await stop_server(server, None)

    return asyncio.run(main())


async def _reflect(
    channel: grpc.aio.Channel, *requests: reflection_pb2.ServerReflectionRequest
) -> list[reflection_pb2.ServerReflectionResponse]:
    """Send reflection requests on one stream; return the answers in order."""
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    call = stub.ServerReflectionInfo()
    answers = []
    for request in requests:
        await call.write(request)
        answers.append(await call.read())
    await call.done_writing()
    return answers


async def _arena_file_descriptors(
    channel: grpc.aio.Channel,
) -> list[descriptor_pb2.FileDescriptorProto]:
    (answer,) = await _reflect(
        channel, reflection_pb2.ServerReflectionRequest(file_containing_symbol=ARENA)
    )
    assert answer.WhichOneof("message_response") == "file_descriptor_response", answer
    files = []
    for raw in answer.file_descriptor_response.file_descriptor_proto:
        proto = descriptor_pb2.FileDescriptorProto()
        proto.ParseFromString(raw)
        files.append(proto)
    return files


def test_reflection_lists_arena_and_health() -> None:
    async def body(channel: grpc.aio.Channel) -> list[str]:
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        (answer,) = await _reflect(channel, request)
        return [service.name for service in answer.list_services_response.service]

    services = _with_referee(body)
    assert ARENA in services
    assert HEALTH in services


def test_reflection_describes_the_play_method() -> None:
    files = _with_referee(_arena_file_descriptors)
    arena_file = next(f for f in files if f.package == "tacocat.v1")
    (service,) = [s for s in arena_file.service if s.name == "Arena"]
    (play,) = [m for m in service.method if m.name == "Play"]
    assert play.client_streaming and play.server_streaming
    assert play.input_type == ".tacocat.v1.BotMessage"
    assert play.output_type == ".tacocat.v1.RefereeMessage"
    messages = {m.name for m in arena_file.message_type}
    assert {"Hello", "Welcome", "DecisionRequest", "Action", "GameEnd", "SessionEnd"} <= messages


def test_health_serving_for_server_and_arena() -> None:
    async def body(channel: grpc.aio.Channel) -> dict[str, int]:
        stub = health_pb2_grpc.HealthStub(channel)
        statuses = {}
        for service in ("", ARENA):
            reply = await stub.Check(health_pb2.HealthCheckRequest(service=service))
            statuses[service] = reply.status
        return statuses

    statuses = _with_referee(body)
    assert statuses == {
        "": health_pb2.HealthCheckResponse.SERVING,
        ARENA: health_pb2.HealthCheckResponse.SERVING,
    }


def test_health_unknown_service_is_not_found() -> None:
    async def body(channel: grpc.aio.Channel) -> grpc.StatusCode:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            await stub.Check(health_pb2.HealthCheckRequest(service="no.such.Service"))
        except grpc.aio.AioRpcError as error:
            return error.code()
        return grpc.StatusCode.OK

    assert _with_referee(body) == grpc.StatusCode.NOT_FOUND


def _dynamic_play(token_metadata: str) -> Callable[[grpc.aio.Channel], Awaitable[Any]]:
    """A Play call built only from the reflected schema (a fresh descriptor pool, so nothing
    of the generated code is used): Hello without a token, the token as Bearer metadata."""

    async def body(channel: grpc.aio.Channel) -> Any:
        pool = descriptor_pool.DescriptorPool()
        for proto in await _arena_file_descriptors(channel):
            pool.Add(proto)
        bot_message = message_factory.GetMessageClass(
            pool.FindMessageTypeByName("tacocat.v1.BotMessage")
        )
        referee_message = message_factory.GetMessageClass(
            pool.FindMessageTypeByName("tacocat.v1.RefereeMessage")
        )
        play = channel.stream_stream(
            f"/{ARENA}/Play",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=referee_message.FromString,
        )
        call = play(metadata=(("authorization", f"Bearer {token_metadata}"),))
        hello = bot_message()
        hello.hello.protocol_version = 1
        hello.hello.bot_name = "generic"
        await call.write(hello)
        try:
            first = await call.read()
        except grpc.aio.AioRpcError as error:
            return error.code(), error.details()
        call.cancel()
        return first.WhichOneof("message"), first.welcome.bot_name

    return body


def test_dynamic_client_authenticates_with_bearer_metadata() -> None:
    case, bot_name = _with_referee(_dynamic_play("s3cret"), tokens={"generic": "s3cret"})
    assert (case, bot_name) == ("welcome", "generic")


def test_dynamic_client_with_wrong_bearer_token_is_unauthenticated() -> None:
    code, details = _with_referee(_dynamic_play("wrong"), tokens={"generic": "s3cret"})
    assert code == grpc.StatusCode.UNAUTHENTICATED
    assert "token" in details
