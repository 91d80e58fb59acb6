"""Gradescope: rubric items take its ``visibility``; examples/gradescope is a working
autograder folder (issue 37, point 7), run here on a fake ``/autograder`` tree."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tacocat_arena.grade.outputs import gradescope_dict
from tacocat_arena.grade.rubric import VISIBILITIES, RubricError, load_rubric, parse_rubric

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "gradescope"
TEST_RUBRIC = REPO / "tests" / "grade_bots" / "test_rubric.toml"
PACKAGE = REPO / "example_bots" / "packages" / "python-random"
TACOCAT_ARENA = str(Path(sys.executable).parent / "tacocat-arena")
SECRET = "0123456789abcdef0123456789abcdef"


def test_items_take_gradescope_s_visibility_and_refuse_other_values() -> None:
    rubric = parse_rubric(
        {
            "conformance": {"points": 10},
            "tiers": [
                {"name": "beats random", "opponent": "builtin:random", "points": 5,
                 "threshold": 0.5, "visibility": "hidden"},
                {"name": "beats greedy", "opponent": "builtin:greedy", "points": 5,
                 "threshold": 0.5},
            ],
            "no_forfeits": {"points": 1, "visibility": "after_due_date"},
        }
    )  # fmt: skip
    assert rubric.visibility == {"beats random": "hidden", "no forfeits": "after_due_date"}
    with pytest.raises(RubricError, match=r"tiers\[0\]\.visibility: must be one of visible"):
        parse_rubric(
            {
                "conformance": {"points": 10},
                "tiers": [{"name": "t", "opponent": "builtin:random", "points": 5,
                           "threshold": 0.5, "visibility": "secret"}],
            }
        )  # fmt: skip
    assert set(VISIBILITIES) == {"visible", "hidden", "after_due_date", "after_published"}


def test_results_json_gives_each_test_its_item_s_visibility() -> None:
    items = [
        {"name": name, "kind": "tier", "points": 1.0, "max_points": 2.0, "passed": True,
         "output": "", "score": None, "visibility": visibility}
        for name, visibility in (("a", "visible"), ("b", "hidden"), ("c", "after_due_date"))
    ]  # fmt: skip
    grade = {"items": items, "points": 3.0, "max_points": 6.0, "seconds": 1.0, "rubric": "r"}
    shown = {t["name"]: t["visibility"] for t in gradescope_dict(grade)["tests"]}
    assert shown == {"a": "visible", "b": "hidden", "c": "after_due_date"}
    whole = {t["name"]: t["visibility"] for t in gradescope_dict(grade, "hidden")["tests"]}
    assert whole == {"a": "hidden", "b": "hidden", "c": "after_due_date"}


def test_the_example_rubric_loads() -> None:
    rubric = load_rubric(EXAMPLE / "rubric.toml")
    assert rubric.visibility == {"beats greedy": "after_due_date", "holds search": "after_due_date"}
    assert rubric.max_points == load_rubric(None).max_points  # the default ladder's points


def fake_autograder(tmp_path: Path, secret: str = SECRET) -> Path:
    """/autograder as Gradescope lays it out: source (our zip), submission, results."""
    root = tmp_path / "autograder"
    source = root / "source"
    source.mkdir(parents=True)
    for name in ("run_autograder", "setup.sh"):
        shutil.copy2(EXAMPLE / name, source / name)
    rubric = TEST_RUBRIC.read_text().replace(
        'method = "sprt"\nmax_games = 8\n',
        'method = "sprt"\nmax_games = 8\nvisibility = "hidden"\n',
    )
    assert 'visibility = "hidden"' in rubric
    (source / "rubric.toml").write_text(rubric)
    (source / "secret.txt").write_text(secret + "\n")
    shutil.copytree(PACKAGE, root / "submission")
    return root


def run_autograder(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", str(root / "source" / "run_autograder")],
        env={"PATH": "/usr/bin:/bin", "AUTOGRADER": str(root), "TACOCAT_ARENA": TACOCAT_ARENA},
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_run_autograder_grades_the_submission_into_results_json(tmp_path: Path) -> None:
    root = fake_autograder(tmp_path)
    done = run_autograder(root)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    tests = {test["name"]: test for test in results["tests"]}
    assert list(tests) == ["conformance", "beats random", "beats greedy", "decision time",
                           "no forfeits"]  # fmt: skip
    assert tests["conformance"]["status"] == "passed", tests["conformance"]
    assert tests["beats greedy"]["visibility"] == "hidden"
    # One wording for games and pairs: both counts, named (issue 37, point 6).
    assert re.search(
        r"over \d+ games \(\d+ complete duplicate pairs?\)", tests["beats random"]["output"]
    )
    assert {t["visibility"] for n, t in tests.items() if n != "beats greedy"} == {"visible"}
    assert results["score"] == sum(test["score"] for test in results["tests"])
    assert any(row["name"] == "Points" for row in results["leaderboard"])


@pytest.mark.slow
def test_run_autograder_says_why_when_it_cannot_grade(tmp_path: Path) -> None:
    root = fake_autograder(tmp_path, secret="short")  # not a grading secret
    done = run_autograder(root)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 0 and results["tests"] == []
    assert "could not grade this submission" in results["output"]
    assert "not a grading secret" in results["output"]


@pytest.mark.slow
def test_setup_sh_installs_the_wheel_it_is_given(tmp_path: Path) -> None:
    root = fake_autograder(tmp_path)
    (root / "source" / "dist").mkdir()
    (root / "source" / "dist" / "tacocat_arena-1.0-py3-none-any.whl").write_bytes(b"")
    env = {"PATH": "/usr/bin:/bin", "AUTOGRADER": str(root), "PIP": "echo pip", "APT": "no-apt"}
    done = subprocess.run(
        ["sh", str(root / "source" / "setup.sh")], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout.strip() == f"pip install {root}/source/dist/tacocat_arena-1.0-py3-none-any.whl"
    )
    assert (root / "source" / "secret.txt").stat().st_mode & 0o777 == 0o600
    shutil.rmtree(root / "source" / "dist")
    bare = subprocess.run(
        ["sh", str(root / "source" / "setup.sh")], env=env, capture_output=True, text=True
    )
    assert bare.returncode != 0 and "set TACOCAT_ARENA_SPEC" in bare.stderr
