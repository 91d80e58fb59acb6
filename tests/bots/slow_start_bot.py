"""An SDK bot that is slow on its first decisions and quick after: run as its own process.

Its first SLOW_CALLS decisions (TACOCAT_TEST_SLOW_CALLS) each sleep SLOW_S seconds
(TACOCAT_TEST_SLOW_S), far past the referee's clock; the next THINK_CALLS
(TACOCAT_TEST_THINK_CALLS; unset: all the later ones) each think THINK_S (TACOCAT_TEST_THINK_S,
well within it), the rest none; each plays the first legal option.  Its stderr says
what the bot was told and when, so a test can tell the work the SDK skipped: each message
once the SDK has read it (``<- {json}``, as the Node example's TACOCAT_ARENA_TRACE), each
request when the SDK looks at it to decide whether an answer can still count (``checking
request R of game G``), and each decision it made (``decided N: request R of game G``).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Iterator

from google.protobuf import json_format

import tacocat_bot.client
from tacocat.v1 import arena_pb2 as pb
from tacocat_arena.engine import Action, SeatView
from tacocat_arena.protocol.wire import default_action
from tacocat_bot import Bot, run
from tacocat_bot.inbox import Inbox

#: Lines come from two threads (the inbox's reader and the bot's); each is one write.
_SAYING = threading.Lock()
#: The request the SDK looked at last: the one ``act`` answers.
_checked: list[pb.DecisionRequest] = []


def _say(text: str) -> None:
    with _SAYING:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def _told(stream: Iterator[pb.RefereeMessage]) -> Iterator[pb.RefereeMessage]:
    """The stream, each message said once the inbox has it (it asks for the next one only
    after queueing this one): a message said before a ``checking`` line was known then."""
    for message in stream:
        yield message
        said = json_format.MessageToDict(message, preserving_proto_field_name=True)
        _say(f"<- {json.dumps(said)}")


class _TellingInbox(Inbox):
    def __init__(self, stream: Iterator[pb.RefereeMessage]) -> None:
        super().__init__(_told(stream))

    def lapsed(self, request: pb.DecisionRequest, read_at: float) -> str:
        _say(f"checking request {request.request_id} of game {request.game_id}")
        _checked[:] = [request]
        return super().lapsed(request, read_at)


class SlowStartBot(Bot):
    name = "slowstart"

    def __init__(
        self, slow_calls: int, slow_s: float, think_s: float, think_calls: int | None = None
    ) -> None:
        self.slow_calls = slow_calls
        self.slow_s = slow_s
        self.think_s = think_s
        self.think_calls = think_calls
        self.calls = 0

    def act(self, view: SeatView) -> Action:
        self.calls += 1
        if self.calls <= self.slow_calls:
            time.sleep(self.slow_s)
        elif self.think_calls is None or self.calls <= self.slow_calls + self.think_calls:
            time.sleep(self.think_s)
        request = _checked[0]
        _say(f"decided {self.calls}: request {request.request_id} of game {request.game_id}")
        return default_action(view)


if __name__ == "__main__":
    tacocat_bot.client.Inbox = _TellingInbox  # type: ignore[misc]  # what run() reads with
    run(
        SlowStartBot(
            int(os.environ.get("TACOCAT_TEST_SLOW_CALLS", "1")),
            float(os.environ.get("TACOCAT_TEST_SLOW_S", "2")),
            float(os.environ.get("TACOCAT_TEST_THINK_S", "0")),
            int(os.environ["TACOCAT_TEST_THINK_CALLS"])
            if "TACOCAT_TEST_THINK_CALLS" in os.environ
            else None,
        )
    )
