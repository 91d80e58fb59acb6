"""A bot that falls behind its clock catches up: one slow move costs its own timeouts, not a
run of them.

When a decision takes longer than its time, the referee times it out, plays a default move
(failure policy ``default_action``) and sends the bot its next request while it still thinks.
The SDK skips the requests that no answer can count for any more (the referee timed them
out, a newer one of the game came, the game ended, their time ran out) instead of computing
them in arrival order, each late answer making the next one later.  A real ``tacocat-arena
run`` (loopback gRPC) and a real bot process: the SDK's (tests/bots/slow_start_bot.py) and
the Node example's, which does the same; the unit tests below feed ``Inbox`` the messages
a referee would send.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from check_support import REPO_ROOT  # tests/ (pytest pythonpath)
from node_support import node_dependencies  # tests/ (pytest pythonpath)

from tacocat.v1 import arena_pb2 as pb
from tacocat_bot.inbox import Inbox

SLOW_BOT = REPO_ROOT / "tests" / "bots" / "slow_start_bot.py"
NODE_BOT = REPO_ROOT / "example_bots" / "node" / "bot.js"
NODE = shutil.which("node")
#: The referee's clock: 400 ms a decision, plus its 100 ms grace before a timeout.
MOVE_TIMEOUT_S = 0.4
TIMEOUT_AFTER_S = MOVE_TIMEOUT_S + 0.1
#: The bot's first decision sleeps SLOW_S; every later one thinks THINK_S, well in time but
#: long enough that computing the requests already timed out would make the next ones late.
SLOW_S = 4.0
THINK_S = 0.25


def _slow_bot(language: str) -> str:
    """The command of the slow-start bot: the SDK's (tests/bots/slow_start_bot.py) or the
    Node example's, made slow by its TACOCAT_BOT_SLOW."""
    if language == "python":
        return f"python {SLOW_BOT}"  # the runner's own interpreter, as for every bot
    node_dependencies()  # npm ci under its lock, or a skip with the reason
    if NODE is None:
        pytest.skip("node is not on PATH")
    return f"{NODE} {NODE_BOT}"


