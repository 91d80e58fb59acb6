"""A hostile browser, page or local process against ``tacocat-arena play human``'s page.

Each test runs ``play human builtin:random`` as a real process and speaks raw HTTP to its
page on 127.0.0.1 (http.client: every header, the Host too, is the attacker's choice).  The
product rule: bad input gets a clear error (4xx, never a 500), affects no one else (the
person's open request stays open, the game goes on), and a page on another origin (a DNS
rebinding, or any site POSTing to 127.0.0.1) cannot answer for the person.
"""

from __future__ import annotations

import http.client
import json
import re
import signal
import socket
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from human_support import first_legal_answer
from process_support import descendants, python_command, start_process, state_of

pytestmark = pytest.mark.slow


def _start(
    tmp_path: Path, human_s: float = 60.0, hangup: str = "default"
) -> tuple[Any, str, int, str]:
    """``play human`` against builtin:random; the process, host, port and key path.  Started
    as a terminal starts it, SIGHUP at its default (``hangup="ignore"``: as ``nohup`` does),
    whatever this test's own is: a suite started under ``nohup`` ignores SIGHUP, and a child
    inherits that (three loaded suite runs of session 9 failed the SIGHUP case so)."""
    cli = start_process(
        ["env", f"--{hangup}-signal=HUP", *python_command(
            "-m", "tacocat_arena.cli", "play", "human", "builtin:random", "--no-browser",
            "--human-move-timeout", f"{human_s:g}", "--out", str(tmp_path / "out"),
        )],
        name="play-human",
        log_dir=tmp_path,
        ready=r"Play in your browser: (http://127\.0\.0\.1:\d+/\S+/)",
        ready_timeout=120,
    )  # fmt: skip
    url = urlsplit(re.search(r"Play in your browser: (\S+)", cli.output())[1])  # type: ignore[index]
    assert url.hostname and url.port
    return cli, url.hostname, url.port, url.path


def _request(
    port: int,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, bytes]:
    """One request with exactly ``headers`` (Host included when given)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = dict(headers or {})
        connection.putrequest(method, path, skip_host="Host" in headers)
        for name, value in headers.items():
            connection.putheader(name, value)
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


class Stream:
    """The page's event stream read as a browser would (one connection, line by line)."""

    def __init__(self, port: int, path: str, headers: dict[str, str] | None = None) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.connection.request("GET", path + "events", headers=headers or {})
        self.response = self.connection.getresponse()

    def next_state(self, until: Any = lambda state: True, limit: int = 2000) -> dict[str, Any]:
        """The next state event for which ``until(state)`` holds."""
        for _ in range(limit):
            line = self.response.fp.readline()
            if not line:
                raise AssertionError("the event stream ended")
            if line.startswith(b"data: "):
                state = json.loads(line[6:])
                if until(state):
                    return state
        raise AssertionError("no such state within the stream's first lines")

    def close(self) -> None:
        self.connection.close()


def _open(state: dict[str, Any]) -> bool:
    return state["request"] is not None or state["finished"]


