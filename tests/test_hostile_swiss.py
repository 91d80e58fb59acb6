"""A hostile entrant against ``serve --event swiss``: a bot (a gRPC client written from
proto/tacocat/v1/arena.proto) that drops its stream at its first decision of every game and
connects again, in an odd field (a bye each round).  The event still plays every round to its
end, the crasher loses its matches, nobody gets two byes, the event page and ``verify``
agree, and no traceback reaches the arena's output."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import arena_support
import pytest
from arena_support import add_players, start_bots
from process_support import start_process

from tacocat_arena.cli.run import verify_any

pytestmark = pytest.mark.slow

CRASHER = """\
import sys, threading, time
import grpc
from tacocat.v1 import arena_pb2 as pb, arena_pb2_grpc
from tacocat_arena.protocol.wire import PROTOCOL_VERSION

address, name, token = sys.argv[1:4]
hello = pb.BotMessage(hello=pb.Hello(protocol_version=PROTOCOL_VERSION, bot_name=name,
                                     token=token, max_concurrent_games=4))
def messages(gone):
    yield hello
    gone.wait(120)  # a half-closed stream is a bot that left: keep it open until the crash

for attempt in range(300):  # bounded: the event is over well before
    gone = threading.Event()
    with grpc.insecure_channel(address) as channel:
        call = arena_pb2_grpc.ArenaStub(channel).Play(messages(gone), timeout=120)
        try:
            for message in call:
                if message.WhichOneof("message") == "decision_request":
                    print("crash in", message.decision_request.game_id, flush=True)
                    call.cancel()  # the stream dropped mid-game, as a crash drops it
                    gone.set()
                    break
                if message.WhichOneof("message") == "session_end":
                    sys.exit(0)
        except grpc.RpcError as error:
            print("ended:", error.code(), flush=True)
        gone.set()
    time.sleep(0.2)
"""


def test_a_swiss_survives_an_entrant_that_crashes_every_game_in_an_odd_field(
    tmp_path: Path, cleanup: list
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "ben", "cat")
    arena = arena_support.start_arena(
        folder, "--event", "swiss", "--rounds", "2", "--games", "2", "--event-name", "cup",
        "--start-after", "3", "--move-timeout", "5", "--wait", "5",
    )  # fmt: skip
    cleanup.append(arena)
    script = tmp_path / "crasher.py"
    script.write_text(CRASHER)
    crasher = start_process(
        [sys.executable, str(script), arena.address, "cat", tokens["cat"]],
        name="crasher",
        log_dir=tmp_path,
    )
    cleanup.extend(
        start_bots(tokens, arena.address, tmp_path, names=["ann", "ben"], reconnect=False)
    )
    out = arena.wait(300)
    assert arena.process.returncode == 0, out[-3000:]
    assert "Traceback" not in out, out[-3000:]
    assert "is over" in out, out[-3000:]
    assert "crash in" in crasher.output(), crasher.output()[-2000:]
    assert "round 2 paired" in out, out[-3000:]
    assert re.search(r"^\s*\d\. cat\s+0\.0 / 2", out, re.MULTILINE), out[-3000:]  # lost its match
    verified = verify_any(folder)
    assert verified.ok, verified.problems
    again = arena_support.start_arena(folder)
    cleanup.append(again)
    event = again.get("/event/cup").decode()
    assert 'id="event-over"' in event and 'id="swiss-table"' in event
    rows = {row["bot"]: row for row in again.json("/api/leaderboard")}
    assert set(rows) >= {"ann", "ben"}, rows
    again.stop()
