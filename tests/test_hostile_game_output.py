"""A hosted bot's output must not tell its owner the deal of a game still in play: the arena
holds a duplicate pair's games until both are over, and the owner's report (its processes'
log ends, its games' outputs) must hold what the bot printed in them as long.

Two hosted versions that print each game's id as it starts play batches on a real ``serve``;
the owner reads ``/api/players/NAME/failures`` over real HTTP while they play.  Every game
named in what the report shows must be published (``/api/games``) by then."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import arena_support
import pytest
from arena_support import add_players

from tacocat_arena.launch.sandbox import bwrap_path

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap (bwrap) cannot sandbox here"),
]

TELLER = """\
import sys
from example_bots.greedy_bot import GreedyBot
from tacocat_bot import run

class Teller(GreedyBot):
    name = "teller"

    def on_game_start(self, game_id, seat, opponent):
        print(f"GAME {game_id} STARTED, my cards are ...", file=sys.stderr, flush=True)

run(Teller())
"""


def _report(web: str, player: str, token: str) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{web}/api/players/{player}/failures", headers={"Authorization": f"Bearer {token}"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return dict(json.loads(response.read()))


def _published(arena: arena_support.ArenaProcess) -> set[str]:
    return {g["id"] for g in arena.json("/api/games?limit=200") if not g["live"]}


def test_a_hosted_bots_output_of_a_game_in_play_is_held_from_its_owner(tmp_path: Path) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "newt", "tess")
    arena = arena_support.start_arena(folder, "--move-timeout", "5", "--workers", "1")
    package = tmp_path / "teller"
    package.mkdir()
    (package / "bot.toml").write_text('command = "python bot.py"\n')
    (package / "bot.py").write_text(TELLER)
    try:
        for player in ("newt", "tess"):
            done = subprocess.run(
                [sys.executable, "-m", "tacocat_arena.cli", "submit", str(package),
                 "--arena", arena.web, "--token", tokens[player], "--wait", "--timeout", "240"],
                cwd=tmp_path, capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            assert done.returncode == 0 and "active" in done.stdout, done.stdout + done.stderr
        leaked: dict[str, str] = {}
        seen_in_games: set[str] = set()
        deadline = time.monotonic() + 180  # bounded: batches of both versions play meanwhile
        while time.monotonic() < deadline:
            report = _report(arena.web, "newt", tokens["newt"])
            published = _published(arena)  # after the report: a superset of what it was then
            for entry in report["output"]:
                for game in re.findall(r"GAME (\S+) STARTED", entry["output"]):
                    if game not in published:
                        leaked[game] = entry["process"]
            for entry in report["game_output"]:
                seen_in_games.update(re.findall(r"GAME (\S+) STARTED", entry["output"]))
                assert entry["game"] in published, entry["game"]
            if leaked or len(seen_in_games) >= 8:
                break
            time.sleep(0.1)
        assert not leaked, f"the owner read output of games still in play: {leaked}"
        assert seen_in_games, "no game's output was shown at all"
        assert "Traceback" not in arena.output(), arena.output()[-3000:]
    finally:
        arena.stop()
