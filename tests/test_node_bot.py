"""The JavaScript example bot (example_bots/node) plays real games over gRPC.

Needs Node.js and npm on PATH; skipped, with the reason, otherwise.  The bot's dependencies
are installed here (``npm ci`` in example_bots/node, from its package-lock.json) when they are
missing, so the README's test command needs no set-up of its own.  The bot runs as a subprocess
exactly as a tournament would start it, with TACOCAT_ARENA_ADDRESS, TACOCAT_ARENA_TOKEN and
TACOCAT_ARENA_BOT in its environment.
"""

from __future__ import annotations

import asyncio
import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from node_support import node_dependencies
from verify_support import assert_verifies  # tests/ (pytest pythonpath)

from tacocat_arena.engine import DEFAULT_RULESET, Termination, replay
from tacocat_arena.referee import ClockSettings, Referee, RefereeSettings, start_server, stop_server

REPO_ROOT = Path(__file__).resolve().parents[1]
NODE_DIR = REPO_ROOT / "example_bots" / "node"
NODE_BOT = NODE_DIR / "bot.js"
GREEDY_BOT = REPO_ROOT / "example_bots" / "greedy_bot.py"
NODE_PATH = shutil.which("node")
NODE = NODE_PATH or "node"


NPM = shutil.which("npm")


@pytest.fixture(scope="module", autouse=True)
def node_bot_dependencies() -> None:
    """Skip without Node.js; install the bot's locked dependencies once if they are missing."""
    node_dependencies()


pytestmark = [pytest.mark.slow]

NORMAL_ENDINGS = (Termination.GOAL, Termination.ROUND_CAP)


