"""``grade --notify URL``: a real grading (bot processes, the referee on loopback) tells a
loopback endpoint its points once it is done, after the endpoint refused the first POST."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from notify_support import endpoint
from test_grade import PACKAGES, RUBRIC, secret_file

from tacocat_arena.cli.main import main

pytestmark = pytest.mark.slow


def test_a_grading_notifies_its_points(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with endpoint([503]) as hook:
        args = ["grade", str(PACKAGES["random"]), "--rubric", str(RUBRIC), "--out", str(out)]
        args += ["--secret-file", str(secret_file(tmp_path)), "--notify", hook.url, "-q"]
        result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    grade = json.loads((out / "grade.json").read_text(encoding="utf-8"))
    assert len(hook.bodies) == 2 and "attempt 1 of 3 failed (HTTP 503)" in result.output
    told = hook.bodies[-1]
    assert told["format"] == "grade" and told["results"] == str((out / "grade.json").resolve())
    assert told["students"] == [{key: grade[key] for key in ("student", "points", "max_points")}]
