"""The C++ example bot (example_bots/cpp) builds from proto/ and plays by the protocol.

The bot is built once per test session by the ``cpp_bot`` fixture (tests/cpp_support.py:
skipped with the reason where there is no C++ gRPC toolchain), as a user would build it, then
checked and played in a real tournament.  Its reconnecting to a restarted ``serve`` is tested
with the SDK's, in test_sdk_sessions.py.
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
from check_support import REPO_ROOT, run_check, statuses
from verify_support import assert_verifies  # tests/ (pytest pythonpath)

from tacocat_arena.engine import DEFAULT_RULESET
from tacocat_arena.referee import ClockSettings, Referee, RefereeSettings, start_server, stop_server

pytestmark = [pytest.mark.slow]


def test_the_cpp_bot_passes_every_check(cpp_bot: Path) -> None:
    code, report = run_check(str(cpp_bot))
    assert code == 0, report
    assert set(statuses(report).values()) == {"pass"}  # batches included: it accepts them


def test_the_cpp_bot_plays_a_tournament_against_python_greedy(
    cpp_bot: Path, tmp_path: Path
) -> None:
    # The sandbox shows a bot its own folder only: the binary goes where the tournament runs.
    shutil.copy(cpp_bot, tmp_path / cpp_bot.name)
    out = tmp_path / "out"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tacocat_arena.cli",
            "run",
            "--bot",
            f"cpp=./{cpp_bot.name}",
            "--bot",
            "greedy=builtin:greedy",
            "--games",
            "6",
            "--out",
            str(out),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = {row["bot"]: row for row in csv.DictReader((out / "standings.csv").open())}
    assert set(rows) == {"cpp", "greedy"}
    assert rows["cpp"]["games"] == "6" and rows["cpp"]["forfeits"] == "0"
    assert rows["cpp"]["errors"] == "0"  # every move was its own
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(games) == 6
    assert {game["reason"] for game in games} <= {"goal", "round_cap"}
    assert_verifies(out)


def test_the_cpp_bot_marks_the_fallback_moves_it_plays_when_its_code_throws(
    cpp_bot: Path,
) -> None:
    """think() throwing on every attack: the bot still answers, with the first legal attack,
    and says so in Action.fallback; the referee records each one and counts them for it."""

    async def main() -> list[object]:
        tokens = {"cpp": "cpp-secret", "greedy": "greedy-secret"}
        referee = Referee(tokens, RefereeSettings(clock=ClockSettings(decision_ms=2000)))
        server, port = await start_server(referee)
        bots = []
        for name, argv, extra in (
            ("cpp", [str(cpp_bot)], {"TACOCAT_BOT_FAIL": "attack"}),
            ("greedy", [sys.executable, "-m", "example_bots.greedy_bot"], {}),
        ):
            env = dict(
                os.environ,
                TACOCAT_ARENA_ADDRESS=f"127.0.0.1:{port}",
                TACOCAT_ARENA_TOKEN=tokens[name],
                TACOCAT_ARENA_BOT=name,
                **extra,
            )
            bots.append(
                await asyncio.create_subprocess_exec(
                    *argv,
                    env=env,
                    cwd=REPO_ROOT,
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.DEVNULL,
                )
            )
        try:
            for name in tokens:
                await referee.wait_for_session(name, 30)
            reports = [
                await referee.play(f"f{i}", names, seed=77, ruleset=DEFAULT_RULESET)
                for i, names in enumerate([("cpp", "greedy"), ("greedy", "cpp")])
            ]
            await referee.end_all_sessions("tournament over")
            for process in bots:
                await asyncio.wait_for(process.wait(), 20)
        finally:
            for process in bots:
                if process.returncode is None:
                    process.kill()
            await stop_server(server, 1)
        return list(reports)

    for report in asyncio.run(main()):
        seat = report.seats.index("cpp")  # type: ignore[attr-defined]
        actions = report.record["actions"]  # type: ignore[attr-defined]
        attacks = [e for e in actions if e.get("seat") == seat and "attack" in e]
        assert attacks and all(
            e["fallback"] == "think() threw TACOCAT_BOT_FAIL=attack" for e in attacks
        ), attacks
        assert not any("fallback" in e for e in actions if "attack" not in e)
        assert report.fallbacks == (  # type: ignore[attr-defined]
            (len(attacks), 0) if seat == 0 else (0, len(attacks))
        )
