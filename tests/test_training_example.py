"""The training example trains an agent through the Gymnasium environment, saves it, and the
saved agent plays a real ``tacocat-arena run`` tournament as an SDK bot."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from verify_support import assert_verifies  # tests/ (pytest pythonpath)

pytest.importorskip("gymnasium", reason="needs the [gymnasium] extra")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.slow
def test_a_briefly_trained_agent_plays_a_real_tournament(tmp_path):
    weights = tmp_path / "agent.npz"
    # Two updates of 8 games, bounded by count (--episodes), not by the clock: --minutes 0.1
    # trained for 6 s of CPU whatever the machine, and what is tested is that the trained
    # agent is saved and plays, not how well.  --minutes stays only as a bound.
    trained = subprocess.run(
        [sys.executable, str(EXAMPLES / "train_agent.py"), "--episodes", "16", "--batch", "8"]
        + ["--minutes", "5", "--out", str(weights), "--evaluate", "4"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert "trained on 16 games" in trained.stdout, trained.stdout
    assert "score against random:" in trained.stdout and weights.exists()
    shutil.copy(EXAMPLES / "trained_bot.py", tmp_path / "trained_bot.py")
    run = subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", "run", "--quiet", "--games", "2"]
        + ["--bot", "trained=python trained_bot.py agent.npz", "--bot", "random=builtin:random"]
        + ["--out", str(tmp_path / "out")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    with open(tmp_path / "out" / "standings.csv", newline="") as file:
        rows = {row["bot"]: row for row in csv.DictReader(file)}
    assert set(rows) == {"trained", "random"}
    assert int(rows["trained"]["games"]) == 2 and int(rows["trained"]["forfeits"]) == 0
    assert_verifies(tmp_path / "out")
