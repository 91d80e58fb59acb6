"""A hostile bot in its own process, written from arena.proto alone (the generated messages,
no referee or SDK code), for tests/test_referee_backpressure.py.

  hostile_bot.py play ADDRESS NAME TOKEN RECORD [--misbehave KIND]
      Answers every request with its first legal option and appends every message it
      receives (base64 of the serialised RefereeMessage, one a line) to RECORD.  With
      --misbehave, at its first DUEL request it: sends a card it does not hold (illegal),
      sends an Action with no case set (malformed), stops answering (timeout), closes its
      stream and lives on (disconnect) or dies without a goodbye (crash).  With
      --leave-after N it closes its stream after N answers and exits (gone for good).
  hostile_bot.py never-read ADDRESS NAME TOKEN RECORD --games N
      Opens a session for N games at once with a tiny HTTP/2 flow-control window (the
      client's choice: 1 KiB lookahead, no BDP probing) and never reads a message.  At the
      end RECORD holds the stream's final status as JSON.
  hostile_bot.py junk ADDRESS NAME TOKEN RECORD --batches B --size K
      Sends B ActionBatches of K replies to requests that were never sent, reading what
      comes back; RECORD gets JSON: Errors and bytes received, and the final status.

Every mode stops by itself within --max-seconds (default 30).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import time

import grpc

from tacocat.v1 import arena_pb2 as pb
from tacocat.v1 import arena_pb2_grpc

TINY_WINDOW = [("grpc.http2.lookahead_bytes", 1024), ("grpc.http2.bdp_probe", 0)]


def first_legal(request: pb.DecisionRequest) -> pb.Action:
    """The first legal option of a request, as an Action."""
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


def hello(name: str, token: str, games: int = 0) -> pb.BotMessage:
    return pb.BotMessage(
        hello=pb.Hello(
            protocol_version=1,
            bot_name=name,
            token=token,
            client_info="hostile test bot",
            max_concurrent_games=games,
        )
    )


def status_of(error: grpc.aio.AioRpcError | None) -> dict[str, str]:
    if error is None:
        return {"code": "OK", "details": ""}
    return {"code": error.code().name, "details": error.details() or ""}


async def play(args: argparse.Namespace) -> None:
    async with grpc.aio.insecure_channel(args.address) as channel:
        call = arena_pb2_grpc.ArenaStub(channel).Play()
        await call.write(hello(args.name, args.token))
        misbehaved = False
        answered = 0
        with open(args.record, "a") as record:
            while True:
                envelope = await call.read()
                if envelope is grpc.aio.EOF:
                    return
                record.write(base64.b64encode(envelope.SerializeToString()).decode() + "\n")
                record.flush()
                case = envelope.WhichOneof("message")
                if case == "session_end":
                    return
                if case != "decision_request":
                    continue
                request = envelope.decision_request
                if args.misbehave and not misbehaved and request.kind == pb.DECISION_KIND_DUEL:
                    misbehaved = True
                    if args.misbehave == "illegal":
                        action = pb.Action(game_id=request.game_id, request_id=request.request_id)
                        action.duel.card = 99  # no such card in anyone's hand
                        await call.write(pb.BotMessage(action=action))
                    elif args.misbehave == "malformed":
                        bare = pb.Action(game_id=request.game_id, request_id=request.request_id)
                        await call.write(pb.BotMessage(action=bare))
                    elif args.misbehave == "disconnect":
                        call.cancel()
                        await asyncio.sleep(3)  # the process lives on: not a crash
                        return
                    elif args.misbehave == "crash":
                        os._exit(3)
                    continue  # "timeout": never answer this one
                await call.write(pb.BotMessage(action=first_legal(request)))
                answered += 1
                if answered == args.leave_after:
                    call.cancel()  # gone for good: the process exits
                    return


async def never_read(args: argparse.Namespace) -> None:
    async with grpc.aio.insecure_channel(args.address, options=TINY_WINDOW) as channel:
        call = arena_pb2_grpc.ArenaStub(channel).Play()
        await call.write(hello(args.name, args.token, args.games))
        # Never read: wait for the call to end (the referee ends it) without taking a message.
        deadline = time.monotonic() + args.max_seconds
        while not call.done() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        result = {"code": "RUNNING", "details": ""}
        if call.done():
            result = {"code": (await call.code()).name, "details": await call.details() or ""}
        with open(args.record, "w") as record:
            json.dump(result, record)


async def junk(args: argparse.Namespace) -> None:
    async with grpc.aio.insecure_channel(args.address) as channel:
        call = arena_pb2_grpc.ArenaStub(channel).Play()
        await call.write(hello(args.name, args.token))
        errors = 0
        received = 0
        status: grpc.aio.AioRpcError | None = None

        async def read() -> None:
            nonlocal errors, received, status
            try:
                while (message := await call.read()) is not grpc.aio.EOF:
                    received += message.ByteSize()
                    if message.WhichOneof("message") == "error":
                        errors += 1
            except grpc.aio.AioRpcError as error:
                status = error

        reader = asyncio.create_task(read())
        await asyncio.sleep(args.pause)  # let the test find the session first
        sent = 0
        try:
            for batch_index in range(args.batches):
                if reader.done():  # the referee ended the stream
                    break
                message = pb.BotMessage()
                for index in range(args.size):
                    message.actions.actions.add(
                        game_id="nope", request_id=10**9 + batch_index * args.size + index
                    )
                await call.write(message)
                sent += args.size
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
            pass  # the referee ended the stream
        await asyncio.wait_for(reader, args.max_seconds)
        with open(args.record, "w") as record:
            json.dump(
                {"sent": sent, "errors": errors, "bytes": received, **status_of(status)}, record
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["play", "never-read", "junk"])
    for name in ("address", "name", "token", "record"):
        parser.add_argument(name)
    parser.add_argument(
        "--misbehave", choices=["illegal", "malformed", "timeout", "disconnect", "crash"]
    )
    parser.add_argument("--leave-after", type=int, default=0, help="answers, then leave")
    parser.add_argument("--pause", type=float, default=1.0, help="junk: seconds before")
    parser.add_argument("--games", type=int, default=32)
    parser.add_argument("--batches", type=int, default=100)
    parser.add_argument("--size", type=int, default=5000)
    parser.add_argument("--max-seconds", type=float, default=30.0)
    args = parser.parse_args()
    run = {"play": play, "never-read": never_read, "junk": junk}[args.mode]
    asyncio.run(asyncio.wait_for(run(args), args.max_seconds + 5))


if __name__ == "__main__":
    main()