async def _start_bot(
    argv: list[str], port: int, name: str, token: str, **extra_env: str
) -> asyncio.subprocess.Process:
    env = dict(
        os.environ,
        TACOCAT_ARENA_ADDRESS=f"127.0.0.1:{port}",
        TACOCAT_ARENA_TOKEN=token,
        TACOCAT_ARENA_BOT=name,
        **extra_env,
    )
    return await asyncio.create_subprocess_exec(
        *argv,
        env=env,
        cwd=REPO_ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def _finish(process: asyncio.subprocess.Process, timeout: float = 20) -> tuple[int, str]:
    """Wait for a bot to exit (without blocking the referee's loop); its status and output."""
    try:
        out, err = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        process.kill()
        out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, (out + err).decode(errors="replace")


def test_node_bot_plays_greedy_sdk_bot() -> None:
    """Concurrent games, both seats, node vs the Python SDK's greedy bot, then self-play
    (one session on both seats of a game): every game ends normally and replays."""

    async def main() -> None:
        tokens = {"node": "node-secret", "greedy": "greedy-secret"}
        referee = Referee(tokens, RefereeSettings(clock=ClockSettings(decision_ms=2000)))
        server, port = await start_server(referee)
        node = await _start_bot([NODE, str(NODE_BOT)], port, "node", tokens["node"])
        greedy = await _start_bot(
            [sys.executable, str(GREEDY_BOT)], port, "greedy", tokens["greedy"]
        )
        try:
            await referee.wait_for_session("node", 30)
            await referee.wait_for_session("greedy", 30)
            games = [
                referee.play(
                    f"g{i}",
                    ("node", "greedy") if i % 2 == 0 else ("greedy", "node"),
                    seed=1000 + i // 2,
                    ruleset=DEFAULT_RULESET,
                )
                for i in range(8)
            ]
            games += [
                referee.play(f"self{i}", ("node", "node"), seed=2000 + i, ruleset=DEFAULT_RULESET)
                for i in range(2)
            ]
            reports = await asyncio.wait_for(asyncio.gather(*games), 120)
            await referee.end_all_sessions("tournament over")
            (node_status, node_output), (greedy_status, greedy_output) = await asyncio.gather(
                _finish(node), _finish(greedy)
            )
        finally:
            for process in (node, greedy):
                if process.returncode is None:
                    process.kill()
            await stop_server(server, 1)

        for report in reports:
            assert report.outcome.termination in NORMAL_ENDINGS, (report.game_id, report.detail)
            assert report.forfeit_by is None
            assert report.rounds >= 1 and min(report.decisions) >= 1
            replay(report.record)  # the record is legal and its events/result hold
        # The two seatings of each seed are scored from the node bot's side: it won some.
        node_wins = sum(
            1
            for r in reports[:8]
            if r.outcome.winner is not None and r.seats[r.outcome.winner] == "node"
        )
        assert 0 < node_wins < 8
        assert node_status == 0, node_output
        assert greedy_status == 0, greedy_output
        assert "session over" in node_output

    asyncio.run(main())


def test_node_bot_whose_decide_throws_marks_its_fallbacks() -> None:
    """decide() throwing on every attack: the bot still answers, with its default attack, and
    says so in Action.fallback; the referee records each one and counts them for the bot."""

    async def main() -> None:
        tokens = {"node": "node-secret", "greedy": "greedy-secret"}
        referee = Referee(tokens, RefereeSettings(clock=ClockSettings(decision_ms=2000)))
        server, port = await start_server(referee)
        node = await _start_bot(
            [NODE, str(NODE_BOT)], port, "node", tokens["node"], TACOCAT_BOT_FAIL="attack"
        )
        greedy = await _start_bot(
            [sys.executable, str(GREEDY_BOT)], port, "greedy", tokens["greedy"]
        )
        try:
            await referee.wait_for_session("node", 30)
            await referee.wait_for_session("greedy", 30)
            seatings = [("node", "greedy"), ("greedy", "node")]
            reports = [
                await referee.play(f"f{i}", names, seed=77, ruleset=DEFAULT_RULESET)
                for i, names in enumerate(seatings)
            ]
            await referee.end_all_sessions("tournament over")
            await asyncio.gather(_finish(node), _finish(greedy))
        finally:
            for process in (node, greedy):
                if process.returncode is None:
                    process.kill()
            await stop_server(server, 1)
        for report in reports:
            seat = report.seats.index("node")
            attacks = [
                e for e in report.record["actions"] if e.get("seat") == seat and "attack" in e
            ]
            assert attacks and all(
                e["fallback"] == "decide() threw Error: TACOCAT_BOT_FAIL=attack" for e in attacks
            ), attacks
            assert not any("fallback" in e for e in report.record["actions"] if "attack" not in e)
            assert report.fallbacks[seat] == len(attacks) and report.fallbacks[1 - seat] == 0
            assert report.forfeit_by is None

    asyncio.run(main())


def test_node_bot_with_wrong_token_exits_non_zero() -> None:
    async def main() -> tuple[int, str]:
        referee = Referee({"node": "right-token"}, RefereeSettings())
        server, port = await start_server(referee)
        try:
            process = await _start_bot([NODE, str(NODE_BOT)], port, "node", "wrong-token")
            return await _finish(process)
        finally:
            await stop_server(server, 1)

    status, output = asyncio.run(main())
    assert status != 0
    assert "UNAUTHENTICATED" in output


def test_node_bot_in_a_cli_tournament(tmp_path: Path) -> None:
    """A real tournament through the command line: node vs the built-in greedy bot."""
    command = [
        sys.executable,
        "-m",
        "tacocat_arena.cli",
        "run",
        "--bot",
        "node=node example_bots/node/bot.js",
        "--bot",
        "greedy=builtin:greedy",
        "--games",
        "4",
        "--seed",
        "3",
        "--out",
        str(tmp_path),
    ]
    completed = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert (tmp_path / "standings.csv").is_file(), (
        "`python -m tacocat_arena.cli run` wrote no results (does tacocat_arena/cli/__main__.py "
        "call main()?)\n" + completed.stdout + completed.stderr
    )

    with open(tmp_path / "standings.csv", newline="", encoding="utf-8") as handle:
        standings = {row["bot"]: row for row in csv.DictReader(handle)}
    assert set(standings) == {"node", "greedy"}
    for row in standings.values():
        assert int(row["games"]) == 4
        assert int(row["forfeits"]) == 0

    lines = (tmp_path / "games.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4
    for line in lines:
        game = json.loads(line)
        assert sorted(game["seats"]) == ["greedy", "node"]
        assert game["reason"] in ("goal", "round_cap"), game.get("detail")
        replay(game["record"])
    assert_verifies(tmp_path)


def test_the_node_bot_passes_tacocat_arena_check() -> None:
    from check_support import run_check

    code, report = run_check(f"{NODE} {NODE_BOT}")
    outcome = {r["name"]: r["status"] for r in report["results"]}
    assert code == 0, report
    # The Node bot does not opt in to batches; every other check passes.
    assert {name for name, status in outcome.items() if status != "pass"} == {"batches"}


def test_node_example_copied_as_its_header_says_plays(tmp_path: Path) -> None:
    """`cp -r example_bots/node mybot` (issue 37): the copy holds its own arena.proto (a
    link to ../../proto broke), so it plays from wherever it was copied."""
    subprocess.run(["cp", "-r", str(NODE_DIR), str(tmp_path / "mybot")], check=True)
    assert (tmp_path / "mybot" / "proto" / "tacocat" / "v1" / "arena.proto").is_file()
    command = [
        sys.executable, "-m", "tacocat_arena.cli", "play", "node mybot/bot.js", "greedy",
        "--games", "2", "--out", str(tmp_path / "out"), "--quiet",
    ]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = list(csv.DictReader((tmp_path / "out" / "standings.csv").open()))
    assert {row["bot"] for row in rows} == {"bot", "greedy"}, rows
    assert all(int(row["games"]) == 2 for row in rows), rows
