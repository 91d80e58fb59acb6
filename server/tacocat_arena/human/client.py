"""The person's seat as a client of the referee: one gRPC stream, as a bot's.

It connects to the referee over loopback with its own name and token (the referee cannot
tell it from a bot: same Hello, same admission, same clock), hands each DecisionRequest to the
``Relay`` as the engine's view of that seat (``wire.view_from_pb``) and sends each answer
the relay accepted.  It reads nothing the referee does not send this seat, so the page can
show nothing more.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import grpc

from tacocat.v1 import arena_pb2 as pb
from tacocat.v1 import arena_pb2_grpc
from tacocat_arena.engine import DecisionKind, Ruleset
from tacocat_arena.human.relay import Relay, SeatResult, round_json
from tacocat_arena.protocol.wire import (
    KIND_FROM_PB,
    PROTOCOL_VERSION,
    TERMINATION_FROM_PB,
    action_to_pb,
    covered_from_pb,
    event_from_pb,
    round_result_from_pb,
    ruleset_from_pb,
    view_from_pb,
)

_RESULTS = {
    pb.GAME_RESULT_WIN: SeatResult.WIN,
    pb.GAME_RESULT_LOSS: SeatResult.LOSS,
    pb.GAME_RESULT_DRAW: SeatResult.DRAW,
    pb.GAME_RESULT_NO_CONTEST: SeatResult.NO_CONTEST,
}


async def play_seat(address: str, name: str, token: str, relay: Relay) -> None:
    """Hold the seat for one referee session: connect, play whatever games it is given,
    return at SessionEnd (or when the stream ends)."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = arena_pb2_grpc.ArenaStub(channel)
        outbox: asyncio.Queue[pb.BotMessage | None] = asyncio.Queue()
        outbox.put_nowait(
            pb.BotMessage(
                hello=pb.Hello(
                    protocol_version=PROTOCOL_VERSION,
                    bot_name=name,
                    token=token,
                    client_info="tacocat-arena human seat (a person in a browser)",
                    max_concurrent_games=1,
                )
            )
        )

        async def messages() -> AsyncIterator[pb.BotMessage]:
            while (message := await outbox.get()) is not None:
                yield message

        async def forward_answers() -> None:
            while True:
                game_id, request_id, action = await relay.answers.get()
                outbox.put_nowait(pb.BotMessage(action=action_to_pb(game_id, request_id, action)))

        call = stub.Play(messages())
        sender = asyncio.create_task(forward_answers())
        seat = _SeatReader(relay)
        try:
            async for message in call:
                if not seat.handle(message):
                    break
        except grpc.aio.AioRpcError as error:
            relay.notice = f"the referee ended the session: {error.details()}"
        finally:
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sender
            outbox.put_nowait(None)
            call.cancel()


class _SeatReader:
    """The referee's messages, one at a time, into the relay."""

    def __init__(self, relay: Relay) -> None:
        self.relay = relay
        self.rulesets: dict[str, Ruleset] = {}

    def handle(self, message: pb.RefereeMessage) -> bool:
        """Handle one message; False at SessionEnd."""
        case = message.WhichOneof("message")
        if case == "batch":  # never asked for (Hello.accept_batches is false), read anyway
            return all(self.handle(each) for each in message.batch.messages)
        if case == "game_start":
            start = message.game_start
            self.rulesets[start.game_id] = ruleset_from_pb(start.ruleset)
            self.relay.on_game_start(start.game_id, start.seat, start.decision_timeout_ms)
        elif case == "decision_request":
            self._request(message.decision_request)
        elif case == "error":
            error = message.error
            self.relay.on_error(error.game_id, error.request_id, error.message)
        elif case == "game_end":
            self._game_end(message.game_end)
        elif case == "session_end":
            return False
        return True

    def _request(self, request: pb.DecisionRequest) -> None:
        ruleset = self.rulesets.get(request.game_id)
        kind = KIND_FROM_PB.get(request.kind)
        if ruleset is None or kind is None:
            return  # not a request of a game this seat was told of: nothing to show
        max_replace = request.legal.replace.max_discard if kind is DecisionKind.REPLACE else 0
        view = view_from_pb(request.view, ruleset, kind, max_replace)
        self.relay.on_request(
            request.game_id,
            request.request_id,
            view,
            request.time_left_ms,
            request.time_bank_left_ms,
        )

    def _game_end(self, end: pb.GameEnd) -> None:
        ruleset = self.rulesets.pop(end.game_id, None)
        termination = TERMINATION_FROM_PB.get(end.reason)
        result: dict[str, Any] = {
            "game_id": end.game_id,
            "result": _RESULTS.get(end.result, SeatResult.NO_CONTEST).value,
            "winner": end.winner_seat if end.HasField("winner_seat") else None,
            "seat": end.seat,
            "reason": None if termination is None else termination.value,
            "detail": end.detail,
            "rounds": end.rounds,
        }
        view = dict(self.relay.view or {})
        if ruleset is not None:
            rounds = [round_result_from_pb(r) for r in end.past_rounds]
            round_number = end.rounds
            view.update(
                kind=None,
                tacocat=end.board.tacocat,
                covered=list(covered_from_pb(end.board)),
                events=[
                    dict(event)
                    for event in (
                        event_from_pb(e, round_number, end.seat) for e in end.last_round_events
                    )
                    if event is not None
                ],
                past_rounds=[round_json(r) for r in rounds],
            )
        self.relay.on_game_end(result, view or None)
