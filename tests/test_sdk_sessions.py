"""SDK sessions tell what happens, and outlive a restart of ``serve``.

A real ``tacocat-arena serve`` on a fixed loopback port and SDK bots in their own processes
(tests/bots/ladder_bot.py): each bot says on stderr when it connects (address, name,
session), when its session ends (the reason) and when the connection is lost; after
SERVER_SHUTDOWN (SIGTERM) or a lost stream (SIGKILL) it reconnects by itself, with backoff,
to the arena started again on the same port.  With TACOCAT_BOT_RECONNECT=0 it ends instead.
The Node and C++ examples (example_bots/node, example_bots/cpp) do the same.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
from pathlib import Path

import pytest
from arena_support import (  # tests/ (pytest pythonpath)
    BotProc,
    add_players,
    connected_sessions,
    games_of,
    start_arena,
    start_bot,
    start_bots,
    wait_until,
)
from node_support import node_dependencies  # tests/ (pytest pythonpath)
from process_support import start_process

from tacocat_bot.client import reconnects_by_default

pytestmark = [pytest.mark.slow]

NODE_DIR = Path(__file__).resolve().parents[1] / "example_bots" / "node"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start_example(name: str, argv: list[str], env: dict[str, str], log: Path) -> BotProc:
    """Start an example bot in another language (its own process, output to ``log``)."""
    real = start_process(argv, name=log.stem, log_dir=log.parent, env={**os.environ, **env})
    return BotProc(name, real)


def _player_env(name: str, token: str, address: str) -> dict[str, str]:
    return {"TACOCAT_ARENA_ADDRESS": address, "TACOCAT_ARENA_BOT": name,
            "TACOCAT_ARENA_TOKEN": token}  # fmt: skip


def _sessions(bot: BotProc) -> list[str]:
    """The sessions the bot said it connected to, in order."""
    return re.findall(r"tacocat_bot: connected to \S+ as \S+, session (\S+)", bot.output())


def test_sdk_bots_reconnect_after_shutdown_and_after_a_lost_stream(
    tmp_path: Path, cleanup: list
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "ben")
    port = _free_port()
    arena = start_arena(folder, "--port", str(port))
    cleanup.append(arena)
    assert arena.address == f"127.0.0.1:{port}"
    ann, ben = start_bots(tokens, arena.address, tmp_path)
    cleanup += [ann, ben]
    wait_until(lambda: games_of(arena).get("ann", 0) >= 2, 60, "ann's first games")
    first = connected_sessions(arena)["ann"]
    assert f"tacocat_bot: connected to {arena.address} as ann, session {first}" in ann.output()

    # SIGTERM: the bots are told SERVER_SHUTDOWN, say so, and reconnect to the new arena.
    arena.stop(signal.SIGTERM)
    wait_until(lambda: "ended: server_shutdown" in ann.output(), 30, "ann told of the shutdown")
    assert "reconnecting in " in ann.output() and ann.process.poll() is None
    arena = start_arena(folder, "--port", str(port))
    cleanup.append(arena)
    wait_until(
        lambda: {"ann", "ben"} <= set(connected_sessions(arena)), 60, "both back, by themselves"
    )
    before = games_of(arena).get("ann", 0)
    wait_until(lambda: games_of(arena).get("ann", 0) >= before + 2, 60, "games after restart")
    assert len(_sessions(ann)) == 2 and _sessions(ann)[-1] == connected_sessions(arena)["ann"]

    # kill -9: the stream is lost; the bots say so and come back to the arena started again.
    arena.process.send_signal(signal.SIGKILL)
    arena.process.wait(10)
    wait_until(lambda: "lost the connection to" in ben.output(), 30, "ben noticing the loss")
    arena = start_arena(folder, "--port", str(port))
    cleanup.append(arena)
    wait_until(
        lambda: {"ann", "ben"} <= set(connected_sessions(arena)), 90, "both back after kill -9"
    )
    # The arena lists a session once it admits it; the bot says so once it reads the welcome.
    wait_until(lambda: len(_sessions(ben)) >= 3, 30, "ben saying it is back")
    assert len(_sessions(ben)) == 3, ben.output()
    assert ann.process.poll() is None and ben.process.poll() is None


def test_with_reconnect_off_a_bot_ends_at_shutdown(tmp_path: Path, cleanup: list) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "ben")
    arena = start_arena(folder)
    cleanup.append(arena)
    bots = start_bots(tokens, arena.address, tmp_path, reconnect=False)
    cleanup.extend(bots)
    wait_until(lambda: games_of(arena).get("ann", 0) >= 2, 60, "the first games")
    arena.stop(signal.SIGTERM)
    for bot in bots:
        assert bot.process.wait(30) == 0, bot.output()
        assert "ended: server_shutdown" in bot.output()
        assert "reconnecting" not in bot.output()


def test_reconnecting_is_on_for_serve_addresses_and_off_for_launched_bots(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TACOCAT_BOT_RECONNECT", raising=False)
    assert reconnects_by_default("arena.example.org:50051")
    assert not reconnects_by_default("unix:/run/tacocat/arena.sock")  # a sandbox's socket
    monkeypatch.setenv("TACOCAT_BOT_RECONNECT", "0")  # what every launcher sets
    assert not reconnects_by_default("127.0.0.1:50051")
    monkeypatch.setenv("TACOCAT_BOT_RECONNECT", "1")
    assert reconnects_by_default("unix:/run/tacocat/arena.sock")


def test_the_node_example_reconnects_after_a_serve_restart(tmp_path: Path, cleanup: list) -> None:
    """example_bots/node/bot.js does as the SDK: it outlives SIGTERM of the arena."""
    # Installed under node_support's lock: a folder that merely exists may be another
    # worker's `npm ci` half way (the bot then found no @grpc/grpc-js).
    node_dependencies()
    node = shutil.which("node")
    assert node is not None  # node_dependencies skips without it
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "nod")
    port = _free_port()
    arena = start_arena(folder, "--port", str(port))
    cleanup.append(arena)
    env = _player_env("nod", tokens["nod"], arena.address)
    nod = _start_example("nod", [node, str(NODE_DIR / "bot.js")], env, tmp_path / "nod.log")
    cleanup.append(nod)
    cleanup.append(start_bot("ann", tokens["ann"], arena.address, tmp_path))
    wait_until(lambda: games_of(arena).get("nod", 0) >= 2, 60, "nod's first games")
    arena.stop(signal.SIGTERM)
    wait_until(lambda: "reconnecting in " in nod.output(), 30, "nod deciding to reconnect")
    arena = start_arena(folder, "--port", str(port))
    cleanup.append(arena)
    wait_until(lambda: "nod" in connected_sessions(arena), 60, "nod back by itself")
    wait_until(lambda: nod.output().count("connected to ") >= 2, 30, "nod saying it is back")
    assert nod.process.poll() is None, nod.output()
    assert nod.output().count("connected to ") == 2, nod.output()


def test_the_cpp_example_reconnects_after_shutdown_and_a_lost_stream_unless_told_not_to(
    tmp_path: Path, cleanup: list, cpp_bot: Path
) -> None:
    """example_bots/cpp/bot.cpp does as the SDK: it says what its session does, outlives
    SIGTERM and kill -9 of the arena, and with TACOCAT_BOT_RECONNECT=0 ends at the shutdown."""
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "cpp", "off")
    port = _free_port()
    arena = start_arena(folder, "--port", str(port))
    cleanup.append(arena)
    cpp = _start_example(
        "cpp", [str(cpp_bot)], _player_env("cpp", tokens["cpp"], arena.address),
        tmp_path / "cpp.log",
    )  # fmt: skip
    off = _start_example(
        "off", [str(cpp_bot)],
        {**_player_env("off", tokens["off"], arena.address), "TACOCAT_BOT_RECONNECT": "0"},
        tmp_path / "off.log",
    )  # fmt: skip
    cleanup += [cpp, off, start_bot("ann", tokens["ann"], arena.address, tmp_path)]
    wait_until(lambda: games_of(arena).get("cpp", 0) >= 2, 60, "cpp's first games")
    first = connected_sessions(arena)["cpp"]
    assert f"cpp bot cpp: connected to {arena.address}, session {first}" in cpp.output()

    # SIGTERM: SERVER_SHUTDOWN; "cpp" says so and waits to reconnect, "off" ends (status 0).
    arena.stop(signal.SIGTERM)
    wait_until(lambda: "reconnecting in " in cpp.output(), 30, "cpp deciding to reconnect")
    assert f"session {first} ended: server_shutdown" in cpp.output()
    assert off.process.wait(30) == 0, off.output()
    assert "ended: server_shutdown" in off.output() and "reconnecting" not in off.output()
    arena = start_arena(folder, "--port", str(port))
    cleanup.append(arena)
    wait_until(lambda: "cpp" in connected_sessions(arena), 60, "cpp back by itself")
    second = connected_sessions(arena)["cpp"]
    before = games_of(arena).get("cpp", 0)
    wait_until(lambda: games_of(arena).get("cpp", 0) >= before + 2, 60, "games after restart")

    # kill -9: the stream is lost; it says which session it lost and comes back again.
    arena.process.send_signal(signal.SIGKILL)
    arena.process.wait(10)
    wait_until(lambda: "lost the connection to" in cpp.output(), 30, "cpp noticing the loss")
    assert f"lost the connection to {arena.address}, session {second}" in cpp.output()
    arena = start_arena(folder, "--port", str(port))
    cleanup.append(arena)
    wait_until(lambda: "cpp" in connected_sessions(arena), 90, "cpp back after kill -9")
    wait_until(lambda: cpp.output().count(": connected to ") >= 3, 30, "cpp saying it is back")
    assert cpp.process.poll() is None, cpp.output()
    assert cpp.output().count(": connected to ") == 3, cpp.output()
