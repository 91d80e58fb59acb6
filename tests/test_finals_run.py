"""``run --format finals --until-stable`` end to end: real bot processes over loopback; the
strong bots reach the last stage; a kill -9 mid-stage and ``--resume`` end as an
uninterrupted run dealt with the same secret, game by game."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest
from cli_support import invoke_cli
from resume_support import deal_bound_config, deal_like, games, kill_9_mid
from test_tournament_cli import run_cli, wait_no_processes, write_config
from verify_support import assert_verifies

pytestmark = pytest.mark.slow


def test_finals_cut_to_the_strong_and_kill_9_then_resume_ends_as_uninterrupted(
    tmp_path: Path,
) -> None:
    token = f"tacocat-test-{uuid.uuid4().hex}"
    # The three random bots are listed first, so the seeding does not put the strong on top.
    # Three stages (5, 3 and 2 bots): the two greedy ones, alike, are never told apart, so
    # the event always ends at max_stages (a fourth stage of the same two added nothing).
    config = deal_bound_config(tmp_path, token, seed=7, format="finals", top=1, max_stages=3)
    whole, broken = tmp_path / "whole", tmp_path / "broken"

    done = run_cli(config, "--until-stable", "--out", whole, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "finals (cut 0.5 a stage, until the top 1 are decided" in done.stdout
    finals = json.loads((whole / "results.json").read_text())["finals"]
    fields = [stage["field"] for stage in finals["stages"]]
    assert [len(field) for field in fields] == [5, 3, 2]
    assert set(fields[-1]) == {"g1", "g2"}  # the strong ones in the final stage
    assert finals["ended"] in ("decided", "max_stages") and finals["settings"]["top"] == 1
    assert set(finals["order"][:2]) == {"g1", "g2"}
    assert "Final order: 1." in (whole / "report.md").read_text()
    assert 'id="finals-table"' in (whole / "report.html").read_text()
    reference = games(whole)
    assert len(reference) == sum(stage["games"] for stage in finals["stages"])
    assert_verifies(whole)

    deal_like(whole, broken, config, {"until_stable": True})
    # Killed mid-stage: some but not all of stage 2's six games committed.
    kill_9_mid(
        config, broken, "--until-stable", prefix="f2-", total=6, what="stage 2",
        tmp_path=tmp_path, token=token,
    )  # fmt: skip
    before = games(broken)
    assert 20 <= len(before) < len(reference)

    resumed = run_cli(
        config, "--until-stable", "--out", broken, "--resume", cwd=tmp_path, timeout=300
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"({len(before)} were already done)" in resumed.stdout
    after = games(broken)
    assert after == reference  # the same stages (game ids), deals and results
    again = json.loads((broken / "results.json").read_text())["finals"]
    assert again == finals
    assert_verifies(broken)
    assert wait_no_processes(token) == []


def test_finals_options_are_refused_outside_finals_before_any_bot_starts(tmp_path: Path) -> None:
    """Refused before any bot starts: in this process (``invoke_cli``)."""
    config = write_config(
        tmp_path, {"a": "builtin:random", "b": "builtin:greedy"}, games=2, sandbox="none"
    )

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return invoke_cli("run", config, *args, "--quiet", cwd=tmp_path)

    refused = run("--top", "1")
    assert refused.returncode != 0
    assert 'top is set, but format is not "finals"' in refused.stderr
    assert "(from --top)" in refused.stderr
    too_many = run("--format", "finals", "--entrants", "3")
    assert too_many.returncode != 0
    assert "--entrants 3: an event of 2 bots takes 2 to 2" in too_many.stderr
    workers = run("--format", "finals", "--workers", "2")
    assert workers.returncode != 0 and "drop --workers" in workers.stderr
    assert not (tmp_path / "tacocat-results").exists()


def test_a_two_bot_finals_and_knockout_play_past_their_first_stage(tmp_path: Path) -> None:
    """A two-bot event whose plan grows (finals' next stage, a level knockout match's extra
    pairs) is no fixed match: no match monitor counts it (it refused every game outside the
    first stage's plan: ValueError 'not in the plan of this match').  What is checked is the
    plan, so the command runs in this process (``invoke_cli``), its bots as processes."""
    bots = ("--bot", "a=builtin:random?seed=1", "--bot", "b=builtin:random?seed=2")
    finals = invoke_cli(
        "run", "--format", "finals", "--until-stable", "--games", "2", "--max-stages", "2",
        *bots, "--out", tmp_path / "finals", "--sandbox", "none", "--quiet", cwd=tmp_path,
    )  # fmt: skip
    assert finals.returncode == 0, finals.stdout + finals.stderr
    stages = json.loads((tmp_path / "finals" / "results.json").read_text())["finals"]["stages"]
    assert len(stages) == 2  # one pair a stage: 4 pairs (to decide) not before stage 4
    knockout = invoke_cli(
        "run", "--format", "knockout", "--games", "2", *bots, "--out", tmp_path / "knockout",
        "--sandbox", "none", "--quiet", cwd=tmp_path,
    )  # fmt: skip
    assert knockout.returncode == 0, knockout.stdout + knockout.stderr
