"""What a newcomer trips over, through the real CLI in a subprocess (issue 14).

Each test is one thing that went wrong for a new user, run as they ran it: a clear
``Error:`` line instead of a traceback, nothing left behind by a refused command, tables that
say what they mean.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest


def arena(
    *args: object, cwd: Path, timeout: float = 120, **env: str
) -> subprocess.CompletedProcess[str]:
    """``tacocat-arena ARGS`` in a subprocess, output captured (so stdout is not a terminal)."""
    environment = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", *map(str, args)],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_serve_on_a_port_in_use_is_a_one_line_error(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text('alice = "alice-secret"\nbob = "bob-secret-1"\n')
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = arena("serve", "--port", port, "--tokens", tokens, "--wait", 1, cwd=tmp_path)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert f"Error: cannot listen on 127.0.0.1:{port}: the port is already in use" in done.stderr


def test_a_second_referee_on_the_same_port_is_refused_not_sharing_it() -> None:
    import asyncio

    from tacocat_arena.referee import ListenError, Referee, RefereeSettings, start_server

    async def scenario() -> None:
        first, port = await start_server(Referee({}, RefereeSettings()), "127.0.0.1", 0)
        try:
            with pytest.raises(ListenError, match=f"127.0.0.1:{port}"):
                await start_server(Referee({}, RefereeSettings()), "127.0.0.1", port)
        finally:
            await first.stop(None)

    asyncio.run(scenario())
