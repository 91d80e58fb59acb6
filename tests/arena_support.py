"""Helpers of the arena tests: ``tacocat-arena serve`` and bots as real processes on loopback.

Nothing is mocked: the server is the CLI in a subprocess (referee and web page on 127.0.0.1,
free ports), each bot is tests/bots/ladder_bot.py in its own process, and every wait is
bounded.  ``ArenaProcess`` and ``BotProc`` are context-managed or stopped by the fixtures'
finalizers, so no process outlives its test.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cli_support import invoke_cli
from process_support import RealProcess, start_process

from tacocat_bot.client import RECONNECT_ENV

LADDER_BOT = Path(__file__).resolve().parent / "bots" / "ladder_bot.py"
#: A ladder bot's think time per decision unless a test gives its own: an arena plays its
#: games back to back for as long as its test runs (pages read, browsers driven, restarts),
#: and with bots that answer at once that kept a core busy with games nobody looked at.
#: 10 ms a decision (~0.2 s a game a seat) still plays a few games a second.
PACE_S = 0.01


@dataclass
class ArenaProcess:
    """A running ``tacocat-arena serve --dir DIR`` (a tests/process_support.py RealProcess) and
    the addresses it printed."""

    real: RealProcess
    folder: Path
    address: str = ""
    web: str = ""

    @property
    def process(self) -> subprocess.Popen[bytes]:
        return self.real.popen

    @property
    def lines(self) -> list[str]:
        """Every line the server printed so far."""
        return self.real.lines()

    def output(self) -> str:
        return self.real.output()

    def get(self, path: str, timeout: float = 10.0) -> bytes:
        """GET ``path`` from the web page; the body (raises for a status >= 400)."""
        with urllib.request.urlopen(self.web + path, timeout=timeout) as response:
            return response.read()

    def json(self, path: str) -> Any:
        """GET ``path`` and parse it as JSON."""
        return json.loads(self.get(path))

    def status(self, path: str) -> int:
        """The HTTP status of GET ``path``."""
        try:
            with urllib.request.urlopen(self.web + path, timeout=10) as response:
                return int(response.status)
        except urllib.error.HTTPError as error:
            return error.code

    def wait(self, timeout: float) -> str:
        """Wait for the server to end on its own; everything it printed."""
        self.real.wait(timeout)
        return self.real.output()

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> str:
        """Signal the server (SIGKILL for its whole group after ``timeout`` s); everything it
        printed."""
        self.real.stop(sig, grace=timeout)
        return self.real.output()


def start_arena(
    folder: Path, *args: str, timeout: float = 30.0, open_files: int | None = None
) -> ArenaProcess:
    """Start ``serve --dir folder`` on free ports; return once both addresses are printed.
    ``open_files``: the server's RLIMIT_NOFILE (as on a machine with the usual 1,024)."""
    command = [
        sys.executable, "-m", "tacocat_arena.cli", "serve", "--dir", str(folder),
        "--port", "0", "--web", "127.0.0.1:0", *args,
    ]  # fmt: skip

    if open_files is not None:
        # prlimit rather than a preexec_fn: a Python hook forces a plain fork of this gRPC-using
        # process, whose fork handlers can leave the child broken before it execs (seen in CI:
        # "epoll_wait error: Bad file descriptor"); without one, the child is spawned by vfork.
        command = ["prlimit", f"--nofile={open_files}:{open_files}", "--", *command]
    # The logs go beside the arena's folder, not into it (the tests look at what is inside).
    real = start_process(
        command,
        name="arena",
        log_dir=folder.parent / "process-logs",
        ready=re.compile(r"^arena: .*^web: [^\n]*\n", re.MULTILINE | re.DOTALL),
        ready_timeout=timeout,
    )
    arena = ArenaProcess(real, folder)
    for line in real.lines():
        if line.startswith("arena: ") and not arena.address:
            arena.address = line.split()[1]
        elif line.startswith("web: ") and not arena.web:
            arena.web = line.split()[1].rstrip("/")
    return arena


@dataclass
class BotProc:
    """One ladder bot process (a tests/process_support.py RealProcess)."""

    name: str
    real: RealProcess

    @property
    def process(self) -> subprocess.Popen[bytes]:
        return self.real.popen

    @property
    def log(self) -> Path:
        return self.real.log

    def kill(self) -> None:
        """SIGKILL the bot (its connection drops as when a student's laptop dies)."""
        self.real.kill()

    def output(self) -> str:
        """What the bot printed so far."""
        return self.real.output()


def start_bot(
    name: str,
    token: str,
    address: str,
    log_dir: Path,
    *,
    delay: float = PACE_S,
    seed: int = 1,
    script: Path | None = None,
    env: dict[str, str] | None = None,
    reconnect: bool | None = None,
) -> BotProc:
    """Start tests/bots/ladder_bot.py (or ``script``) as player ``name``, with ``env`` added
    to this environment; ``reconnect`` False or True sets the SDK's TACOCAT_BOT_RECONNECT
    (None leaves the SDK's own choice: reconnecting, to a loopback TCP address)."""
    env = {**os.environ, **(env or {})}
    if reconnect is not None:
        env[RECONNECT_ENV] = "1" if reconnect else "0"
    env.update(
        TACOCAT_ARENA_ADDRESS=address,
        TACOCAT_ARENA_BOT=name,
        TACOCAT_ARENA_TOKEN=token,
        LADDER_BOT_DELAY=str(delay),
        LADDER_BOT_SEED=str(seed),
    )
    real = start_process(
        [sys.executable, str(script or LADDER_BOT)], name=f"bot {name}", log_dir=log_dir, env=env
    )
    return BotProc(name, real)


