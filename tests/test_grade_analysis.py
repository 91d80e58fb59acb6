"""``grade --analyze K``: the student's K worst games analysed into the report (real grade:
the random sample bot through the small test rubric, real processes in the sandbox)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tacocat_arena.cli import main

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
RUBRIC = ROOT / "tests" / "grade_bots" / "test_rubric.toml"
RANDOM = ROOT / "example_bots" / "packages" / "python-random"


def test_the_worst_games_are_analysed_into_the_report_and_the_points_do_not_change(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    secret = tmp_path / "secret.txt"
    secret.write_text("0123456789abcdef0123456789abcdef\n")
    args = ["grade", str(RANDOM), "--rubric", str(RUBRIC), "--out", str(out), "-q"]
    args += ["--secret-file", str(secret), "--analyze", "2"]
    args += ["--analysis-reference", "ismcts?iterations=100&seeds=1"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    grade = json.loads((out / "grade.json").read_text())
    assert "analysis" not in grade  # the points are the rubric's alone
    rows = json.loads((out / "analysis.json").read_text())
    assert len(rows) == 2 and all(row["points"] < 1 for row in rows)
    played = {g["game_id"]: g["points"] for item in grade["items"] for g in item["games_played"]}
    # the two it scored least in (there are more losses than two: random against greedy)
    assert sorted(played.values())[:2] == sorted(row["points"] for row in rows)
    for row in rows:
        assert row["seat"] in (0, 1) and row["reference"].startswith("ismcts?iterations=100")
        page = (out / row["href"]).read_text()
        assert 'id="analysis"' in page
        assert f"analysed {row['item']} {row['game_id']}" in result.output
    report = (out / "report.html").read_text()
    assert report.count('class="analysed"') == 2 and "accuracy" in report


def test_a_bad_reference_is_refused_before_any_grading(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["grade", str(RANDOM), "--rubric", str(RUBRIC), "--out", str(out)]
    args += ["--analyze", "1", "--analysis-reference", "stockfish"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "--analysis-reference" in result.output
    assert not (out / "grade.json").exists()
