"""``verify`` accepts a ``grade`` output folder and checks the grade against its games (issue
38, pt 2): every tier's folder as a tournament's (games, plan, tables, the SPRT re-run), then
grade.json and Gradescope's results.json against the tiers (Q1).

One real grade (the CLI, real bot processes) is made once; each test changes a copy.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tacocat_arena.cli import main
from tacocat_arena.cli.run import verify_any
from tacocat_arena.tournament.verify import verify_lines

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
RUBRIC = Path(__file__).parent / "grade_bots" / "test_rubric.toml"
GREEDY = ROOT / "example_bots" / "packages" / "python-greedy"


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("grade")
    out = folder / "out"
    args = ["grade", str(GREEDY), "--rubric", str(RUBRIC), "--out", str(out), "-q"]
    result = CliRunner().invoke(main, [*args, "--format", "gradescope"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out


def copy(graded: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(graded, tmp_path / "out"))


def rules(folder: Path) -> set[str]:
    return {problem.rule for problem in verify_any(folder).problems}


def sprt_tier(folder: Path) -> tuple[dict[str, Any], Path]:
    grade = json.loads((folder / "grade.json").read_text())
    for item in grade["items"]:
        if item["kind"] == "tier" and "sprt" in json.loads(
            (folder / item["folder"] / "results.json").read_text()
        ):
            return item, folder / item["folder"]
    raise AssertionError("the test rubric has an SPRT tier")


def edit_grade(folder: Path, change: Any) -> None:
    path = folder / "grade.json"
    grade = json.loads(path.read_text())
    change(grade)
    path.write_text(json.dumps(grade, indent=2))


def test_a_grade_folder_verifies_with_its_secret(graded: Path) -> None:
    result = verify_any(graded)
    assert result.ok and result.games > 0, result.problems
    assert list(verify_lines(result, graded))[-1].endswith("the secret re-derived")


def test_S4_and_Q1_a_decided_sprt_pair_dropped_from_a_tier(graded: Path, tmp_path: Path) -> None:
    """The tier's store, games.jsonl and grade.json all lose the pair: the SPRT re-run over
    what is left is not the published one, and the grade lists games the tier lacks."""
    folder = copy(graded, tmp_path)
    _, tier = sprt_tier(folder)
    lines = (tier / "games.jsonl").read_text().splitlines()
    dropped = {json.loads(line)["id"] for line in lines[:2]}
    (tier / "games.jsonl").write_text("".join(f"{line}\n" for line in lines[2:]))
    with sqlite3.connect(tier / "tournament.sqlite") as db:
        db.executemany("DELETE FROM games WHERE game_id = ?", [(i,) for i in dropped])
    found = rules(folder)
    assert {"S4", "Q1"} <= found


def test_Q1_a_tier_passed_that_its_sprt_failed(graded: Path, tmp_path: Path) -> None:
    folder = copy(graded, tmp_path)
    item, _ = sprt_tier(folder)

    def flip(grade: dict[str, Any]) -> None:
        for each in grade["items"]:
            if each["name"] == item["name"]:
                each["passed"] = not each["passed"]
                each["points"] = each["max_points"] if each["passed"] else 0.0
        grade["points"] = sum(each["points"] for each in grade["items"])

    edit_grade(folder, flip)
    assert rules(folder) == {"Q1"}  # and Gradescope's file no longer says grade.json's score


def test_Q1_points_that_are_not_the_items_sum(graded: Path, tmp_path: Path) -> None:
    folder = copy(graded, tmp_path)
    edit_grade(folder, lambda grade: grade.update(points=grade["points"] + 5))
    assert rules(folder) == {"Q1"}


def test_Q1_a_grade_dealt_with_another_secret(graded: Path, tmp_path: Path) -> None:
    folder = copy(graded, tmp_path)
    (folder / "secret.txt").write_text("f" * 32 + "\n")
    assert rules(folder) == {"Q1"}