def start_bots(
    tokens: Mapping[str, str],
    address: str,
    log_dir: Path,
    *,
    names: Iterable[str] | None = None,
    delay: float = PACE_S,
    reconnect: bool | None = None,
) -> list[BotProc]:
    """One ladder bot (``start_bot``) for each player of ``tokens``, or for ``names`` of them,
    started in that order.  ``reconnect=False`` is how every launcher starts its bots: a bot
    then ends when the arena stops or its stream breaks, instead of outliving a restart.  If
    one fails to start, those already started are killed."""
    bots: list[BotProc] = []
    try:
        for name in tokens if names is None else names:
            bots.append(
                start_bot(name, tokens[name], address, log_dir, delay=delay, reconnect=reconnect)
            )
    except BaseException:
        for bot in bots:
            bot.kill()
        raise
    return bots


def wait_until(
    condition: Callable[[], Any], timeout: float, what: str, interval: float = 0.1
) -> Any:
    """Poll ``condition`` until it returns something truthy; AssertionError after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def games_of(arena: ArenaProcess) -> dict[str, int]:
    """Finished games per bot, from /api/leaderboard."""
    return {row["bot"]: row["games"] for row in arena.json("/api/leaderboard")}


def add_players(folder: Path, *names: str) -> dict[str, str]:
    """``players add`` each name through the CLI, in this process (``CliRunner``: the same
    command, without a Python start and the CLI's imports a player, ~0.2 s of CPU each;
    test_arena_trust runs it as a process beside a running server); return name -> token."""
    tokens = {}
    for name in names:
        done = invoke_cli("players", "add", name, "--dir", folder, cwd=Path.cwd())
        assert done.returncode == 0, done.stdout + done.stderr
        tokens[name] = done.stdout.strip().splitlines()[-1]
    return tokens


def hidden_groups(record: dict[str, Any]) -> set[tuple[int, ...]]:
    """Every hidden group of cards of a record (each deal's hands and draw pile), of 5+."""
    groups: set[tuple[int, ...]] = set()
    for event in record["events"]:
        if event["type"] == "deal":
            groups.update(tuple(hand) for hand in event["hands"])
            groups.add(tuple(event["draw_pile"]))
    return {group for group in groups if len(group) >= 5}


def group_texts(group: tuple[int, ...]) -> set[str]:
    """A group of cards as a page or JSON could print it."""
    return {
        json.dumps(list(group)),
        json.dumps(list(group), separators=(",", ":")),
        " ".join(map(str, group)),
        "\n".join(map(str, group)),
    }


def hidden_strings(record: dict[str, Any]) -> set[str]:
    """Every hidden group of cards of a record, as a page or JSON could print it."""
    return {text for group in hidden_groups(record) for text in group_texts(group)}


def fetch(web: str, path: str, *, stream_s: float = 1.0, timeout: float = 10.0) -> bytes:
    """Everything the web server sends for GET ``path``: status line, headers and body
    (de-chunked; an event stream is read for ``stream_s`` seconds, then dropped)."""
    host, _, port = web.removeprefix("http://").partition(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        head = f"{response.status} {response.reason}\n{response.msg}".encode()
        if response.getheader("content-type", "").startswith("text/event-stream"):
            body = bytearray()

            def read() -> None:
                with contextlib.suppress(OSError, http.client.HTTPException, ValueError):
                    while chunk := response.read1(65536):
                        body.extend(chunk)

            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            reader.join(stream_s)
            assert connection.sock is not None
            connection.sock.shutdown(socket.SHUT_RDWR)  # ends the read (and the stream)
            reader.join(timeout)
            return head + bytes(body)
        return head + response.read()
    finally:
        connection.close()


def submit(
    package: Path, arena: ArenaProcess, token: str, cwd: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    """``tacocat-arena submit PACKAGE --wait`` from ``cwd`` (another folder than the arena's)."""
    return subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", "submit", str(package), "--arena", arena.web,
         "--token", token, "--wait", "--timeout", "120", *extra],
        cwd=cwd, capture_output=True, text=True, timeout=180,
    )  # fmt: skip


def submit_in_process(
    package: Path, arena: ArenaProcess, token: str, cwd: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    """``submit`` as the same command through Click in this process (from ``cwd``, over real
    HTTP to the arena's process): what a test of the arena's intake needs, without a Python
    start and the CLI's imports (~0.3 s of CPU a submit); ``submit`` runs it as a process."""
    argv = ["submit", str(package), "--arena", arena.web, "--token", token, "--wait",
            "--timeout", "120", *extra]  # fmt: skip
    return invoke_cli(*argv, cwd=cwd)


def submitted(package: Path, arena: ArenaProcess, token: str, cwd: Path) -> str:
    """``submit``, which must succeed: what it printed."""
    done = submit(package, arena, token, cwd)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def post(web: str, path: str, body: bytes, token: str | None = None) -> tuple[int, Any]:
    """POST ``body`` (JSON) to ``path`` of the web server, with ``token`` as its bearer when
    given: the status and the answer, parsed as JSON where it is (else its text)."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(web + path, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        raw = error.read()
        try:
            return error.code, json.loads(raw)
        except ValueError:
            return error.code, raw.decode(errors="replace")


def post_json(web: str, path: str, body: Any, token: str | None = None) -> tuple[int, Any]:
    """``post`` of ``body`` written as JSON."""
    return post(web, path, json.dumps(body).encode(), token)


def connected_sessions(arena: ArenaProcess) -> dict[str, str]:
    """Bot name -> session id of every connected bot, from /api/connections."""
    return {c["bot"]: c["session"] for c in arena.json("/api/connections")["connected"]}
