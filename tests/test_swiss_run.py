"""``run --format swiss`` end to end: real bot processes over loopback, a kill -9 mid-round and
``--resume``, compared game by game with an uninterrupted run dealt with the same secret."""

from __future__ import annotations

import json
import sqlite3
import sys
import time
import uuid
from pathlib import Path

import pytest
from process_support import start_process
from test_tournament_cli import cli_argv, db_rows, run_cli, wait_no_processes, write_config
from verify_support import assert_verifies

from tacocat_arena.tournament.config import load_config
from tacocat_arena.tournament.storage import TournamentStore

pytestmark = pytest.mark.slow

BOT = Path(__file__).resolve().parent / "bots" / "view_seeded_bot.py"


def _config(tmp_path: Path, token: str) -> Path:
    """Five bots (an odd field: a bye each round) whose games depend on their deals alone."""
    bots = {f"v{salt}": f"{sys.executable} {BOT} {salt} {token}" for salt in (1, 2, 3)} | {
        f"g{n}": f"{sys.executable} -m example_bots.greedy_bot {token}" for n in (1, 2)
    }
    return write_config(
        tmp_path,
        bots,
        games=4,
        seed=42,
        concurrency=2,
        move_timeout=10.0,
        sandbox="none",
        format="swiss",
        rounds=3,
    )


def _games(out: Path) -> dict[str, tuple]:
    """Each game's seats, deal seed and outcome (winner, termination), by id."""
    return {
        game_id: (row[1], row[2], row[3], json.loads(row[4]).get("winner"),
                  json.loads(row[4]).get("termination"))
        for game_id, row in db_rows(out).items()
    }  # fmt: skip


def _secret(out: Path) -> str:
    db = sqlite3.connect(f"file:{out / 'tournament.sqlite'}?mode=ro", uri=True)
    try:
        return db.execute("SELECT value FROM meta WHERE key = 'deal_secret'").fetchone()[0]
    finally:
        db.close()


def test_kill_9_mid_round_then_resume_pairs_and_plays_as_an_uninterrupted_swiss(
    tmp_path: Path,
) -> None:
    token = f"tacocat-test-{uuid.uuid4().hex}"
    config = _config(tmp_path, token)
    whole, broken = tmp_path / "whole", tmp_path / "broken"

    done = run_cli(config, "--out", whole, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "a Swiss of 3 rounds" in done.stdout and "Swiss standings" in done.stdout
    reference = _games(whole)
    assert len(reference) == 3 * 2 * 4  # rounds x matches x games
    assert_verifies(whole)

    # The broken run deals with the same secret (as --resume keeps its own), so the two
    # must agree game by game.
    store = TournamentStore(broken)
    store.claim(load_config(config, {}, []).fingerprint(), resume=False)
    store.adopt_secret(_secret(whole))
    store.close()
    cli = start_process(
        cli_argv(config, "--out", broken, "--quiet"), name="swiss", log_dir=tmp_path
    )
    deadline = time.monotonic() + 240
    try:
        # Mid-round: some but not all of round 2's games committed.
        while not 0 < sum(game.startswith("r2-") for game in db_rows(broken)) < 8:
            assert cli.poll() is None, "the event ended before it could be killed:\n" + cli.output()
            assert time.monotonic() < deadline, "round 2 did not start within 240 s"
            time.sleep(0.02)
    finally:
        cli.signal_group(9)
        cli.wait(30)
    assert wait_no_processes(token) == [], "bot processes outlived the killed event"
    before = _games(broken)
    assert 8 <= len(before) < 24 and len(before) < len(reference)

    resumed = run_cli(config, "--out", broken, "--resume", cwd=tmp_path, timeout=300)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"({len(before)} were already done)" in resumed.stdout
    after = _games(broken)
    assert after == reference  # the same pairings (game ids), deals and results
    for game_id, row in before.items():
        assert after[game_id] == row
    swiss = [json.loads((out / "results.json").read_text())["swiss"] for out in (whole, broken)]
    assert swiss[0] == swiss[1]
    byes = [played["bye"] for played in swiss[0]["rounds"]]
    assert len(set(byes)) == 3 and None not in byes  # a bye each round, never twice
    assert_verifies(broken)
    assert wait_no_processes(token) == []


def test_a_bad_swiss_is_refused_before_any_bot_starts(tmp_path: Path) -> None:
    config = _config(tmp_path, "unused")
    refused = run_cli(config, "--rounds", "6", cwd=tmp_path)
    assert refused.returncode != 0
    assert "a Swiss of 5 bots plays 1 to 5 rounds" in refused.stderr
    assert "(from --rounds)" in refused.stderr
    workers = run_cli(config, "--workers", "2", cwd=tmp_path)
    assert workers.returncode != 0 and "drop --workers" in workers.stderr
    assert not (tmp_path / "tacocat-results").exists()
