"""One bot's session: its outgoing messages and its open decision requests.

A session belongs to the referee; bots only reach it through the servicer, which hands each
incoming Action to ``deliver``.  Nothing a bot sends can raise here: a reply that matches no
open request is answered with an Error message and otherwise ignored.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from tacocat.v1 import arena_pb2 as pb

#: How many answered or timed-out request ids a session remembers, to tell a stale or
#: duplicate reply from an unknown one.
_CLOSED_MEMORY = 4096
_session_ids = itertools.count(1)


class SessionClosed(Exception):
    """The bot's stream ended while a request was open."""


@dataclass
class _OpenRequest:
    game_id: str
    future: asyncio.Future[pb.Action]


@dataclass(eq=False)  # identity semantics: a session is a live connection, not a value
class BotSession:
    """The live connection of one bot identity."""

    name: str
    max_concurrent_games: int
    session_id: str = field(default_factory=lambda: f"s{next(_session_ids)}")
    #: Writes one message to the bot's stream (the servicer binds ``context.write``).
    writer: Callable[[pb.RefereeMessage], Awaitable[None]] | None = None
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    _next_request: int = 1
    _open: dict[int, _OpenRequest] = field(default_factory=dict)
    _finished: collections.OrderedDict[int, str] = field(default_factory=collections.OrderedDict)
    _ended_games: set[str] = field(default_factory=set)
    #: Whether the bot accepts ``RefereeMessage.batch`` (Hello.accept_batches).
    batches: bool = False
    game_slots: asyncio.Semaphore = field(init=False)
    #: Set while no write is in flight on the stream (``send``).
    idle: asyncio.Event = field(init=False)
    _outbox: pb.RefereeMessage = field(init=False)

    def __post_init__(self) -> None:
        self.game_slots = asyncio.Semaphore(max(1, self.max_concurrent_games))
        self.idle = asyncio.Event()
        self.idle.set()
        self._outbox = pb.RefereeMessage()

    @property
    def is_open(self) -> bool:
        """False once the bot's stream has ended."""
        return not self.closed.is_set()

    async def send(self, message: pb.RefereeMessage) -> None:
        """Write a message to the bot's stream (dropped if the session is closed).

        gRPC allows one write in flight per stream.  The first sender finds the stream idle
        and writes at once, from its own task: no queue and no hand-over on the common path.
        A sender that finds a write in flight leaves a snapshot of its message in the outbox
        and returns; the writing task sends everything waiting when its write completes, as
        one ``RefereeMessage.batch`` when the bot accepts batches.  So batches form only
        under load and never delay a message.  A failed write means the bot is gone, and
        closes the session.
        """
        if not self.is_open or self.writer is None:
            return
        if not self.idle.is_set():
            self._outbox.batch.messages.add().CopyFrom(message)
            return
        self.idle.clear()
        try:
            await self._write(message)
            while self._outbox.batch.messages:
                waiting, self._outbox = self._outbox, pb.RefereeMessage()
                if self.batches and len(waiting.batch.messages) > 1:
                    await self._write(waiting)
                else:
                    for queued in waiting.batch.messages:
                        await self._write(queued)
        finally:
            self.idle.set()

    async def _write(self, message: pb.RefereeMessage) -> None:
        assert self.writer is not None
        try:
            await self.writer(message)
        except Exception:  # the stream is broken or finished: the bot is gone
            self._outbox = pb.RefereeMessage()
            self.close()

    def open_request(self, game_id: str) -> tuple[int, asyncio.Future[pb.Action]]:
        """Allocate a request id for ``game_id`` and the future its Action will resolve."""
        if not self.is_open:
            raise SessionClosed(f"bot {self.name!r} is not connected")
        request_id = self._next_request
        self._next_request += 1
        future: asyncio.Future[pb.Action] = asyncio.get_running_loop().create_future()
        self._open[request_id] = _OpenRequest(game_id, future)
        return request_id, future

    def close_request(self, request_id: int, why: str) -> None:
        """Forget an open request (answered, or timed out: ``why`` says which)."""
        if self._open.pop(request_id, None) is not None:
            self._finished[request_id] = why
            if len(self._finished) > _CLOSED_MEMORY:
                self._finished.popitem(last=False)

    def end_game(self, game_id: str) -> None:
        """Mark ``game_id`` as over: later replies about it are stale."""
        self._ended_games.add(game_id)

    async def deliver(self, action: pb.Action) -> None:
        """Route a bot's Action to its open request, or answer it with an Error."""
        request = self._open.get(action.request_id)
        if request is not None and request.game_id == action.game_id:
            self.close_request(action.request_id, "answered")
            if not request.future.done():
                request.future.set_result(action)
            return
        why = self._finished.get(action.request_id)
        if why == "answered":
            code, text = pb.ERROR_CODE_DUPLICATE_REPLY, "this request was already answered"
        elif why is not None or action.game_id in self._ended_games:
            code, text = pb.ERROR_CODE_STALE_REPLY, f"this request is closed ({why or 'game over'})"
        elif request is not None:
            code = pb.ERROR_CODE_UNKNOWN_REQUEST
            text = f"request {action.request_id} belongs to game {request.game_id!r}"
        else:
            code, text = pb.ERROR_CODE_UNKNOWN_REQUEST, "no such request was sent to this session"
        await self.send(
            pb.RefereeMessage(
                error=pb.Error(
                    game_id=action.game_id,
                    request_id=action.request_id,
                    code=code,
                    message=f"{text}; reply ignored",
                    outcome=pb.ERROR_OUTCOME_IGNORED,
                )
            )
        )

    def close(self) -> None:
        """End the session: every open request fails with SessionClosed."""
        if self.closed.is_set():
            return
        self.closed.set()
        for request in self._open.values():
            if not request.future.done():
                request.future.set_exception(SessionClosed(f"bot {self.name!r} disconnected"))
        self._open.clear()
