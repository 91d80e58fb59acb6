"""The smaller commands: play, replay, serve's checks and the engine bench, through Click."""

from __future__ import annotations

import json
import random
import re
import subprocess
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from verify_support import assert_verifies  # tests/ (pytest pythonpath)

from tacocat_arena.cli import main
from tacocat_arena.engine import to_record
from tacocat_arena.play.local import play_game
from tacocat_arena.play.policies import GreedyPolicy, RandomPolicy

#: An older commit ``bench ... --against`` must still measure (the one before issue 40).
ISSUE_40_BASE = "3f11df5"


def write_games(path: Path) -> dict[str, object]:
    game = play_game([GreedyPolicy(), RandomPolicy(random.Random(3))], seed=11)
    record = to_record(game)
    line = {"id": "g-r-d0", "seats": ["greedy", "random"], "record": record}
    path.write_text(json.dumps(line) + "\n")
    return record


def test_replay_verifies_and_narrates_a_recorded_game(tmp_path: Path) -> None:
    record = write_games(tmp_path / "games.jsonl")
    result = CliRunner().invoke(main, ["replay", str(tmp_path / "games.jsonl")])
    assert result.exit_code == 0, result.output
    assert "re-verified" in result.output
    # The space as the board labels it (7), with its position (the narration said "space 4").
    assert (
        "Round 1: the Tacocat is on the space marked 7 (position 4), 7 cards each" in result.output
    )
    assert re.search(
        r"the Tacocat moves from position 4 to [35], and the space marked 7 \(position 4\) "
        r"is covered",
        result.output,
    ), result.output
    assert result.output.count("Round ") == record["rounds"]
    assert "Result:" in result.output.splitlines()[-1]


def test_replay_flags_a_tampered_record(tmp_path: Path) -> None:
    record = write_games(tmp_path / "games.jsonl")
    record["actions"][0] = {"seat": 0, "replace": [99]}  # type: ignore[index]
    (tmp_path / "bad.json").write_text(json.dumps(record))
    result = CliRunner().invoke(main, ["replay", str(tmp_path / "bad.json")])
    assert result.exit_code == 1
    assert "does not re-verify" in result.output and "round 1 R1:" in result.output


def test_replay_names_a_missing_game(tmp_path: Path) -> None:
    write_games(tmp_path / "games.jsonl")
    result = CliRunner().invoke(main, ["replay", str(tmp_path / "games.jsonl"), "--game", "x"])
    assert result.exit_code != 0
    assert "no game 'x'" in result.output


@pytest.mark.slow
def test_play_runs_a_quick_match(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["play", "greedy", "random", "--games", "2", "--out", str(tmp_path / "m")]
    )
    assert result.exit_code == 0, result.output
    lines = (tmp_path / "m" / "games.jsonl").read_text().splitlines()
    assert len(lines) == 2
    assert_verifies(tmp_path / "m")
    assert {tuple(json.loads(line)["seats"]) for line in lines} == {
        ("greedy", "random"),
        ("random", "greedy"),
    }


def test_serve_refuses_a_short_token(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text('alice = "short"\nbob = "long-enough-token"\n')
    result = CliRunner().invoke(main, ["serve", "--tokens", str(tokens), "--port", "0"])
    assert result.exit_code != 0
    assert "'alice' must be a string of at least 8 characters" in result.output


def test_bench_engine_prints_its_figures() -> None:
    result = CliRunner().invoke(main, ["bench", "engine", "--games", "20"])
    assert result.exit_code == 0, result.output
    assert "decisions/s:" in result.output
    assert "games:        20" in result.output


@pytest.mark.slow
def test_bench_engine_against_another_commit_plays_both_trees_in_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--against HEAD: a worktree of this commit, so the ratios are about 1 (not asserted:
    figures are not tested); every round prints both rates and the worktree is gone after.
    Its temporary folder is this test's own, so other worktrees of the repository (another
    bench run at the same moment) are not mistaken for it."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = CliRunner().invoke(
        main, ["bench", "engine", "--games", "20", "--rounds", "2", "--against", "HEAD"]
    )
    assert result.exit_code == 0, result.output
    assert re.search(r"^against: +HEAD \([0-9a-f]{7}\), a worktree$", result.output, re.M)
    rounds = re.findall(r"^ +(\d) +[\d,]+ +[\d,]+  \d+\.\d{3}$", result.output, re.M)
    assert rounds == ["1", "2"]
    assert re.search(r"^median ratio \(this tree / HEAD .*\): \d+\.\d{3}$", result.output, re.M)
    listed = subprocess.run(["git", "worktree", "list"], capture_output=True, text=True).stdout
    assert str(tmp_path) not in listed
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_bench_referee_against_an_older_commit_measures_b_and_c_of_both_trees() -> None:
    """The children run this tree's bench file with the older tree's package: a name that
    tree lacks (``stop_server``, 253f1b4) failed each child with an ImportError.  One
    comparison (two runs, each tree first once) checks both that and the rows of (b) and (c):
    the rows are this tree's printing whatever the other tree is (a second comparison against
    HEAD cost 8 s of CPU for the same rows); 0.1 s a level, as the figures are not tested."""
    result = CliRunner().invoke(
        main,
        ["bench", "referee", "--seconds", "0.1", "--games-at-once", "2", "--repeats", "1"]
        + ["--against", ISSUE_40_BASE],
    )
    assert result.exit_code == 0, result.output
    assert f"against:   {ISSUE_40_BASE} ({ISSUE_40_BASE[:7]})" in result.stdout
    rows = re.findall(
        r"^\(([bc])\) .*, decisions/(s|CPU s) +[\d,]+ +[\d,]+  \d+\.\d\d \(\d+\.\d\d \d+\.\d\d\)$",
        result.stdout,
        re.M,
    )
    assert rows == [("b", "s"), ("b", "CPU s"), ("c", "s"), ("c", "CPU s")]


@pytest.mark.slow
def test_bench_against_an_unknown_commit_says_so() -> None:
    for command in ("engine", "referee"):
        result = CliRunner().invoke(main, ["bench", command, "--against", "no-such-rev"])
        assert result.exit_code == 1, result.output
        assert "--against no-such-rev: no such commit" in result.output


@pytest.mark.slow
def test_bench_referee_prints_the_three_rates_and_their_ratios() -> None:
    result = CliRunner().invoke(
        main,
        ["bench", "referee", "--seconds", "0.1", "--games-at-once", "4", "--repeats", "1"]
        + ["--scale-games", "8"],
    )
    assert result.exit_code == 0, result.output
    rates = re.findall(
        r"^\(([abcd])\) .*?:\s+([\d,]+) (?:round trips|decisions)/s$", result.stdout, re.M
    )
    assert [name for name, _ in rates] == ["a", "b", "c", "d"]
    assert all(int(value.replace(",", "")) > 0 for _, value in rates)
    assert re.search(r"^\(b\)/\(a\) = \d+\.\d\d   \(c\)/\(b\) = \d+\.\d\d$", result.stdout, re.M)
    scale = re.search(r"^\(e\) 8 games at once: .* \(e\) ratio = (\d+\.\d\d)$", result.stdout, re.M)
    assert scale and float(scale.group(1)) > 0
