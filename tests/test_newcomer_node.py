"""A Node bot author's first steps (issue 37, point 4; ``--arena``, point 6).

``submit`` warns about a package.json without node_modules (the arena runs packages with the
network off), refuses a gRPC address as ``--arena`` with a sentence saying which address it
wants, and a failed check's log keeps the bot's first error line (Node's ``Error: Cannot find
module '@grpc/grpc-js'``) before its tail of stack lines.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from click.testing import CliRunner
from node_support import node_dependencies

from tacocat.v1 import arena_pb2_grpc
from tacocat_arena.check.launched import log_tail
from tacocat_arena.cli.main import main

REPO = Path(__file__).resolve().parents[1]
NODE_DIR = REPO / "example_bots" / "node"


def node_package(where: Path) -> Path:
    """A Node package folder like the example's, without its node_modules."""
    folder = where / "mybot"
    folder.mkdir()
    (folder / "bot.toml").write_text('command = "node bot.js"\n')
    (folder / "package.json").write_text('{"name": "mybot", "dependencies": {}}\n')
    (folder / "bot.js").write_text("require('@grpc/grpc-js');\n")
    return folder


def test_submit_warns_about_a_node_package_without_node_modules(tmp_path: Path) -> None:
    folder = node_package(tmp_path)
    result = CliRunner().invoke(
        main, ["submit", str(folder), "--arena", "http://127.0.0.1:9", "--token", "t"]
    )
    assert result.exit_code == 1  # nothing listens on port 9
    assert "has a package.json but no node_modules" in result.stderr
    assert "npm ci" in result.stderr
    (folder / "node_modules").mkdir()
    again = CliRunner().invoke(
        main, ["submit", str(folder), "--arena", "http://127.0.0.1:9", "--token", "t"]
    )
    assert "node_modules" not in again.stderr


@pytest.mark.parametrize("address", ["127.0.0.1:50051", "localhost:8080", "arena.example.org"])
def test_submit_to_a_grpc_address_says_which_address_it_wants(
    tmp_path: Path, address: str
) -> None:
    folder = node_package(tmp_path)
    (folder / "node_modules").mkdir()
    result = CliRunner().invoke(main, ["submit", str(folder), "--arena", address, "--token", "t"])
    assert result.exit_code == 1
    assert f"--arena {address}: give the arena's web address, http://HOST:PORT" in result.output
    assert "urlopen" not in result.output and "Traceback" not in result.output


def test_a_log_tail_keeps_the_first_error_line_before_a_long_stack(tmp_path: Path) -> None:
    stack = [f"    at Module._load (node:internal/modules/cjs/loader:{i})" for i in range(30)]
    lines = ["node:internal/modules/cjs/loader:1080", "  throw err;", "  ^", ""]
    lines += ["Error: Cannot find module '@grpc/grpc-js'", "Require stack:", *stack]
    log = tmp_path / "bot.log"
    log.write_text("\n".join([*lines, "", "Node.js v18.19.1"]) + "\n")
    tail = log_tail(log).splitlines()
    assert tail[:2] == ["Error: Cannot find module '@grpc/grpc-js'", "..."]
    assert tail[-1] == "Node.js v18.19.1"
    short = tmp_path / "short.log"
    short.write_text("Traceback (most recent call last):\nValueError: bad\n")
    assert log_tail(short) == "Traceback (most recent call last):\nValueError: bad"  # all kept


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")
def test_check_of_a_node_bot_without_node_modules_shows_the_missing_module(
    tmp_path: Path,
) -> None:
    """The real example, copied without node_modules, as a real process: the check fails
    and its output names the module, the one line that matters."""
    copy = tmp_path / "mybot"
    shutil.copytree(NODE_DIR, copy, ignore=shutil.ignore_patterns("node_modules"))
    done = subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", "check", "node bot.js"],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Cannot find module '@grpc/grpc-js'" in done.stdout, done.stdout


@pytest.mark.slow
def test_help_loads_no_room_of_the_server() -> None:
    """`tacocat-arena --help` imports the command line only (issue 37: 0.67 s of CPU when
    it loaded the grader, the arena and gRPC; lazily imported, about 0.12 s on the project's
    machine: docs/architecture.md).  Counted by module, not timed."""
    code = (
        "import sys, tacocat_arena.cli.main as m\n"
        "heavy = ('grpc', 'rich', 'numpy', 'asyncio', 'starlette', 'google')\n"
        "rooms = ('grade', 'arena', 'tournament', 'referee', 'engine', 'launch', 'report')\n"
        "print('\\n'.join(sorted(n for n in sys.modules if n.split('.')[0] in heavy\n"
        "    or n.split('.')[:2] in [['tacocat_arena', r] for r in rooms])))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == []
    shown = subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", "--help"], capture_output=True, text=True
    )
    assert shown.returncode == 0 and "grade" in shown.stdout and "serve" in shown.stdout


class _EndsAtOnce(arena_pb2_grpc.ArenaServicer):
    """A referee that reads the Hello and ends the stream (status OK) with no Welcome."""

    def Play(self, request_iterator, context):  # noqa: N802 (the gRPC method name)
        next(request_iterator, None)
        return iter(())


@pytest.mark.slow
def test_the_node_example_exits_1_saying_so_when_its_stream_ends_before_a_welcome() -> None:
    """Issue 37: it exited 0, so a launcher or a script took a refused session for a bot
    that had finished.  A real ``node bot.js`` against a real gRPC server on loopback."""
    folder = node_dependencies()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    arena_pb2_grpc.add_ArenaServicer_to_server(_EndsAtOnce(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        bot = subprocess.run(
            ["node", str(folder / "bot.js")],
            env={**os.environ, "TACOCAT_ARENA_ADDRESS": f"127.0.0.1:{port}",
                 "TACOCAT_BOT_RECONNECT": "0"},
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    finally:
        server.stop(None)
    assert bot.returncode == 1, (bot.returncode, bot.stderr)
    assert "ended before a Welcome" in bot.stderr, bot.stderr
