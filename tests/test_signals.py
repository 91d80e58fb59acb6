"""SIGTERM and SIGINT stop the long commands cleanly (issue 37, point 1), as real processes.

A system that stops a job (systemd, Docker, Kubernetes, CI) sends SIGTERM; a person presses
Ctrl-C.  Either way ``run``, ``play`` and ``grade`` end their games' tasks, their bots and
their gRPC server before the event loop closes, say what was kept and how to go on, and exit
128 + the signal's number (143, 130); ``serve`` stops the same way and exits 0 (a stop is how
an arena ends).  No crash (exit 139 was issue 37's), no traceback, no asyncio complaint.
The runs that were stopped are then resumed with the very command they printed.

A signal comes at the third saved game (of a run: three more), with most of the first half
(the pairs' first games, before the twins' processes start) still to play, and the resume
plays the rest; more games only made the resumes longer.  ``run`` is stopped by each signal
in turn, one run resumed each time with the command it printed.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from arena_support import add_players, start_arena, start_bots, wait_until
from test_tournament_cli import db_rows, wait_no_processes

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
RANDOM_PACKAGE = ROOT / "example_bots" / "packages" / "python-random"

#: Games of the stopped match (see the module docstring).
GAMES = 24

#: What a stop must never print (issue 37 saw each of them).
NOISE = (
    "Traceback",
    "Task was destroyed but it is pending",
    "is closed",  # "Loop <...> that handles pid ... is closed"
    "Segmentation fault",
    "Fatal Python error",
    "Exception ignored",
)


class Command:
    """``tacocat-arena ARGS`` in ``cwd``, its output (stdout and stderr) read as it comes."""

    def __init__(self, cwd: Path, *args: str, ignore_sigint: bool = False) -> None:
        # A job started with `&` by a non-interactive shell (CI, nohup) has SIGINT ignored:
        # asyncio.run then installs no handler of its own, the path that crashed.
        # SIGHUP at its default, as a terminal starts a command (a suite run under nohup has it
        # ignored, and a child inherits that: tests/test_stopping.py).
        command = [sys.executable, "-m", "tacocat_arena.cli", *args]
        if ignore_sigint:
            code = "import signal, runpy, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
            code += "sys.argv = sys.argv[1:]; runpy.run_module('tacocat_arena.cli', "
            code += "run_name='__main__', alter_sys=True)"
            command = [sys.executable, "-c", code, "tacocat-arena", *args]
        self.process = subprocess.Popen(
            ["env", "--default-signal=HUP", *command],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, condition: Callable[[], object], what: str, timeout: float = 90) -> None:
        def ready() -> object:
            assert self.process.poll() is None, f"ended before {what}: {self.output}"
            return condition()

        wait_until(ready, timeout, what, interval=0.05)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60) -> str:
        """Send ``sig`` once; wait for the end; the whole output."""
        self.process.send_signal(sig)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
            message = f"still running {timeout} s after {sig!r}: {self.output}"
            raise AssertionError(message) from None
        finally:
            self._reader.join(10)
        return self.output

    @property
    def output(self) -> str:
        return "\n".join(self.lines)


def assert_quiet(output: str) -> None:
    for noise in NOISE:
        assert noise not in output, output


def resume_command(output: str) -> list[str]:
    """The arguments of the ``Resume with: tacocat-arena ...`` line."""
    said = " ".join(output.split())
    assert "Resume with: tacocat-arena " in said, output
    line = said.split("Resume with: tacocat-arena ", 1)[1]
    return shlex.split(line.split(" --resume", 1)[0]) + ["--resume"]


def finish(cwd: Path, args: list[str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert_quiet(done.stdout + done.stderr)
    return done.stdout


#: The signals a run is stopped by, in turn: the first run was started as a background job
#: (SIGINT ignored), each next one is the command its predecessor printed; the exit code.
STOPS = (
    (signal.SIGTERM, 143, True),
    (signal.SIGTERM, 143, False),
    (signal.SIGINT, 130, False),
    (signal.SIGHUP, 129, False),  # the terminal closed
)

#: Games of the run stopped four times (each stop at three more saved games).
RUN_GAMES = 36


def test_run_stops_on_each_signal_and_resumes_with_the_command_it_prints(tmp_path: Path) -> None:
    """One run stopped by each signal in turn, each time resumed with the command it printed:
    every stop and every printed command is checked, and the resumes of resumes too; four
    runs of their own, each stopped and resumed to its end, cost twice the processes."""
    token = f"tacocat-test-{uuid.uuid4().hex}"
    bots = [
        "--bot", f"rnd=python -m example_bots.random_bot {token}",
        "--bot", f"greedy=python -m example_bots.greedy_bot {token}",
    ]  # fmt: skip
    args = ["run", *bots, "--games", str(RUN_GAMES), "--concurrency", "3", "--quiet"]
    out = tmp_path / "tacocat-results"  # no --out: the default folder
    for sig, code, ignore_sigint in STOPS:
        name = signal.Signals(sig).name + (" (background job)" if ignore_sigint else "")
        before = db_rows(out)
        wanted = len(before) + 3
        cli = Command(tmp_path, *args, ignore_sigint=ignore_sigint)
        cli.wait_for(lambda n=wanted: len(db_rows(out)) >= n, "three more saved games")
        output = cli.stop(sig)
        assert cli.process.returncode == code, (name, output)
        assert_quiet(output)
        rows = db_rows(out)
        said = " ".join(output.split())
        named = "" if sig == signal.SIGINT else f" ({signal.Signals(sig).name})"  # Ctrl-C: none
        assert f"Interrupted{named}. {len(rows)} finished games are saved" in said, (name, output)
        assert all(rows[game] == row for game, row in before.items()), name  # kept, as saved
        assert wait_no_processes(token) == [], name  # every bot stopped with the run
        args = resume_command(output)
        assert args[:1] == ["run"] and "--out" in args, (name, args)
    finish(tmp_path, args)
    assert len(db_rows(out)) == RUN_GAMES
    assert wait_no_processes(token) == []


def test_play_stops_on_sigterm_and_its_printed_command_finishes_the_match(
    tmp_path: Path,
) -> None:
    out = tmp_path / "match"
    args = ["play", "random", "greedy", "--games", str(GAMES), "--out", str(out), "--quiet"]
    cli = Command(tmp_path, *args, ignore_sigint=True)
    cli.wait_for(lambda: len(db_rows(out)) >= 3, "three saved games")
    output = cli.stop()
    assert cli.process.returncode == 143, output
    assert_quiet(output)
    again = resume_command(output)
    assert again[:3] == ["play", "random", "greedy"], again
    finish(tmp_path, again)
    assert len(db_rows(out)) == GAMES


def test_grade_stops_on_sigterm_and_says_how_to_grade_with_the_same_deals(
    tmp_path: Path,
) -> None:
    out = tmp_path / "grade"
    cli = Command(tmp_path, "grade", str(RANDOM_PACKAGE), "--out", str(out))
    cli.wait_for(lambda: "tier 'beats random'" in cli.output, "the first tier's games")
    output = cli.stop()
    assert cli.process.returncode == 143, output
    assert_quiet(output)
    assert "Interrupted (SIGTERM): no grade written" in output
    # The terminal wraps long lines, inside the path too when it is long (pytest -n's is).
    assert f"--secret-file{out / 'secret.txt'}" in "".join(output.split())
    assert not (out / "grade.json").exists()


def test_serve_stops_on_sigterm_with_games_in_flight(tmp_path: Path) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "ben")
    arena = start_arena(folder)
    bots = start_bots(tokens, arena.address, tmp_path, reconnect=False)
    try:
        wait_until(lambda: arena.json("/api/games?limit=5"), 60, "games on the ladder")
        output = arena.stop(signal.SIGTERM, timeout=60)
    finally:
        for bot in bots:
            bot.kill()
    assert arena.process.returncode == 0, output
    assert "stopped:" in output
    assert_quiet(output)
