"""The arena's web server against clients that hold what they can: connections that send
nothing or a byte at a time, floods from many addresses, huge headers, many event streams.

``tacocat-arena serve`` runs as a real process (with the usual 1,024 open files where the
test says so); the clients are raw sockets on loopback, from 127.0.0.1 and other 127.x
addresses (any of them reaches the server, each is its own client address).
"""

from __future__ import annotations

import contextlib
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from arena_support import ArenaProcess, add_players, start_arena, start_bots, wait_until

from tacocat_arena.web.limits import WebLimits

pytestmark = pytest.mark.slow
LIMITS = WebLimits()  # what serve uses


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArenaProcess]:
    """One server for the file's tests (an arena start is ~0.7 s of CPU): each test gives
    back what it holds (its sockets closed, its bots killed) and the next one checks the
    server from its own client addresses."""
    server = start_arena(tmp_path_factory.mktemp("web-limits") / "arena", open_files=1024)
    yield server
    server.stop(signal.SIGKILL, timeout=10)


def _address(arena: ArenaProcess) -> tuple[str, int]:
    host, _, port = arena.web.removeprefix("http://").partition(":")
    return host, int(port)


def _connect(arena: ArenaProcess, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.settimeout(30)
    sock.connect(_address(arena))
    return sock


def _answer(sock: socket.socket, timeout: float = 30.0) -> bytes:
    """What the server sends until it closes the connection (or ``timeout``)."""
    sock.settimeout(timeout)
    data = b""
    with contextlib.suppress(TimeoutError, ConnectionResetError):
        while chunk := sock.recv(65536):
            data += chunk
    return data


def _get(arena: ArenaProcess, path: str, source: str = "127.0.0.1", head: str = "") -> bytes:
    sock = _connect(arena, source)
    with sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{head}\r\n".encode())
        return _answer(sock)


def _closed_by_server(sock: socket.socket, timeout: float) -> tuple[bool, bytes]:
    sock.settimeout(timeout)
    try:
        data = sock.recv(65536)
    except TimeoutError:
        return False, b""
    except ConnectionResetError:
        return True, b""
    return True, data + _answer(sock, 5)


def test_connections_that_send_nothing_or_a_byte_at_a_time_are_closed(
    arena: ArenaProcess,
) -> None:
    # An idle keep-alive connection is closed a few seconds after its last response; it is
    # watched while the heads below run out their deadline (nothing else closes a connection
    # idle after a response: a head's deadline runs from its first byte).
    keeper = _connect(arena)
    keeper.sendall(b"GET /api/status HTTP/1.1\r\nHost: x\r\n\r\n")
    keeper.settimeout(10)
    assert keeper.recv(65536).startswith(b"HTTP/1.1 200")
    silent = [_connect(arena) for _ in range(20)]
    dribbler = _connect(arena)
    began = time.monotonic()
    for byte in b"GET / HTTP/1.1\r\nHost: x\r\n":  # one byte a second: never a whole head
        if time.monotonic() - began > LIMITS.header_timeout_s + 5:
            break
        try:
            dribbler.send(bytes([byte]))
        except (BrokenPipeError, ConnectionResetError):
            break
        time.sleep(1.0)
    for sock in [dribbler, *silent]:
        closed, data = _closed_by_server(sock, LIMITS.header_timeout_s + 10)
        assert closed and (data == b"" or data.startswith(b"HTTP/1.1 408")), data
        sock.close()
    closed, _ = _closed_by_server(keeper, LIMITS.keep_alive_s + 10)
    assert closed
    keeper.close()


def test_a_huge_header_is_refused_and_a_normal_one_is_not(arena: ArenaProcess) -> None:
    assert _get(arena, "/api/status", head="X-Fill: " + "a" * 8000 + "\r\n").startswith(
        b"HTTP/1.1 200"
    )
    for size in (LIMITS.max_header_bytes + 1, 1 << 20):
        sock = _connect(arena)
        with sock:
            try:
                sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Fill: " + b"a" * size)
                sock.sendall(b"\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass  # refused while it was still sending
            answer = _answer(sock)
        assert answer == b"" or answer.startswith(b"HTTP/1.1 431"), answer[:200]
    assert _get(arena, "/api/status").startswith(b"HTTP/1.1 200")


def test_connections_are_capped_per_address_and_in_total_and_the_arena_plays_on(
    arena: ArenaProcess, tmp_path: Path
) -> None:
    tokens = add_players(arena.folder, "ann", "ben")
    bots = start_bots(tokens, arena.address, tmp_path)
    try:
        wait_until(lambda: arena.json("/api/status")["games"] >= 2, 60, "games")
        # One address: beyond its share, 503 with Retry-After at once; others unaffected.
        mine = [_connect(arena, "127.0.0.1") for _ in range(LIMITS.connections_per_client)]
        extra = _connect(arena, "127.0.0.1")
        refused = _answer(extra, 10)
        assert refused.startswith(b"HTTP/1.1 503") and b"retry-after: 5" in refused, refused
        assert b"from your address" in refused
        assert _get(arena, "/api/status", source="127.0.0.2").startswith(b"HTTP/1.1 200")
        for sock in [extra, *mine]:
            sock.close()
        # 1,100 connections from 20 addresses at 1,024 open files: the web server refuses
        # past its total (no "Too many open files"), the ladder goes on, the page comes back.
        before = arena.json("/api/status")["games"]
        flood = []
        for index in range(1100):
            sock = _connect(arena, f"127.0.1.{index % 20 + 1}")
            flood.append(sock)
        # The refusals are read as they come (a second's sleep then one read each missed
        # them on a loaded machine); the connections within the total get no answer.
        answers = [b""] * len(flood)
        for sock in flood:
            sock.setblocking(False)

        def refused_enough() -> bool:
            for index, sock in enumerate(flood):
                if not answers[index]:
                    with contextlib.suppress(BlockingIOError, ConnectionResetError):
                        answers[index] = sock.recv(4096)
            return (
                sum(a.startswith(b"HTTP/1.1 503") for a in answers)
                >= 1100 - LIMITS.connections_total
            )

        wait_until(refused_enough, 30, "the refusals past the total", interval=0.2)
        turned_away = [a for a in answers if a.startswith(b"HTTP/1.1 503")]
        assert len(turned_away) >= 1100 - LIMITS.connections_total, len(turned_away)
        assert all(b"too many connections to this server" in a for a in turned_away)
        for sock in flood:
            sock.close()
        wait_until(
            lambda: _get(arena, "/api/status").startswith(b"HTTP/1.1 200"), 30, "the page back"
        )
        assert arena.json("/api/status")["games"] > before
        assert arena.process.poll() is None
        assert b"Too many open files" not in (arena.folder / "logs" / "arena.log").read_bytes()
    finally:
        for bot in bots:
            bot.kill()


def test_event_streams_are_capped_per_address_and_in_total(arena: ArenaProcess) -> None:
    def opened(source: str) -> socket.socket:
        sock = _connect(arena, source)
        sock.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        return sock

    def first_of(sock: socket.socket) -> tuple[socket.socket, bytes]:
        sock.settimeout(10)
        first = sock.recv(4096)
        if first.startswith(b"HTTP/1.1 503"):
            first += _answer(sock, 5)  # the refusal's body, up to its close
        return sock, first

    def stream(source: str) -> tuple[socket.socket, bytes]:
        return first_of(opened(source))

    mine = [stream("127.0.0.1") for _ in range(LIMITS.streams_per_client)]
    assert all(first.startswith(b"HTTP/1.1 200") for _, first in mine)
    extra, refused = stream("127.0.0.1")
    assert refused.startswith(b"HTTP/1.1 503") and b"retry-after: 5" in refused, refused
    extra.close()
    # The rest of the total from other addresses, asked all at once, then read (each answer
    # says its stream is counted before the one over the total is asked).
    wanted = LIMITS.streams_total - len(mine)
    per = LIMITS.streams_per_client - 1
    others = [first_of(sock) for sock in [opened(f"127.0.2.{i // per + 1}") for i in range(wanted)]]
    assert all(first.startswith(b"HTTP/1.1 200") for _, first in others)
    over, refused = stream("127.0.3.1")
    assert refused.startswith(b"HTTP/1.1 503") and b"on this server" in refused, refused
    over.close()
    # Pages still answer while every stream is taken.
    assert _get(arena, "/", source="127.0.3.2").startswith(b"HTTP/1.1 200")
    for sock, _ in mine + others:
        sock.close()

    def stream_answers() -> bool:
        sock, first = stream("127.0.3.3")
        sock.close()
        return first.startswith(b"HTTP/1.1 200")

    wait_until(stream_answers, 30, "the streams to be freed")
