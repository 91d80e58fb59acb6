"""The referee's messages as the bot gets to them: read off the stream as soon as they come,
handed over one at a time, and told apart from requests that can no longer count.

A decision can take longer than its clock (a slow move, a loaded machine).  The referee then
times the request out, plays a default move or forfeits the game (its failure policy), and
goes on: the next request of that game is sent while the bot is still thinking.  Answering
every request in arrival order would spend the bot's time on answers the referee ignores
(STALE_REPLY, each also spending the session's budget of ignored messages) and start every
later request late: one slow move would become a run of timeouts.  So a thread of its own
reads the stream as it comes, and before the bot starts on a request ``Inbox.lapsed`` looks
at what has arrived since: the referee's TIMEOUT for it, a newer request of its game or the
game's end mean no answer can count, and so does its time (``time_left_ms`` plus
``time_bank_left_ms``, counted from when it was read) having run out.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from tacocat.v1 import arena_pb2 as pb

#: What the reader thread hands over: a message and when it was read, an exception that
#: ended the stream, or None when the stream ended normally.
_Read = tuple[pb.RefereeMessage, float] | Exception | None


@dataclass(frozen=True)
class Arrival:
    """One referee message (a batch's elements arrive one by one) and when it was read."""

    message: pb.RefereeMessage
    #: ``time.monotonic()`` when the stream delivered it.
    read_at: float
    #: The last element of what the stream delivered as one message: the answers to that
    #: message's requests go back together once it is handled (arena.proto, "BATCHING").
    closes_batch: bool


class Inbox:
    """The messages of one stream, in order, with what is known of the requests' fate.

    The reader thread only moves messages to a queue; everything else, the bot's code
    included, runs on the thread that calls ``next``, one message at a time.
    """

    def __init__(self, stream: Iterator[pb.RefereeMessage]) -> None:
        self._read: queue.SimpleQueue[_Read] = queue.SimpleQueue()
        self._waiting: deque[Arrival] = deque()
        self._ended_with: Exception | None = None
        self._over = False
        #: What has arrived, handled or not: the newest request of each game, the requests
        #: the referee timed out, the games that ended.  Each entry is dropped when the
        #: message that made it is handed over, after every message before it.
        self._newest: dict[str, int] = {}
        self._timed_out: set[int] = set()
        self._ended: set[str] = set()
        self._reader = threading.Thread(
            target=self._read_stream, args=(stream,), name="tacocat_bot-reader", daemon=True
        )
        self._reader.start()

    def _read_stream(self, stream: Iterator[pb.RefereeMessage]) -> None:
        try:
            for message in stream:
                self._read.put((message, time.monotonic()))
        except Exception as error:  # handed to the reading thread, which raises it in turn
            self._read.put(error)
            return
        self._read.put(None)

    def next(self) -> Arrival | None:
        """The next message, waiting for one if need be; None once the stream has ended.
        The exception that broke the stream (e.g. a ``grpc.RpcError``) is raised here, after
        every message that came before it."""
        while not self._waiting:
            if self._ended_with is not None:
                raise self._ended_with
            if self._over:
                return None
            self._take(self._read.get())
        arrival = self._waiting.popleft()
        self._forget(arrival.message)
        return arrival

    def lapsed(self, request: pb.DecisionRequest, read_at: float) -> str:
        """Why no answer to ``request`` (read at ``read_at``) can count any more, in a few
        words; "" while it still can.  Looks at every message read so far."""
        self._take_ready()
        if request.request_id in self._timed_out:
            return "the referee had timed it out"
        if request.game_id in self._ended:
            return "its game was over"
        if self._newest.get(request.game_id, 0) > request.request_id:
            return "a newer request of its game had come"
        allowed_ms = request.time_left_ms + request.time_bank_left_ms
        if request.time_left_ms and (time.monotonic() - read_at) * 1000 > allowed_ms:
            return f"its {allowed_ms} ms had run out"
        return ""

    def close(self, timeout_s: float = 1.0) -> None:
        """Wait a little for the reader thread to end (the channel's closing ends it)."""
        self._reader.join(timeout_s)

    def _take_ready(self) -> None:
        """Take in what the reader has read so far, without waiting."""
        while not self._read.empty():
            self._take(self._read.get_nowait())

    def _take(self, read: _Read) -> None:
        if read is None:
            self._over = True
            return
        if isinstance(read, Exception):
            self._ended_with = read
            return
        message, read_at = read
        batch = message.batch.messages if message.HasField("batch") else (message,)
        last = len(batch) - 1
        for index, item in enumerate(batch):
            self._learn(item)
            self._waiting.append(Arrival(item, read_at, index == last))

    def _learn(self, message: pb.RefereeMessage) -> None:
        case = message.WhichOneof("message")
        if case == "decision_request":
            request = message.decision_request
            newest = self._newest.get(request.game_id, 0)
            self._newest[request.game_id] = max(newest, request.request_id)
        elif case == "error" and message.error.code == pb.ERROR_CODE_TIMEOUT:
            self._timed_out.add(message.error.request_id)
        elif case == "game_end":
            self._ended.add(message.game_end.game_id)

    def _forget(self, message: pb.RefereeMessage) -> None:
        """Drop what ``message`` taught, now that it is handed over: every request it could
        concern came before it, and game ids and request ids are never reused."""
        case = message.WhichOneof("message")
        if case == "error" and message.error.code == pb.ERROR_CODE_TIMEOUT:
            self._timed_out.discard(message.error.request_id)
        elif case == "game_end":
            game_id = message.game_end.game_id
            self._ended.discard(game_id)
            self._newest.pop(game_id, None)
