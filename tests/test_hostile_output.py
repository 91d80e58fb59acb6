"""A stranger's text against the organizer's terminal: escape sequences and forged lines in a
bot's Hello (a gRPC client written from proto/tacocat/v1/arena.proto, to a real ``serve``)
and in what a bot prints before it dies (a real ``play``).  The arena's log and a command's
error show such text as escapes (``\\x1b``, ``\\n``): no escape sequence reaches a terminal
that reads them, no line of the stranger's looks like one of ours."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import arena_support
import grpc
import pytest
from arena_support import add_players, wait_until
from process_support import python_command, start_process

from tacocat.v1 import arena_pb2 as pb
from tacocat.v1 import arena_pb2_grpc
from tacocat_arena.protocol.wire import PROTOCOL_VERSION

pytestmark = pytest.mark.slow

#: A line of ours, forged, then an OSC title and a screen clear.
FORGED = "2026-12-02 11:00:00,000 INFO tacocat_arena.referee.server: bot alice disconnected"
EVIL = f"mallory\n{FORGED}\x1b]0;owned\x07\x1b[2J\x9b31m\u2028"


def _hello(address: str, hello: pb.Hello) -> grpc.RpcError | None:
    """Open a session with ``hello``; the refusal, or None once admitted (then hang up)."""
    with grpc.insecure_channel(address) as channel:
        stub = arena_pb2_grpc.ArenaStub(channel)
        call = stub.Play(iter([pb.BotMessage(hello=hello)]), timeout=30)
        try:
            first = next(call)
        except grpc.RpcError as error:
            return error
        assert first.WhichOneof("message") in ("welcome", "session_end", "error"), first
        call.cancel()
        return None


def _no_stranger_control(text: str) -> None:
    controls = sorted({c for c in text if not c.isprintable() and c not in "\n\t"})
    assert not controls, f"control characters {controls} reached the output"
    forged = [line for line in text.splitlines() if line.startswith(FORGED[:20])]
    assert not forged, forged


def test_a_hello_cannot_write_escapes_or_forge_lines_in_the_arenas_log(tmp_path: Path) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "alice")
    arena = arena_support.start_arena(folder)
    log = folder / "logs" / "arena.log"
    try:
        # A stranger with no token: a wrong protocol version, refused before the name's check.
        refused = _hello(arena.address, pb.Hello(protocol_version=999, bot_name=EVIL))
        assert refused is not None and refused.code() == grpc.StatusCode.FAILED_PRECONDITION
        # A player whose Hello's client_info is a screen of escapes.
        admitted = _hello(
            arena.address,
            pb.Hello(
                protocol_version=PROTOCOL_VERSION,
                bot_name="alice",
                token=tokens["alice"],
                client_info=EVIL * 400,
            ),
        )
        assert admitted is None, admitted

        def logged() -> str:
            text = log.read_text(errors="replace") if log.exists() else ""
            return text if "bot alice connected" in text else ""

        text = wait_until(logged, 30, "the arena's log of both")
        assert "refused mallory" in text, text[-2000:]
        _no_stranger_control(text)
        line = next(x for x in text.splitlines() if "bot alice connected" in x)
        assert len(line) < 1000, len(line)  # a 40 KB client_info is not a 40 KB log line
    finally:
        arena.stop()


def test_a_bots_dying_words_reach_the_terminal_as_text(tmp_path: Path) -> None:
    bot = tmp_path / "evil.py"
    bot.write_text(f"import sys\nsys.stdout.write({EVIL!r})\nsys.stdout.flush()\nsys.exit(3)\n")
    cli = start_process(
        python_command(
            "-m", "tacocat_arena.cli", "play", f"{sys.executable} {bot}", "random",
            "-n", "2", "--out", str(tmp_path / "out"),
        ),
        name="play",
        log_dir=tmp_path,
    )  # fmt: skip
    assert cli.wait(180) != 0
    output = cli.output()
    assert re.search(r"exited with code 3", output), output[-3000:]
    assert "\\x1b]0;owned" in output, output[-3000:]  # shown, as its escape
    _no_stranger_control(output)
