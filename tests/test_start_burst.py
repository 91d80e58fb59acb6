"""Many bots started at once: every one connects, and none ever ends silently.

A 32-bot run under bwrap failed at its start ("bot 'search-b10-s1' exited with code 0 before
connecting", the bot's log empty): the referee's peer check of a Unix-socket session read all
of /proc once per connection already open, on the referee's event loop, so with 20 bots
connected one admission took 1-2 s and the loop stood still; the Hellos queued behind it
reached their handshake timeout and their streams were cancelled, and the SDK took a
CANCELLED stream for a normal end and exited 0 without a word.  These tests hold each part:
one pass over /proc a check, the check off the loop, the SDK's exit 1 with a reason, the
runner's message about what the bot printed, and a whole burst of sandboxed bots.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
from concurrent import futures
from pathlib import Path

import grpc
import pytest

from tacocat.v1 import arena_pb2 as pb
from tacocat.v1 import arena_pb2_grpc
from tacocat_arena.launch import sandbox
from tacocat_arena.launch.bots import BotProcess, Launch
from tacocat_arena.launch.spec import BotSpec
from tacocat_arena.protocol.wire import PROTOCOL_VERSION
from tacocat_arena.referee import Referee, RefereeSettings, peers
from tacocat_arena.referee.admission import Refusal, admit
from tacocat_arena.referee.session import BotSession

linux_only = pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux /proc")
needs_bwrap = pytest.mark.skipif(
    sandbox.bwrap_path() is None, reason="bubblewrap (bwrap) is not installed or cannot run here"
)
REPO = Path(__file__).resolve().parent.parent


# -- the peer check: no pass over /proc, off the referee's loop ---------------------------------
@linux_only
def test_a_unix_peer_check_never_reads_the_whole_process_table_whatever_the_connections(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight bots' sockets, each with a connection from this process (the bots' tree): the
    check of one walks each connection's peer up to its owner, never reading /proc's whole
    process table (once per other bot's connection, it took seconds; once a check, it was
    still most of the runner's CPU in a start)."""
    check = peers.PeerCheck()
    held: list[socket.socket] = []
    try:
        for index in range(8):
            path = tmp_path / f"b{index}.sock"
            server = socket.socket(socket.AF_UNIX)
            server.bind(str(path))
            server.listen()
            client = socket.socket(socket.AF_UNIX)
            client.connect(str(path))
            accepted, _ = server.accept()
            held += [server, client, accepted]
            check.listen(f"b{index}", path)
            check.expect(f"b{index}", os.getpid())
        reads: list[int] = []
        table = peers._children  # noqa: SLF001 (what is counted)

        def counted() -> dict[int, list[int]]:
            reads.append(1)
            return table()

        monkeypatch.setattr(peers, "_children", counted)
        assert check("b0", "unix:") is None
        assert reads == []
        check.expect("b3", 2**22 + 1)  # beyond pid_max: no process, so not the peer's
        assert check("b3", "unix:") is not None
    finally:
        for sock in held:
            sock.close()


def test_the_peer_check_runs_off_the_referees_loop() -> None:
    """A check that waits for the loop to go on (as a slow /proc read would hold it) is
    admitted: run on the loop, it would hold the loop and be refused at its own timeout."""
    loop_went_on = threading.Event()

    def check(name: str, peer: str) -> str | None:
        return None if loop_went_on.wait(20) else "the referee's loop stood still"

    async def both() -> object:
        referee = Referee({"a": "tok-a"}, RefereeSettings(), check_peer=check)
        hello = pb.Hello(protocol_version=PROTOCOL_VERSION, bot_name="a", token="tok-a")
        admission = asyncio.ensure_future(admit(referee, hello, "unix:"))
        await asyncio.sleep(0)  # the admission is under way, its check in its thread
        loop_went_on.set()  # only a loop left free gets here while the check waits
        return await admission

    session = asyncio.run(asyncio.wait_for(both(), 120))
    assert isinstance(session, BotSession), session
    assert not isinstance(session, Refusal)


# -- the SDK: a stream that ends before its Welcome is an error -------------------------------
class _EndsAtOnce(arena_pb2_grpc.ArenaServicer):
    """A referee that reads the Hello and ends the stream (status OK) with no Welcome."""

    def Play(self, request_iterator, context):  # noqa: N802 (the gRPC method name)
        next(request_iterator, None)
        return iter(())


@pytest.mark.slow
def test_the_sdk_never_ends_silently_before_a_welcome() -> None:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    arena_pb2_grpc.add_ArenaServicer_to_server(_EndsAtOnce(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        bot = subprocess.run(
            [sys.executable, "-m", "example_bots", "builtin:random?seed=1"],
            env={
                **os.environ,
                "TACOCAT_ARENA_ADDRESS": f"127.0.0.1:{port}",
                "TACOCAT_BOT_RECONNECT": "0",
            },
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.stop(None)
    assert bot.returncode == 1, (bot.returncode, bot.stderr)
    assert "ended before the referee's Welcome" in bot.stderr, bot.stderr


# -- the runner's message: what the bot printed ------------------------------------------------
def _process(log: Path) -> BotProcess:
    spec = BotSpec(name="mine", command="python mine.py")
    launch = Launch(
        identity="mine",
        token="t",
        log_path=log,
        cwd=log.parent,
        mode=sandbox.SandboxMode.NONE,
        limits=sandbox.Limits(),
        tcp_address="127.0.0.1:1",
    )
    return BotProcess(spec, launch)


def test_the_start_error_says_the_bot_printed_nothing_or_its_last_line(tmp_path: Path) -> None:
    log = tmp_path / "mine.log"
    log.write_text(
        "--- start #1: ['python', 'mine.py']\nold line\n--- exited with code 1\n"
        "--- start #2: ['python', 'mine.py']\n--- exited with code 0\n"
    )
    assert _process(log).printed() == "it printed nothing"
    log.write_text("--- start #1: ['python', 'mine.py']\nCANCELLED: gone\n--- exited 1\n")
    assert _process(log).printed() == "its last line: CANCELLED: gone"


# -- the whole burst: 32 sandboxed bots started at once ----------------------------------------
@needs_bwrap
@pytest.mark.slow
def test_thirty_two_sandboxed_bots_started_at_once_all_connect(tmp_path: Path) -> None:
    """examples/swiss-field.toml's start, with random bots (the start is what is tested):
    32 bots, bwrap, every process starting at once.  Without twins: with them the same
    burst of 32 came twice (the A processes, then the B ones), for 32 more starts' CPU."""
    bots = "".join(
        f'[[bots]]\nname = "r{index}"\ncommand = "builtin:random?seed={index}"\n\n'
        for index in range(32)
    )
    config = tmp_path / "burst.toml"
    config.write_text(f"games = 2\nseed = 1\nconnect_timeout = 300\ntwins = false\n\n{bots}")
    done = subprocess.run(
        [
            *(sys.executable, "-m", "tacocat_arena.cli", "run", str(config)),
            *("--sandbox", "bwrap", "--format", "swiss", "--rounds", "1"),
            *("--out", str(tmp_path / "out"), "--quiet"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    logs = sorted((tmp_path / "out" / "logs").glob("*.log"))
    assert len(logs) == 32  # one process a bot
    for log in logs:
        assert "tacocat_bot: connected to" in log.read_text(), log.read_text()[-2000:]
