"""``run --format swiss`` end to end: real bot processes over loopback, a kill -9 mid-round and
``--resume``, compared game by game with an uninterrupted run dealt with the same secret."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from cli_support import invoke_cli
from resume_support import deal_bound_config, deal_like, games, kill_9_mid
from test_tournament_cli import run_cli, wait_no_processes
from verify_support import assert_verifies

pytestmark = pytest.mark.slow


#: Five bots (an odd field: a bye each round) whose games depend on their deals alone.
SWISS = {"seed": 42, "format": "swiss", "rounds": 3}


def test_kill_9_mid_round_then_resume_pairs_and_plays_as_an_uninterrupted_swiss(
    tmp_path: Path,
) -> None:
    token = f"tacocat-test-{uuid.uuid4().hex}"
    config = deal_bound_config(tmp_path, token, **SWISS)
    whole, broken = tmp_path / "whole", tmp_path / "broken"

    done = run_cli(config, "--out", whole, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "a Swiss of 3 rounds" in done.stdout and "Swiss standings" in done.stdout
    reference = games(whole)
    assert len(reference) == 3 * 2 * 2  # rounds x matches x games
    assert_verifies(whole)

    # The broken run deals with the same secret (as --resume keeps its own), so the two
    # must agree game by game.
    deal_like(whole, broken, config, {})
    # Killed mid-round: some but not all of round 2's four games committed.
    kill_9_mid(
        config, broken, prefix="r2-", total=4, what="round 2", tmp_path=tmp_path, token=token
    )
    before = games(broken)
    assert 4 <= len(before) < 8 and len(before) < len(reference)

    resumed = run_cli(config, "--out", broken, "--resume", cwd=tmp_path, timeout=300)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"({len(before)} were already done)" in resumed.stdout
    after = games(broken)
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
    """Refused before any bot starts: in this process (``invoke_cli``)."""
    config = deal_bound_config(tmp_path, "unused", **SWISS)
    refused = invoke_cli("run", config, "--rounds", "6", "--quiet", cwd=tmp_path)
    assert refused.returncode != 0
    assert "a Swiss of 5 bots plays 1 to 5 rounds" in refused.stderr
    assert "(from --rounds)" in refused.stderr
    workers = invoke_cli("run", config, "--workers", "2", "--quiet", cwd=tmp_path)
    assert workers.returncode != 0 and "drop --workers" in workers.stderr
    assert not (tmp_path / "tacocat-results").exists()
