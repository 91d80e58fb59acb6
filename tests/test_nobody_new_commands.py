"""Session 9's commands as an ordinary user (uid 65534, no root groups, its own folder): a
runner that is root in CI would hide a file it cannot write or a sandbox it cannot start.
``serve --event swiss --notify`` plays its event, POSTs its summary and a person's challenge
of an example bot starts its bot; ``verify`` re-checks the arena (its people's games too);
``play human`` plays (the person leaves: lost on the clock, results written) and, in a
folder the user may not write, says so before it prints a page's address."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import tempfile
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from nobody_support import NOBODY, as_nobody, python_for_nobody
from process_support import start_process

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="the bots start under bwrap"),
    pytest.mark.skipif(os.geteuid() != 0, reason="only root can start a process as uid 65534"),
]

LADDER_BOT = Path(__file__).resolve().parent / "bots" / "ladder_bot.py"


@pytest.fixture
def nobody() -> Iterator[tuple[list[str], Path]]:
    """The command prefix of a Python run as uid 65534, and a folder of that user's."""
    base = Path(tempfile.mkdtemp(prefix="tacocat-nobody-"))  # outside root's 0700 tmp
    try:
        base.chmod(0o755)
        home = base / "home"
        home.mkdir()
        os.chown(home, NOBODY, NOBODY)
        yield as_nobody(python_for_nobody(base)), home
    finally:
        shutil.rmtree(base, ignore_errors=True)


class _Hook(http.server.BaseHTTPRequestHandler):
    bodies: list[Any] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        size = int(self.headers.get("Content-Length", "0"))
        self.bodies.append(json.loads(self.rfile.read(size)))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def _first_request(web: str, page: str) -> dict[str, Any]:
    """The page's first state that asks the person something (the bot is up, the referee
    dealt)."""
    with urllib.request.urlopen(web + page + "events", timeout=60) as stream:
        for _ in range(200):  # bounded: a state or a keep-alive comes every 10 s at most
            line = stream.readline()
            if not line:
                break  # the stream ended (the server stopped) before any request
            if line.startswith(b"data: "):
                state = json.loads(line[6:])
                if state["request"] is not None or state["finished"]:
                    return state
    raise AssertionError("the page's stream sent no request")


def test_serve_swiss_with_notify_and_a_challenge_run_as_an_ordinary_user(
    nobody: tuple[list[str], Path], tmp_path: Path
) -> None:
    prefix, home = nobody
    cli = [*prefix, "-m", "tacocat_arena.cli"]
    folder = home / "arena"
    tokens = {}
    for name in ("ann", "ben"):
        added = start_process([*cli, "players", "add", name, "--dir", str(folder)],
                              name="players", log_dir=tmp_path, cwd=home)  # fmt: skip
        assert added.wait(60) == 0, added.output()
        tokens[name] = added.lines()[-1].strip()
    hook = http.server.HTTPServer(("127.0.0.1", 0), _Hook)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    _Hook.bodies = []
    try:
        arena = start_process(
            [*cli, "serve", "--dir", str(folder), "--port", "0", "--web", "127.0.0.1:0",
             "--move-timeout", "5", "--event", "swiss", "--rounds", "1", "--games", "2",
             "--start-after", "120", "--start-with", "2",
             "--notify", f"http://127.0.0.1:{hook.server_port}/"],
            name="arena", log_dir=tmp_path, cwd=home, ready="web: ", ready_timeout=60,
        )  # fmt: skip
        address = next(x.split()[1] for x in arena.lines() if x.startswith("arena: "))
        web = next(x.split()[1] for x in arena.lines() if x.startswith("web: ")).rstrip("/")
        # A person's game (ann, by her token) against an example bot, started by this user,
        # before the bots connect: the event starts once both are connected (--start-with),
        # and serve ends with it.
        request = urllib.request.Request(
            web + "/api/human/challenges", data=b'{"opponent": "random"}', method="POST",
            headers={"Authorization": f"Bearer {tokens['ann']}"},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=60) as answer:
            started = json.loads(answer.read())
        state = _first_request(web, started["url"])
        assert state["request"] is not None and state["opponent"] == "random", state
        for name, token in tokens.items():
            env = {**os.environ, "TACOCAT_ARENA_ADDRESS": address, "TACOCAT_ARENA_BOT": name,
                   "TACOCAT_ARENA_TOKEN": token, "TACOCAT_BOT_RECONNECT": "0"}  # fmt: skip
            start_process([*prefix, str(LADDER_BOT)], name=f"bot {name}", log_dir=tmp_path,
                          env=env, cwd=home)  # fmt: skip
        assert arena.wait(240) == 0, arena.output()  # the event over, serve ends
    finally:
        hook.shutdown()
        hook.server_close()
    output = arena.output()
    assert "Traceback" not in output, output[-3000:]
    (summary,) = _Hook.bodies
    assert summary["format"] == "swiss" and summary["complete"] is True, summary
    assert {row["bot"] for row in summary["standings"]} == {"ann", "ben"}, summary
    checked = start_process([*cli, "verify", str(folder)], name="verify", log_dir=tmp_path,
                            cwd=home)  # fmt: skip
    assert checked.wait(120) == 0, checked.output()
    assert "played by hand" in checked.output(), checked.output()


def test_play_human_as_an_ordinary_user(nobody: tuple[list[str], Path], tmp_path: Path) -> None:
    prefix, home = nobody
    cli = [*prefix, "-m", "tacocat_arena.cli", "play", "human", "random", "--no-browser"]
    # A working folder the user may not write: said before any page is served.
    refused = start_process(cli, name="play human", log_dir=tmp_path, cwd=home.parent)
    assert refused.wait(60) == 1, refused.output()
    assert "cannot be written (Permission denied)" in refused.output(), refused.output()
    assert "Play in your browser" not in refused.output(), refused.output()
    # Its own folder: the page is served, the bot asked, the person leaves and loses.
    played = start_process(
        [*cli, "--human-move-timeout", "2"], name="play human", log_dir=tmp_path, cwd=home,
        ready="Play in your browser: ",
    )  # fmt: skip
    shown = next(x for x in played.lines() if x.startswith("Play in your browser: "))
    url = urlsplit(shown.split()[-1])
    state = _first_request(f"http://{url.netloc}", url.path)
    assert state["request"] is not None, state
    assert played.wait(120) == 0, played.output()
    assert "you lost by timeout" in played.output(), played.output()
    (results,) = (home / "tacocat-results" / "human").iterdir()
    assert (results / "results.json").is_file() and results.stat().st_uid == NOBODY