def _run_tournament(tmp_path: Path, bot: str) -> tuple[list[dict[str, object]], str]:
    """Two games, one at a time, of the slow-start ``bot`` against random: the games'
    records and the slow bot's log."""
    config = tmp_path / "t.toml"
    config.write_text(
        f"games = 2\nconcurrency = 1\nmove_timeout = {MOVE_TIMEOUT_S}\ngrace_ms = 100\n"
        'failure_policy = "default_action"\nsandbox = "none"\ntwins = false\n'
    )
    out = tmp_path / "out"
    env = dict(
        os.environ,
        TACOCAT_TEST_SLOW_CALLS="1",
        TACOCAT_TEST_SLOW_S=str(SLOW_S),
        TACOCAT_TEST_THINK_S=str(THINK_S),
        TACOCAT_BOT_SLOW=f"1:{SLOW_S * 1000:.0f}:{THINK_S * 1000:.0f}",  # the Node bot's
    )
    command = [sys.executable, "-m", "tacocat_arena.cli", "run", str(config), "--quiet"]
    command += ["--bot", f"slow={bot}", "--bot", "random=builtin:random"]
    done = subprocess.run(
        [*command, "--out", str(out)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    return games, (out / "logs" / "slow.log").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("language", ["python", "node"])
def test_one_slow_move_costs_its_own_timeouts_not_a_run_of_them(
    tmp_path: Path, language: str
) -> None:
    games, log = _run_tournament(tmp_path, _slow_bot(language))
    timeouts = own = 0
    for game in games:
        seats: list[str] = game["seats"]  # type: ignore[assignment]
        for entry in game["record"]["actions"]:  # type: ignore[index]
            if seats[entry["seat"]] != "slow":
                continue
            if entry.get("substituted") == "timeout":
                timeouts += 1
            elif "substituted" not in entry:
                own += 1
    decided = log.count("decided ")
    # While the slow move sleeps, each request of its game times out in turn, one at least
    # TIMEOUT_AFTER_S after the one before: those are the slow move's own timeouts.  The one
    # pending when it wakes may still be lost, and (a think being half the clock) the one
    # after it; nothing after that.  Without the skipping: 14 timeouts, 14 wasted decisions.
    figures = f"{timeouts} timeouts, {decided} decisions computed, {own} counted; log: {log}"
    assert 1 < timeouts <= SLOW_S // TIMEOUT_AFTER_S + 3, figures
    # Every decision the bot computed counted, except the slow one (and perhaps the one or
    # two pending when it woke, as above): no time went into answers the referee would ignore.
    assert decided - own <= 3, figures
    assert log.count("skipped request ") == 1, figures  # told once...
    assert "requests that could no longer count" in log, figures  # ... and counted at the end


# -- the inbox, unit by unit --------------------------------------------------------------


def _request(game_id: str, request_id: int, time_left_ms: int = 1000) -> pb.RefereeMessage:
    return pb.RefereeMessage(
        decision_request=pb.DecisionRequest(
            game_id=game_id, request_id=request_id, time_left_ms=time_left_ms
        )
    )


def _timeout(game_id: str, request_id: int) -> pb.RefereeMessage:
    return pb.RefereeMessage(
        error=pb.Error(game_id=game_id, request_id=request_id, code=pb.ERROR_CODE_TIMEOUT)
    )


def _inbox(*messages: pb.RefereeMessage) -> Inbox:
    """An inbox that has read every message (the reader thread is given time to)."""
    inbox = Inbox(iter(messages))
    inbox.close()
    return inbox


def _lapsed(inbox: Inbox) -> list[tuple[int, str]]:
    """Hand every message over; for each request, why it lapsed ("" if it had not)."""
    found = []
    while (arrival := inbox.next()) is not None:
        if arrival.message.HasField("decision_request"):
            request = arrival.message.decision_request
            found.append((request.request_id, inbox.lapsed(request, arrival.read_at)))
    return found


def test_a_request_the_referee_timed_out_has_lapsed() -> None:
    inbox = _inbox(_request("g", 1), _timeout("g", 1))
    assert _lapsed(inbox) == [(1, "the referee had timed it out")]


def test_a_request_with_a_newer_one_of_its_game_has_lapsed_but_not_one_of_another_game() -> None:
    inbox = _inbox(_request("g", 1), _request("h", 2), _request("g", 3))
    assert _lapsed(inbox) == [(1, "a newer request of its game had come"), (2, ""), (3, "")]


def test_a_request_whose_game_ended_has_lapsed() -> None:
    end = pb.RefereeMessage(game_end=pb.GameEnd(game_id="g"))
    assert _lapsed(_inbox(_request("g", 1), end)) == [(1, "its game was over")]


def test_a_request_whose_time_ran_out_has_lapsed_unless_it_has_no_limit() -> None:
    inbox = _inbox(_request("g", 1, time_left_ms=1000), _request("h", 2, time_left_ms=0))
    first = inbox.next()
    assert first is not None
    request = first.message.decision_request
    assert inbox.lapsed(request, first.read_at) == ""
    assert inbox.lapsed(request, time.monotonic() - 1.5) == "its 1000 ms had run out"
    second = inbox.next()
    assert second is not None  # time_left_ms 0: no limit
    assert inbox.lapsed(second.message.decision_request, time.monotonic() - 3600) == ""


def test_a_batch_is_handed_over_element_by_element_and_its_end_is_marked() -> None:
    batch = pb.RefereeMessage(batch=pb.RefereeBatch(messages=[_request("g", 1), _request("h", 2)]))
    inbox = _inbox(batch, _request("k", 3))
    marks = []
    while (arrival := inbox.next()) is not None:
        marks.append((arrival.message.decision_request.request_id, arrival.closes_batch))
    assert marks == [(1, False), (2, True), (3, True)]


def test_what_broke_the_stream_is_raised_after_the_messages_before_it() -> None:
    class Broken(grpc.RpcError):
        pass

    def stream() -> Iterator[pb.RefereeMessage]:
        yield _request("g", 1)
        raise Broken()

    inbox = Inbox(stream())
    inbox.close()
    first = inbox.next()
    assert first is not None and first.message.decision_request.request_id == 1
    with pytest.raises(Broken):
        inbox.next()
