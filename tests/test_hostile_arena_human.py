"""A hostile player against the arena's person's games (docs/human-seat.md, "In the arena")
on a real ``serve``: bodies that never end or are no challenge, opponents of every type, page
keys guessed.  Each gets a clear 4xx at once (never a 500, never a server that waits for a
gigabyte), and the same player's next challenge plays."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from arena_support import add_players, post, start_arena

pytestmark = pytest.mark.slow


def _endless_body(web: str, path: str, token: str, sent: int = 64 * 1024) -> bytes:
    """POST ``path`` announcing a gigabyte's body, send ``sent`` bytes of it and wait for the
    answer with the connection still open: a server that reads the body whole before its size
    check waits for the rest (the test then fails on its timeout), one that reads it as it
    comes answers 413 at its cap."""
    parts = urlsplit(web)
    with socket.create_connection((parts.hostname, parts.port), timeout=60) as sock:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {10**9}\r\n\r\n"
        )
        sock.sendall(head.encode() + b'{"opponent": "' + b"x" * sent)
        answer = b""
        try:
            while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
        except TimeoutError:
            pytest.fail(f"no answer to a body announced as 1 GB after {sent} bytes: {answer!r}")
    return answer


def test_a_challenge_body_without_end_is_refused_at_its_cap_and_odd_ones_are_400(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "alice", "bob")
    arena = start_arena(folder, "--move-timeout", "5")
    try:
        web = arena.web
        # A body announced as 1 GB: refused once past the cap, not awaited whole in memory.
        answer = _endless_body(web, "/api/human/challenges", tokens["alice"])
        assert answer.startswith(b"HTTP/1.1 413"), answer[:300]
        assert b"over 4096 bytes" in answer, answer
        # Bodies that are no challenge, and opponents of every type: 400 or 409, saying why.
        challenges = "/api/human/challenges"
        for body in (b"", b"\xff\xfe", b"[" * 4000, b'"random"', b"[1]", b"null"):
            status, reply = post(web, challenges, body, tokens["alice"])
            assert status == 400 and "send a JSON object" in reply["error"], (body[:20], reply)
        for opponent in (5, ["random"], {"x": 1}, None, "builtin:../../etc", "random\x00",
                         "bob@v1", "alice@v0", "x" * 3000, "builtin:"):  # fmt: skip
            body = json.dumps({"opponent": opponent}).encode()
            status, reply = post(web, challenges, body, tokens["alice"])
            assert status in (409, 413), (str(opponent)[:40], status, reply)
            assert isinstance(reply, dict) and reply["error"], reply
            assert len(reply["error"]) < 400, reply  # the stranger's text is cut
        # The opt-out of a version that does not exist: 404 before any body is read.
        status, reply = post(web, "/api/human/versions/alice/1", b"x" * 8000, tokens["alice"])
        assert status == 404, reply
        # Guessed page keys: 404, for each route under one.
        for key in ("x", "A" * 24, "..", "%2e%2e", "'%20OR%201=1"):
            assert arena.status(f"/human/{key}/events") == 404
        assert post(web, "/human/" + "A" * 24 + "/action", b"{}")[0] == 404
        # Nothing lost: alice's challenge then starts, and bob's too (a game each at once).
        for player in ("alice", "bob"):
            body = json.dumps({"opponent": "random"}).encode()
            status, started = post(web, challenges, body, tokens[player])
            assert status == 201, started
            assert b"Your hand" in arena.get(started["url"])
        assert "Traceback" not in arena.output(), arena.output()[-3000:]
    finally:
        arena.stop()
