"""One bot's session: its outgoing messages and its open decision requests.

A session belongs to the referee; bots only reach it through the servicer, which hands each
incoming Action to ``deliver``.  Nothing a bot sends can raise here, and nothing it does can
make a game wait:

- ``post`` never blocks.  It serialises the message into the session's outbox and returns;
  the session's own writer task sends what waits, one write in flight at a time (gRPC's
  rule), as one ``RefereeMessage.batch`` when the bot accepts batches.  A game's clock can
  therefore start the moment its request is handed over, and no game ever waits on another
  session's write.
- The outbox is bounded (``SessionLimits``): a bot that does not take its messages within
  the write deadline, or lets too many pile up, is disconnected, so its games end as
  disconnects instead of hanging and holding their slots.
- Input that matches no open request costs tokens of a bucket; the Errors answering it are
  rate-limited and coalesced; a bot that keeps sending it is disconnected.  So a bot's
  flood grows neither the referee's memory nor its CPU beyond a per-session bound.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import enum
import itertools
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from tacocat.v1 import arena_pb2 as pb
from tacocat_arena.protocol.wire import ignored_error
from tacocat_arena.referee.settings import SessionLimits

#: How many answered or timed-out request ids a session remembers, to tell a stale or
#: duplicate reply from an unknown one.
_CLOSED_MEMORY = 4096
#: How many ended games it remembers for the same purpose: a reply comes late by seconds,
#: not by a thousand games, and a long-lived arena session must not fill 4,096 slots of
#: ~150 bytes for each of its bots (``bench soak --arena``).
_ENDED_GAMES_MEMORY = 1024
_session_ids = itertools.count(1)
#: This process's part of every session id: a restarted arena's ``s1`` must not be the
#: ``s1`` a user quoted from before the restart (issue 37; docs/sdk.md asks users to quote
#: them).  32 random bits: two runs share it once in four billion.
_PROCESS_TAG = secrets.token_hex(4)


def next_session_id() -> str:
    """The next session id of this process (``s1-3f9a0c2e``, ``s2-3f9a0c2e``...: a count and
    the process's tag): every session's, and the arena's gate's, whose check must look like
    a session of the arena's own."""
    return f"s{next(_session_ids)}-{_PROCESS_TAG}"


class EndReason(enum.Enum):
    """Why the referee ends a session (the protocol's ``SessionEndReason``)."""

    TOURNAMENT_OVER = pb.SESSION_END_REASON_TOURNAMENT_OVER
    SERVER_SHUTDOWN = pb.SESSION_END_REASON_SERVER_SHUTDOWN
    REMOVED = pb.SESSION_END_REASON_REMOVED


_K = TypeVar("_K")
_V = TypeVar("_V")
#: Protobuf keys of RefereeMessage.batch (field 7) and RefereeBatch.messages (field 1), both
#: length-delimited: a batch is built from already serialised messages without re-encoding.
_BATCH_KEY = bytes([7 << 3 | 2])
_MESSAGES_KEY = bytes([1 << 3 | 2])

#: Writes one serialised RefereeMessage to the bot's stream (the servicer's ``context.write``).
Writer = Callable[[bytes], Awaitable[None]]


class SessionClosed(Exception):
    """The bot's stream ended while a request was open; the message says why."""


class _Bucket:
    """A token bucket: ``capacity`` tokens, refilled at ``rate`` per second."""

    __slots__ = ("capacity", "rate", "tokens", "stamp")

    def __init__(self, capacity: float, rate: float) -> None:
        self.capacity = capacity
        self.rate = rate
        self.tokens = capacity
        self.stamp = time.monotonic()

    def take(self) -> bool:
        """Spend one token if there is one."""
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


@dataclass
class _OpenRequest:
    game_id: str
    #: Resolved with the Action and the time (``time.monotonic``) it was read.
    future: asyncio.Future[tuple[pb.Action, float]]


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_batch(messages: list[bytes]) -> bytes:
    """The serialised ``RefereeMessage(batch=RefereeBatch(messages=...))`` of serialised
    messages (exactly what protobuf would write)."""
    inner = b"".join(_MESSAGES_KEY + _varint(len(m)) + m for m in messages)
    return _BATCH_KEY + _varint(len(inner)) + inner


@dataclass(eq=False)  # identity semantics: a session is a live connection, not a value
class BotSession:
    """The live connection of one bot identity."""

    name: str
    max_concurrent_games: int
    limits: SessionLimits = field(default_factory=SessionLimits)
    session_id: str = field(default_factory=next_session_id)
    #: Whether the bot accepts ``RefereeMessage.batch`` (Hello.accept_batches).
    batches: bool = False
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    #: Why the referee ended the session for the bot's conduct (None: the bot left, or the
    #: referee closed it normally).  The servicer ends such a stream with RESOURCE_EXHAUSTED.
    misconduct: str | None = None
    #: Whether a write was still in flight when the session ended (the bot stopped reading):
    #: gRPC cannot end such a stream from this side, see ``ArenaServicer.Play``.
    stalled: bool = False
    #: Set while nothing waits in the outbox and no write is in flight.
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    game_slots: asyncio.Semaphore = field(init=False)
    _why_closed: str = ""
    _next_request: int = 1
    _open: dict[int, _OpenRequest] = field(default_factory=dict)
    _finished: collections.OrderedDict[int, str] = field(default_factory=collections.OrderedDict)
    _ended_games: collections.OrderedDict[str, None] = field(
        default_factory=collections.OrderedDict
    )
    _outbox: collections.deque[bytes] = field(default_factory=collections.deque)
    _outbox_bytes: int = 0
    _wake: asyncio.Event = field(default_factory=asyncio.Event)
    _writer_task: asyncio.Task[None] | None = None
    _watchdog: asyncio.TimerHandle | None = None
    #: When the write in flight began (``time.monotonic``), None when no write is in flight.
    _write_started: float | None = None
    _ignored: _Bucket = field(init=False)
    _errors: _Bucket = field(init=False)
    _unanswered: int = 0

    def __post_init__(self) -> None:
        self.game_slots = asyncio.Semaphore(max(1, self.max_concurrent_games))
        self.idle.set()
        self._ignored = _Bucket(self.limits.ignored_burst, self.limits.ignored_per_s)
        self._errors = _Bucket(self.limits.error_burst, self.limits.errors_per_s)

    @property
    def is_open(self) -> bool:
        """False once the bot's stream has ended."""
        return not self.closed.is_set()

    @property
    def write_started(self) -> float | None:
        """When the write in flight began (``time.monotonic``; None: none is): the write
        deadline's measure.  Two readings that agree are one and the same write, so a test
        can tell that something happened within one write to a bot that does not read."""
        return self._write_started

    @property
    def outbox_size(self) -> tuple[int, int]:
        """Messages and bytes waiting to be written."""
        return len(self._outbox), self._outbox_bytes

    # -- outgoing ----------------------------------------------------------------------------
    def start_writing(self, writer: Writer) -> None:
        """Start the task that writes the outbox to the bot's stream with ``writer``."""
        self._writer_task = asyncio.get_running_loop().create_task(
            self._write_loop(writer), name=f"writer-{self.name}"
        )
        self._arm_watchdog()

    def post(self, message: pb.RefereeMessage) -> None:
        """Hand a message to the session for writing; never blocks (dropped once closed).

        The message is serialised now, so the caller may change it afterwards (a seat's
        DecisionRequest is one message updated in place).  A bot whose outbox passes its
        limits is disconnected.
        """
        if not self.is_open:
            return
        data = message.SerializeToString()
        self._outbox.append(data)
        self._outbox_bytes += len(data)
        limits = self.limits
        if (
            len(self._outbox) > limits.max_outbox_messages
            or self._outbox_bytes > limits.max_outbox_bytes
        ):
            count, size = self.outbox_size
            self.close(
                f"it let {count} messages ({size} bytes) pile up unread, past the limit of "
                f"{limits.max_outbox_messages} messages or {limits.max_outbox_bytes} bytes",
                misconduct=True,
            )
            return
        if self.idle.is_set():
            self.idle.clear()
            self._wake.set()

    async def _write_loop(self, writer: Writer) -> None:
        """Write what waits, one write at a time; everything waiting leaves together."""
        outbox = self._outbox
        max_batch = self.limits.max_batch_bytes
        try:
            while self.is_open:
                if not outbox:
                    self.idle.set()
                    self._wake.clear()
                    await self._wake.wait()
                    continue
                if self.batches and len(outbox) > 1:
                    taken = [outbox.popleft()]
                    size = len(taken[0])
                    while outbox and size + len(outbox[0]) <= max_batch:
                        size += len(outbox[0])
                        taken.append(outbox.popleft())
                    data = encode_batch(taken) if len(taken) > 1 else taken[0]
                else:
                    data = outbox.popleft()
                    size = len(data)
                self._write_started = time.monotonic()
                await writer(data)
                self._write_started = None
                if self.is_open:
                    self._outbox_bytes -= size
        except asyncio.CancelledError:
            raise
        except Exception:  # the stream is broken or finished: the bot is gone
            self.close("its stream broke")

    def _arm_watchdog(self) -> None:
        period = max(0.01, self.limits.write_deadline_s / 4)
        self._watchdog = asyncio.get_running_loop().call_later(period, self._check_writes)

    def _check_writes(self) -> None:
        """Disconnect a bot that has not taken a message within the write deadline."""
        if not self.is_open:
            return
        started = self._write_started
        deadline = self.limits.write_deadline_s
        if started is not None and time.monotonic() - started > deadline:
            count, size = self.outbox_size
            self.close(
                f"it took no message for {deadline:g} s (write deadline; {count} messages, "
                f"{size} bytes waiting): it stopped reading its stream",
                misconduct=True,
            )
            return
        self._arm_watchdog()

    # -- requests ----------------------------------------------------------------------------
    def open_request(self, game_id: str) -> tuple[int, asyncio.Future[tuple[pb.Action, float]]]:
        """Allocate a request id for ``game_id`` and the future its Action will resolve."""
        if not self.is_open:
            raise SessionClosed(self._closed_text())
        request_id = self._next_request
        self._next_request += 1
        future: asyncio.Future[tuple[pb.Action, float]] = asyncio.get_running_loop().create_future()
        self._open[request_id] = _OpenRequest(game_id, future)
        return request_id, future

    def close_request(self, request_id: int, why: str) -> None:
        """Forget an open request (answered, or timed out: ``why`` says which)."""
        if self._open.pop(request_id, None) is not None:
            _remember(self._finished, request_id, why)

    def end_game(self, game_id: str) -> None:
        """Mark ``game_id`` as over: later replies about it are stale."""
        _remember(self._ended_games, game_id, None, _ENDED_GAMES_MEMORY)

    # -- incoming ----------------------------------------------------------------------------
    def deliver(self, action: pb.Action) -> None:
        """Route a bot's Action to its open request (stamped with the time it was read), or
        refuse it (see ``refuse``)."""
        request = self._open.get(action.request_id)
        if request is not None and request.game_id == action.game_id:
            self.close_request(action.request_id, "answered")
            if not request.future.done():
                request.future.set_result((action, time.monotonic()))
            return
        why = self._finished.get(action.request_id)
        if why == "answered":
            code, text = pb.ERROR_CODE_DUPLICATE_REPLY, "this request was already answered"
        elif why is not None or action.game_id in self._ended_games:
            code, text = pb.ERROR_CODE_STALE_REPLY, f"this request is closed ({why or 'game over'})"
        elif request is not None:
            code = pb.ERROR_CODE_UNKNOWN_REQUEST
            text = f"request {action.request_id} belongs to another game"
        else:
            code, text = pb.ERROR_CODE_UNKNOWN_REQUEST, "no such request was sent to this session"
        self.refuse(code, f"{text}; reply ignored", action.game_id, action.request_id)

    def refuse(self, code: pb.ErrorCode, text: str, game_id: str = "", request_id: int = 0) -> None:
        """Ignore a message of the bot and tell it so, within the session's budgets.

        Each ignored message spends a token of the ignored-message bucket; an empty bucket
        ends the session.  The Error that answers it spends a token of the Error bucket;
        without one it is only counted, and the count goes into the next Error sent.
        """
        if not self.is_open:
            return
        limits = self.limits
        if not self._ignored.take():
            self.close(
                f"it sent more than {limits.ignored_burst} messages that the referee had to "
                f"ignore (at most {limits.ignored_per_s:g}/s are allowed after that)",
                misconduct=True,
            )
            return
        if not self._errors.take():
            self._unanswered += 1
            return
        if self._unanswered:
            text += f" ({self._unanswered} more ignored messages were not answered one by one)"
            self._unanswered = 0
        self.post(ignored_error(game_id, request_id, code, text))

    # -- the end -------------------------------------------------------------------------------
    def _closed_text(self) -> str:
        return f"bot {self.name!r} disconnected" + (
            f": {self._why_closed}" if self._why_closed else ""
        )

    async def end(self, reason: EndReason, message: str, wait_s: float) -> None:
        """Say SessionEnd, give the bot up to ``wait_s`` (at most 2 s) to take it, close."""
        end = pb.SessionEnd(reason=reason.value, message=message)
        self.post(pb.RefereeMessage(session_end=end))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.idle.wait(), min(2.0, wait_s))
        self.close(message)

    def close(self, why: str = "", *, misconduct: bool = False) -> None:
        """End the session: every open request fails with SessionClosed saying ``why``."""
        if self.closed.is_set():
            return
        self._why_closed = why
        self.stalled = self._write_started is not None
        if misconduct:
            self.misconduct = why
        self.closed.set()
        self._outbox.clear()
        self._outbox_bytes = 0
        self.idle.set()
        self._wake.set()
        if self._watchdog is not None:
            self._watchdog.cancel()
        task = self._writer_task
        if task is not None and task is not _current_task():
            task.cancel()
        error_text = self._closed_text()
        for request in self._open.values():
            if not request.future.done():
                request.future.set_exception(SessionClosed(error_text))
        self._open.clear()


def _current_task() -> asyncio.Task[object] | None:
    with contextlib.suppress(RuntimeError):
        return asyncio.current_task()
    return None


def _remember(
    memory: collections.OrderedDict[_K, _V], key: _K, value: _V, limit: int = _CLOSED_MEMORY
) -> None:
    memory[key] = value
    if len(memory) > limit:
        memory.popitem(last=False)
