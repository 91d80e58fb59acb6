"""One admitted connection: a reader task that routes Actions in, and how the session ends.

Plain functions over a ``read`` callable (the call's ``context.read`` in ``ArenaServicer.Play``,
a script in tests), so the session loop needs no stream to be exercised.  Reading is one task
per stream that hands every Action to ``BotSession.deliver``; games never wait on it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import grpc

from tacocat.v1 import arena_pb2 as pb
from tacocat_arena.referee.admission import Refusal
from tacocat_arena.referee.session import BotSession

if TYPE_CHECKING:
    from tacocat_arena.referee.server import Referee

log = logging.getLogger(__name__)

#: Reads the next BotMessage, or returns ``grpc.aio.EOF`` when the bot's side ends.
Read = Callable[[], Awaitable[Any]]


async def run_connection(referee: Referee, session: BotSession, read: Read) -> Refusal | None:
    """Serve a registered session until it closes; return the error status its end deserves
    (None for a normal end).  The session is unregistered before this returns."""
    name = session.name
    unreadable: list[str] = []  # set by read_actions when the bot sends bytes that do not parse
    reader = asyncio.create_task(read_actions(referee, session, read, unreadable))
    try:
        await session.closed.wait()  # the bot left, or the referee ended the session
        if session.stalled and session.misconduct is not None:
            await hold_stalled(referee, name)
        if unreadable:  # end with an error status, not OK: this was no normal end
            return Refusal(grpc.StatusCode.INVALID_ARGUMENT, unreadable[0])
        if session.misconduct is not None:  # it broke a limit (SessionLimits)
            return Refusal(
                grpc.StatusCode.RESOURCE_EXHAUSTED, f"session ended: {session.misconduct}"
            )
        return None
    finally:
        reader.cancel()
        await referee.unregister(session)
        log.info("bot %s disconnected (session %s)", name, session.session_id)


async def hold_stalled(referee: Referee, name: str) -> None:
    """Keep a stream whose bot stopped reading until the bot or its connection goes.

    Its games are already forfeited and its outbox freed.  A status cannot be sent: gRPC
    sends it behind the write in flight, which the bot does not read, and grpc.aio has
    no way to reset a stream from the server side.  gRPC cancels this coroutine when the
    bot's side ends.  Meanwhile the name may not connect again, so each bot holds at most
    one such stream (one message of at most ``max_batch_bytes`` in gRPC's buffers).
    """
    referee.stalled.add(name)
    try:
        await asyncio.get_running_loop().create_future()  # until cancelled by gRPC
    finally:
        referee.stalled.discard(name)


async def read_actions(
    referee: Referee, session: BotSession, read: Read, unreadable: list[str]
) -> None:
    """Hand every Action the bot sends to its session until the stream or session ends."""
    try:
        while (message := await read()) is not grpc.aio.EOF:
            case = message.WhichOneof("message")
            if case == "action":
                session.deliver(message.action)
            elif case == "actions":
                for action in message.actions.actions:
                    session.deliver(action)
                    if not session.is_open:  # a batch of junk ended the session
                        break
            else:
                code = pb.ERROR_CODE_UNEXPECTED_MESSAGE if case else pb.ERROR_CODE_MALFORMED
                session.refuse(code, f"expected an Action, got {case or 'an empty message'}")
            if not session.is_open:
                break
    except (grpc.aio.AioRpcError, grpc.aio.BaseError, asyncio.CancelledError):
        pass  # the stream ended: the bot's side, or the server stopped under the read
        # (grpc.aio then raises its own BaseError, "Server already stopped.")
    except Exception as error:  # a broken stream must never take the referee down
        log.exception("reading from bot %s failed", session.name)
        unreadable.append(f"cannot read the bot's stream: {type(error).__name__}: {error}")
    finally:
        await referee.unregister(session)
