"""The gate looks like a game to a bot (issue 34, point 11's first gap).

A version used to be told it was in the gate by its name (``TACOCAT_ARENA_BOT=bot`` against
``PLAYER@vN`` in its games), its token's shape, the host path of its socket (in
``/proc/self/mountinfo``: ``tacocat-XXXX/check.sock``), bwrap's command line (``/proc/1/
cmdline``: the mounts and hidden paths), the clock (no time bank) and the referee's labels
(``tacocat-arena check``).  A spy package here records the shape of everything of that it can
read, in the gate and in its hosted games, over real uploads to a real arena; the gate's must
be one of the games'.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from arena_support import add_players, start_arena, wait_until

from tacocat_arena.launch.sandbox import bwrap_path

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap (bwrap) cannot sandbox here"),
]

REPO = Path(__file__).resolve().parent.parent
RANDOM = REPO / "example_bots" / "packages" / "python-random"

_SPY = r'''
import json, os, re, sys

import tacocat_bot.client as client
from example_bots.greedy_bot import GreedyBot
from tacocat_bot import run


def shape(text):
    """Digits and random runs (the parts that differ between any two games) made alike."""
    text = re.sub(r"tacocat-sock-[A-Za-z0-9_]+", "tacocat-sock-R", str(text))
    text = re.sub(r"^(s\d+)-[0-9a-f]{8}$", r"\1-T", text)  # a session id's process tag
    return re.sub(r"\d+", "9", text)


def note(kind, value):
    print("SEEN", json.dumps([kind, value]), file=sys.stderr, flush=True)


env = os.environ
token = env["TACOCAT_ARENA_TOKEN"]
note("name", re.sub(r"~B$", "", env["TACOCAT_ARENA_BOT"]))
note("env", sorted(env))
note("token", [len(token), bool(re.fullmatch(r"[A-Za-z0-9_-]+", token))])
note("socket", [shape(line.split()[3]) for line in open("/proc/self/mountinfo")
                if " /run/tacocat/arena.sock " in line])
note("pid 1", shape(open("/proc/1/cmdline", "rb").read().replace(b"\0", b" ").decode()))
note("limits", open("/proc/self/limits").read())
seen = set()
handle = client._handle


def spy(bot, message, *rest):
    case = message.WhichOneof("message")
    if case not in seen:
        seen.add(case)
        if case == "welcome":
            w = message.welcome
            note("welcome", [w.server_info, shape(w.session_id), w.decision_timeout_ms,
                             w.time_bank_ms, w.max_concurrent_games])
        elif case == "game_start":
            g = message.game_start
            note("game_start", [shape(g.game_id), bool(re.fullmatch(r"\w+@v\d+", g.opponent_name)),
                                g.decision_timeout_ms, g.time_bank_ms, shape(g.match_info)])
        elif case == "decision_request":
            r = message.decision_request
            note("request", [r.time_left_ms, r.time_bank_left_ms])
    return handle(bot, message, *rest)


client._handle = spy
run(GreedyBot())
'''


def _seen(log: str) -> dict[str, Any]:
    """The spy's notes in a log read while the bot may still write it: a line counts once it
    is whole (ends with a newline); the last one can be half written (an empty JSON once)."""
    found: dict[str, Any] = {}
    for line in log.splitlines(keepends=True):
        if line.startswith("SEEN ") and line.endswith("\n"):
            kind, value = json.loads(line[5:])
            found.setdefault(kind, json.dumps(value))
    return found


def test_nothing_a_bot_reads_tells_the_gate_from_its_games(tmp_path: Path) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "spy", "bob")
    package = tmp_path / "spy"
    package.mkdir()
    (package / "bot.toml").write_text('command = "python bot.py"\n')
    (package / "bot.py").write_text(_SPY)
    arena = start_arena(folder, "--move-timeout", "5", "--time-bank", "3", "--workers", "1")
    try:
        for player, path in (("bob", RANDOM), ("spy", package)):
            done = subprocess.run(
                [sys.executable, "-m", "tacocat_arena.cli", "submit", str(path), "--arena",
                 arena.web, "--token", tokens[player], "--wait", "--timeout", "150"],
                cwd=tmp_path, capture_output=True, text=True, timeout=200,
            )  # fmt: skip
            assert f"{player} v1: active" in done.stdout, done.stdout + done.stderr

        def games() -> dict[str, dict[str, Any]] | None:
            found = [p for p in folder.rglob("spy@v1*") if p.is_file()]  # not output/spy@v1/
            logs = {p.name: _seen(p.read_text(errors="replace")) for p in found}
            played = [s for n, s in logs.items() if not n.endswith(".check.log")]
            return logs if len(played) >= 2 and all("request" in s for s in played) else None

        logs = wait_until(games, 150, "hosted games of spy@v1 with the spy's notes")
    finally:
        arena.stop()
    gate = next(seen for name, seen in logs.items() if name.endswith(".check.log"))
    played = [seen for name, seen in logs.items() if not name.endswith(".check.log")]
    kinds = ("name", "env", "token", "socket", "pid 1", "limits", "welcome", "game_start")
    for kind in (*kinds, "request"):
        assert kind in gate, (kind, gate)
        shown_in_games = {seen[kind] for seen in played}
        assert gate[kind] in shown_in_games, (kind, gate[kind], shown_in_games)
    assert json.loads(gate["name"]) == "spy@v1"
    assert "tacocat-sock-R/arena.sock" in gate["socket"]
    assert json.loads(gate["welcome"])[3] == 3000  # the arena's time bank, announced
    assert shutil.which("bwrap") in json.loads(gate["pid 1"])
