"""The suite's own rules (tests/conftest.py, tests/process_support.py) hold: run on a small
suite of tests written to break them, in a pytest of its own (a real process)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from process_support import state_of

pytest_plugins = ["pytester"]

TESTS = Path(__file__).resolve().parent

BREAKERS = """
import os, subprocess, sys, time
from pathlib import Path
import pytest

OUT = Path(os.environ["BREAKERS_OUT"])

def test_unmarked_and_over_the_limit():
    time.sleep(0.6)

@pytest.mark.slow
def test_marked_and_over_the_limit():
    time.sleep(0.6)

def test_fast_enough():
    pass

def test_a_child_left_running():
    child = subprocess.Popen(["sleep", "60"])
    (OUT / "child.pid").write_text(str(child.pid))

def test_an_orphan_left_running():
    # The shell exits at once: its sleep is an orphan, which this process (a child subreaper)
    # still finds.
    subprocess.run(["sh", "-c", "sleep 60 & echo $! > " + str(OUT / "orphan.pid")], check=True)

@pytest.mark.timeout(2)
def test_hangs(processes, tmp_path):
    process = processes(["sh", "-c", "echo started-marker; sleep 60 & wait"], name="hanger")
    process.wait_for("started-marker", 30)
    (OUT / "hanger.pid").write_text(str(process.pid))
    time.sleep(60)

def test_runs_after_the_hung_one():
    pass

def test_a_failure_shows_the_processes_output(processes):
    process = processes([sys.executable, "-c", "print('output-marker-42')"], name="printer")
    process.wait(30)
    assert False, "failed on purpose"

def test_a_process_fixture_marks_the_test_slow(processes):
    pass
"""


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    pytester.makeconftest((TESTS / "conftest.py").read_text())
    pytester.makeini("[pytest]\nmarkers =\n    slow: slow\ntimeout = 60\ntimeout_method = signal\n")
    pytester.makepyfile(test_breakers=BREAKERS)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist", *args)


@pytest.fixture
def breakers_env(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    out = pytester.path / "out"
    out.mkdir()
    monkeypatch.setenv("BREAKERS_OUT", str(out))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), *sys.path]))
    monkeypatch.setenv("TACOCAT_FAST_LIMIT_S", "0.5")
    monkeypatch.setenv("TACOCAT_LEFT_BEHIND_GRACE_S", "0.5")
    monkeypatch.delenv("TACOCAT_DURATIONS_LOG", raising=False)
    return out


@pytest.mark.slow
def test_the_suites_rules_fail_what_breaks_them_and_only_that(
    pytester: pytest.Pytester, breakers_env: Path
) -> None:
    result = _run(pytester, "-rA")
    text = result.stdout.str()
    pattern = r"^(PASSED|FAILED|ERROR) test_breakers\.py::(\w+)"
    found = {name: status for status, name in re.findall(pattern, text, re.M)}
    # An unmarked test over the limit fails with its name and time; a marked one passes.
    assert found["test_unmarked_and_over_the_limit"] == "FAILED", text
    assert re.search(r"test_unmarked_and_over_the_limit took 0\.\d\d s .*not marked slow", text)
    assert found["test_marked_and_over_the_limit"] == "PASSED"
    assert found["test_fast_enough"] == "PASSED"
    # A process left behind, a child or an orphan, fails its test and is killed.
    assert found["test_a_child_left_running"] == "ERROR", text
    assert found["test_an_orphan_left_running"] == "ERROR", text
    assert "left 1 process(es) running" in text and "sleep 60" in text
    # A hung test fails alone, its process group killed; the next one runs.
    assert found["test_hangs"] == "FAILED" and "Timeout" in text, text
    assert found["test_runs_after_the_hung_one"] == "PASSED"
    # A failed test's report shows what its processes printed.
    assert found["test_a_failure_shows_the_processes_output"] == "FAILED"
    assert "output-marker-42" in text and "printer (pid" in text
    for name in ("child", "orphan", "hanger"):
        pid = int((breakers_env / f"{name}.pid").read_text())
        assert state_of(pid) in ("", "Z"), (name, pid)


@pytest.mark.slow
def test_a_test_using_a_process_fixture_is_left_out_of_the_fast_tier(
    pytester: pytest.Pytester, breakers_env: Path
) -> None:
    result = _run(pytester, "-m", "not slow", "--co", "-q")
    text = result.stdout.str()
    assert "test_fast_enough" in text
    assert "test_a_process_fixture_marks_the_test_slow" not in text
    assert "test_a_failure_shows_the_processes_output" not in text
    assert "test_hangs" not in text and "test_marked_and_over_the_limit" not in text
