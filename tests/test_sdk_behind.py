"""A bot that falls behind its clock catches up: one slow move costs its own timeouts, not a
run of them.

When a decision takes longer than its time, the referee times it out, plays a default move
(failure policy ``default_action``) and sends the bot its next request while it still thinks.
The SDK skips the requests that no answer can count for any more (the referee timed them
out, a newer one of the game came, the game ended, their time ran out) instead of computing
them in arrival order, each late answer making the next one later.  A real ``tacocat-arena
run`` (loopback gRPC) and a real bot process: the SDK's (tests/bots/slow_start_bot.py) and
the Node example's, which does the same; the unit tests below feed ``Inbox`` the messages
a referee would send.  The test checks the events, not counts a loaded machine moves: each
bot's log says every message as it reads it and the request each decision answers, so the
test sees whether a decision began on a request the bot had already read was closed (the
cascade) or on an open one that came out late (load).
"""

from __future__ import annotations

import json
import os
import re
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
#: The bot's first decision sleeps SLOW_S; the next THINK_CALLS each think THINK_S, well in
#: time but long enough that computing the requests already timed out would make the next
#: ones late; the rest (a game and more, ~30 decisions) answer at once.  The cascade, if any,
#: is in the decisions right after the slow one (the first would answer request 2, timed out
#: while the slow one slept), long caught up (or not) after eight.
SLOW_S = 4.0
THINK_S = 0.25
THINK_CALLS = 8


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
        TACOCAT_TEST_THINK_CALLS=str(THINK_CALLS),
        TACOCAT_BOT_SLOW=f"1:{SLOW_S * 1000:.0f}:{THINK_S * 1000:.0f}:{THINK_CALLS}",  # Node's
        TACOCAT_ARENA_TRACE="1",  # the Node bot says each message it reads (_told)
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


#: A decision the bot made: its number (1 is the slow one) and the request it answered.
_DECIDED = re.compile(r"decided (\d+): request (\d+) of game (\S+)")
#: Where the SDK looked at a request before deciding it (the Node bot, single-threaded,
#: reads nothing while it decides: its ``decided`` line is where it began).
_CHECKING = re.compile(r"checking request (\d+) of game (\S+)")
_TIMED_OUT = re.compile(r"no answer to request (\d+) ")


def _told(line: str) -> list[dict[str, dict[str, object]]]:
    """The referee messages a log line says the bot had read (``<- {json}``: the test bot's
    and the Node bot's TACOCAT_ARENA_TRACE), a batch's one by one."""
    at = line.find("<- {")
    if at < 0:
        return []
    message = json.loads(line[at + 3 :])
    if "batch" in message:
        return list(message["batch"].get("messages", []))
    return [message]


def _closed_when_begun(log: str) -> dict[int, str]:
    """Each decision the bot computed, by request id: why no answer could count any more
    by what the bot had read when it began on it ("" if it still could)."""
    timed_out: set[int] = set()
    newest: dict[str, int] = {}
    ended: set[str] = set()
    verdicts: dict[int, str] = {}
    computed: dict[int, str] = {}

    def verdict(request_id: int, game_id: str) -> str:
        if request_id in timed_out:
            return "the bot had read its TIMEOUT"
        if game_id in ended:
            return "the bot had read its game's end"
        if newest.get(game_id, 0) > request_id:
            return f"the bot had read request {newest[game_id]} of its game"
        return ""

    for line in log.splitlines():
        for message in _told(line):
            if "decision_request" in message:
                request = message["decision_request"]
                game_id, request_id = str(request["game_id"]), int(str(request["request_id"]))
                newest[game_id] = max(newest.get(game_id, 0), request_id)
            elif "error" in message and message["error"].get("code") == "ERROR_CODE_TIMEOUT":
                timed_out.add(int(str(message["error"].get("request_id", 0))))
            elif "game_end" in message:
                ended.add(str(message["game_end"]["game_id"]))
        if line.find("<- {") >= 0:
            continue
        if checking := _CHECKING.search(line):
            request_id = int(checking[1])
            verdicts.setdefault(request_id, verdict(request_id, checking[2]))
        elif decided := _DECIDED.search(line):
            request_id = int(decided[2])
            computed[request_id] = verdicts.get(request_id, verdict(request_id, decided[3]))
    return computed


@pytest.mark.slow
@pytest.mark.parametrize("language", ["python", "node"])
def test_one_slow_move_costs_its_own_timeouts_not_a_run_of_them(
    tmp_path: Path, language: str
) -> None:
    games, log = _run_tournament(tmp_path, _slow_bot(language))
    timed_out: set[int] = set()  # the slow bot's requests the referee timed out
    for game in games:
        seats: list[str] = game["seats"]  # type: ignore[assignment]
        for entry in game["record"]["actions"]:  # type: ignore[index]
            if seats[entry["seat"]] == "slow" and entry.get("substituted") == "timeout":
                match = _TIMED_OUT.match(entry["reason"])
                assert match, entry
                timed_out.add(int(match[1]))
    computed = _closed_when_begun(log)
    slow = [int(found[2]) for found in _DECIDED.finditer(log) if found[1] == "1"]
    readable = "\n".join(line for line in log.splitlines() if "<- {" not in line)
    figures = (
        f"requests timed out {sorted(timed_out)}; decisions computed for {sorted(computed)}; "
        f"log without the messages read:\n{readable}"
    )
    assert len(slow) == 1, figures
    # The slow move's own timeouts: its request and those that came while it slept, one run
    # of the session's requests (ids count up per session), after which an answer counted.
    # How long the run is and what a loaded machine adds later (a 250 ms think that took
    # over 500 ms: a late answer, open when begun) are load's, not asserted.
    run = 0
    while slow[0] + run in timed_out:
        run += 1
    assert run > 1, figures
    assert slow[0] + run in computed, figures  # caught up
    # The cascade: computing, one after another, answers to requests the bot had already
    # read were closed (timed out, superseded, their game over).  Without the skipping, each
    # request that timed out during the slow move is computed in turn (14 of them).
    wasted = {request: why for request, why in computed.items() if why}
    assert not wasted, f"computed although closed when begun: {wasted}; {figures}"
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
