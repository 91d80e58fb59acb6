"""``serve --event swiss --notify URL`` whose endpoint takes the connection and never answers:
a stop (SIGTERM) while the POST waits ends serve then, with the event's results written,
instead of serve sitting out every attempt (``asyncio.to_thread``'s executor is joined when
the loop ends: 3 attempts of 10 s, and for ever for an endpoint that trickles its answer)."""

from __future__ import annotations

import signal
import socket
import threading
from pathlib import Path

import pytest
from arena_support import add_players, start_arena, start_bots, wait_until

pytestmark = pytest.mark.slow


def test_a_stop_while_the_notify_endpoint_hangs_ends_serve(tmp_path: Path) -> None:
    hole = socket.create_server(("127.0.0.1", 0))
    taken: list[socket.socket] = []

    def accept() -> None:
        for _ in range(10):  # bounded: serve makes 3 attempts at most
            try:
                taken.append(hole.accept()[0])  # held open, never answered
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "ben")
    arena = start_arena(
        folder, "--move-timeout", "5", "--event", "swiss", "--rounds", "1", "--games", "2",
        "--start-after", "120", "--start-with", "2", "--notify", f"http://127.0.0.1:{hole.getsockname()[1]}/",
    )  # fmt: skip
    bots = start_bots(tokens, arena.address, tmp_path, reconnect=False)
    try:
        wait_until(lambda: taken, 180, "the notify's first attempt")
        arena.process.send_signal(signal.SIGTERM)
        arena.wait(60)
        assert len(taken) == 1, f"serve waited for {len(taken)} attempts before it stopped"
        output = arena.output()
        assert "is over" in output and "Traceback" not in output, output[-3000:]
        assert "attempt 1 of 3 failed" not in output, output[-2000:]
        assert "stopped before the endpoint answered" in output, output[-2000:]
    finally:
        for bot in bots:
            bot.kill()
        hole.close()
        for connection in taken:
            connection.close()