def test_a_hostile_page_or_client_is_refused_and_the_persons_game_goes_on(
    tmp_path: Path,
) -> None:
    cli, host, port, path = _start(tmp_path)
    own = {"Host": f"{host}:{port}", "Origin": f"http://{host}:{port}"}
    stream = Stream(port, path)
    state = stream.next_state(_open)
    assert state["request"] is not None, state
    request_id = state["request"]["id"]
    legal = first_legal_answer(state["request"]["legal"])
    answer = json.dumps({"request_id": request_id, "action": legal}).encode()

    # A page on another origin POSTs a legal answer (a form or fetch needs no preflight for
    # text/plain): refused, and the request stays open for the person.
    for origin in ("http://evil.example", "null", f"http://{host}:{port + 1}"):
        status, body = _request(
            port, "POST", path + "action", answer,
            {"Host": f"{host}:{port}", "Origin": origin, "Content-Type": "text/plain"},
        )  # fmt: skip
        assert status == 403, (origin, status, body)
        assert b"origin" in body.lower(), body
    # A cross-site fetch a browser labels so, with no Origin header left to check.
    status, body = _request(
        port, "POST", path + "twin", b'{"accept": true}',
        {"Host": f"{host}:{port}", "Sec-Fetch-Site": "cross-site"},
    )  # fmt: skip
    assert status == 403, (status, body)
    # DNS rebinding: evil.example resolves to 127.0.0.1, so its page reaches this port with
    # its own name as the Host: neither the page, its stream nor its answers are served.
    for method, route, payload in (
        ("GET", "", None),
        ("GET", "events", None),
        ("POST", "action", answer),
    ):
        status, body = _request(
            port, method, path + route, payload, {"Host": f"evil.example:{port}"}
        )
        assert status in (403, 421), (route, status, body)
        assert b"host" in body.lower(), body

    # Garbled, nested past any parser's depth, oversized, wrong shape: a clear 4xx each.
    nested = b'{"request_id": ' + b"[" * 4000 + b"]" * 4000 + b"}"
    for payload, expected in (
        (b"\xff\xfe\x00garbage", 400),
        (b"[" * 4090, 400),
        (nested[:4096], 400),
        (b"[1, 2]", 400),
        (b'{"request_id": 1' + b" " * 100_000 + b"}", 413),
        (json.dumps({"request_id": True, "action": {}}).encode(), 409),
        (json.dumps({"request_id": request_id, "action": {"kind": "duel"}}).encode(), 409),
        (json.dumps({"request_id": request_id + 7, "action": legal}).encode(), 409),
    ):
        status, body = _request(port, "POST", path + "action", payload, own)
        assert status == expected, (payload[:40], status, body)
        assert "error" in json.loads(body), body
    # A flood of stale answers: each refused, none reaching the game.
    stale = json.dumps({"request_id": 0, "action": legal}).encode()
    for _ in range(200):
        assert _request(port, "POST", path + "action", stale, own)[0] == 409
    # A wrong key is no page at all.
    assert _request(port, "GET", "/not-the-key/", None, own)[0] == 404

    # A second tab's stream and a stalled reader's do not keep the first from going on.
    second = Stream(port, path, {"Host": f"{host}:{port}"})
    assert second.next_state()["request"]["id"] == request_id
    stalled = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]
    for sock in stalled:
        sock.sendall(f"GET {path}events HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())

    # The person's own answer, from the page's origin, is still taken; its replay is not.
    status, body = _request(port, "POST", path + "action", answer, own)
    assert status == 200, body
    status, body = _request(port, "POST", path + "action", answer, own)
    assert status == 409 and b"replay" in body, body
    after = stream.next_state(lambda s: s["request"] is None or s["request"]["id"] != request_id)
    assert after["notice"].startswith("you played") or after["request"] is not None, after
    for sock in stalled:
        sock.close()
    second.close()
    stream.close()
    bots = descendants(cli.pid)
    cli.popen.send_signal(signal.SIGTERM)
    cli.popen.wait(60)
    assert bots and all(state_of(pid) in ("", "Z") for pid in bots), "the bot outlived its match"
    assert "Traceback" not in cli.output(), cli.output()[-3000:]


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
def test_play_human_stopped_any_way_leaves_no_bot_process(
    tmp_path: Path, how: signal.Signals
) -> None:
    cli, host, port, path = _start(tmp_path)
    stream = Stream(port, path)
    assert stream.next_state(_open)["request"] is not None
    bots = descendants(cli.pid)
    assert bots, "the bot's process was not started"
    cli.popen.send_signal(how)
    code = cli.popen.wait(60)
    stream.close()
    deadline = time.monotonic() + 30  # a bounded wait for the kernel's death signals
    while any(state_of(pid) not in ("", "Z") for pid in bots) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [pid for pid in bots if state_of(pid) not in ("", "Z")]
    assert not left, f"{how.name}: the bot's processes {left} outlived play human"
    if how is not signal.SIGKILL:
        # Stopped, not killed by it (a SIGHUP unhandled is -1): its clean-up ran and it said so.
        assert code == 128 + how and "Interrupted" in cli.output(), (code, cli.output()[-3000:])
        assert "Traceback" not in cli.output(), cli.output()[-3000:]


def test_play_human_under_nohup_outlives_its_terminal(tmp_path: Path) -> None:
    """Started to outlive its terminal (SIGHUP ignored from the start), a hangup does not stop
    it: the SIGTERM sent after it does.  (Were SIGHUP taken, it would be the stop: 129.)"""
    cli, host, port, path = _start(tmp_path, hangup="ignore")
    stream = Stream(port, path)
    assert stream.next_state(_open)["request"] is not None
    cli.popen.send_signal(signal.SIGHUP)
    cli.popen.send_signal(signal.SIGTERM)
    code = cli.popen.wait(60)
    stream.close()
    assert code == 128 + signal.SIGTERM, (code, cli.output()[-3000:])


def test_a_flood_of_event_streams_does_not_cost_the_bot_its_clock(tmp_path: Path) -> None:
    cli, host, port, path = _start(tmp_path)
    stream = Stream(port, path)
    state = stream.next_state(_open)
    flood = []
    for _ in range(300):  # each a stream that reads nothing: the kernel's buffers fill
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(f"GET {path}events HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        flood.append(sock)
    own = {"Host": f"{host}:{port}", "Origin": f"http://{host}:{port}"}
    for _ in range(6):  # a few of the person's decisions, each answered at once
        if state["finished"] or state["ended"]:
            break
        legal = first_legal_answer(state["request"]["legal"])
        answer = json.dumps({"request_id": state["request"]["id"], "action": legal})
        status, body = _request(port, "POST", path + "action", answer.encode(), own)
        assert status == 200, body
        asked = state["request"]["id"]
        state = stream.next_state(
            lambda s, asked=asked: (
                s["finished"] or s["ended"] or (s["request"] and s["request"]["id"] != asked)
            )
        )
    for sock in flood:
        sock.close()
    stream.close()
    cli.popen.send_signal(signal.SIGTERM)
    cli.popen.wait(60)
    assert "Traceback" not in cli.output(), cli.output()[-3000:]
    # The bot kept its clock: no game ended by a timeout while the streams were stalled.
    assert not state["ended"] or state["ended"]["reason"] != "timeout", state["ended"]
    assert not state["finished"] or all(r["reason"] != "timeout" for r in state["results"])
