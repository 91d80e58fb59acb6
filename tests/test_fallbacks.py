"""A bot whose code fails shows it (issue 30): a bot whose ``attack`` raises on every call is
covered by its SDK's default move, which says so in ``Action.fallback``; the referee records
each such move, the standings, the report and the arena count them as "errors", and
``tacocat-arena check`` fails on the first.  Real CLI, real bot processes, loopback gRPC."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from check_support import REPO_ROOT, run_check

pytestmark = [pytest.mark.slow]

RAISING_BOT = "python tests/bots/raising_bot.py"


def _play(out: Path, *bots: str, games: int = 4) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", "play", *bots, "--games", str(games)]
        + ["--out", str(out), "--quiet"],
        cwd=REPO_ROOT,
        env=dict(os.environ, COLUMNS="300"),
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_a_bot_whose_attack_raises_is_counted_in_the_record_standings_and_report(
    tmp_path: Path,
) -> None:
    out = tmp_path / "match"
    done = _play(out, RAISING_BOT, "builtin:random")
    assert done.returncode == 0, done.stderr
    with (out / "standings.csv").open() as handle:
        rows = {row["bot"]: row for row in csv.DictReader(handle)}
    (raising,) = [name for name in rows if name != "random"]
    fallbacks = {raising: 0, "random": 0}
    attacks = 0
    for line in (out / "games.jsonl").read_text().splitlines():
        game = json.loads(line)
        seats = game["seats"]
        for entry in game["record"]["actions"]:
            if "fallback" in entry:
                fallbacks[seats[entry["seat"]]] += 1
                assert "attack" in entry
                assert entry["fallback"].startswith("attack() raised IndexError")
            if "attack" in entry and seats[entry["seat"]] == raising:
                attacks += 1
    # Every attack of the raising bot was a fallback, and nothing else was.
    assert fallbacks == {raising: attacks, "random": 0} and attacks > 0
    assert int(rows[raising]["errors"]) == attacks
    assert int(rows["random"]["errors"]) == 0
    assert int(rows[raising]["forfeits"]) == 0  # the games went on: errors, not forfeits
    results = json.loads((out / "results.json").read_text())
    assert {row["bot"]: row["errors"] for row in results["standings"]} == fallbacks
    html = (out / "report.html").read_text()
    assert "<th>Errors</th>" in html
    assert f'<td class="errors">{attacks}</td>' in html
    assert "| Errors |" in (out / "report.md").read_text()


def test_check_fails_on_a_fallback_and_says_why() -> None:
    code, report = run_check(RAISING_BOT, "--move-timeout", "1000")
    assert code == 1
    failed = [r for r in report["results"] if r["status"] == "fail"]
    assert failed and failed[0]["name"] == "attack-single", failed
    assert "the bot's own attack decision" in failed[0]["expected"]
    assert "attack() raised IndexError" in failed[0]["got"]


def test_a_store_written_before_errors_were_counted_opens_and_reads_them_as_none(
    tmp_path: Path,
) -> None:
    import sqlite3

    from tacocat_arena.engine import Termination
    from tacocat_arena.stats.tables import GameResult
    from tacocat_arena.tournament.storage import DB_NAME, TournamentStore

    old = sqlite3.connect(tmp_path / DB_NAME)  # the games table as it was, no fallbacks
    old.executescript(
        "CREATE TABLE games (game_id TEXT PRIMARY KEY, seat0 TEXT NOT NULL, seat1 TEXT NOT NULL,"
        " seed INTEGER NOT NULL, winner INTEGER, reason TEXT NOT NULL, rounds INTEGER NOT NULL,"
        " decisions0 INTEGER NOT NULL, decisions1 INTEGER NOT NULL, ms0 REAL NOT NULL,"
        " ms1 REAL NOT NULL, forfeit_by INTEGER, detail TEXT NOT NULL, record TEXT NOT NULL,"
        " finished_at TEXT NOT NULL DEFAULT '');"
        "INSERT INTO games VALUES ('g0', 'a', 'b', 1, 0, 'goal', 3, 9, 9, 1.0, 1.0, NULL,"
        " '', '{}', '');"
    )
    old.close()
    store = TournamentStore(tmp_path)
    try:
        (before,) = store.results()
        assert before.fallbacks == (0, 0)
        later = GameResult("g1", ("a", "b"), 2, 1, Termination.GOAL, 3, (9, 9), (1.0, 1.0))
        store.save(dataclasses.replace(later, fallbacks=(4, 0)), "", {})
        assert [r.fallbacks for r in store.results()] == [(0, 0), (4, 0)]
    finally:
        store.close()
