"""``tacocat-arena check``: every example bot passes, and each broken bot fails the check that
names its flaw.  The bots are real processes over loopback gRPC, started as `run` starts them;
the command runs in this process (``check_in_process``: Click, the same options and report)
where the claim is the check's, and as its own process where it is the command's (its errors,
its options' units, its environment: the last tests)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from check_support import REPO_ROOT, check_in_process, statuses

from tacocat_arena.check import CHECK_NAMES, CheckReport, Status, check_bot
from tacocat_arena.launch.spec import BotSpec
from tacocat_arena.referee.settings import ClockSettings

pytestmark = [pytest.mark.slow]

RAW_BOT = "python tests/check_bots/raw_bot.py"


@pytest.mark.parametrize("bot", ["builtin:random", "builtin:greedy", "builtin:search"])
def test_every_check_passes_on_the_python_example_bots(bot: str) -> None:
    code, report = check_in_process(bot)
    failed = [r for r in report["results"] if r["status"] != "pass"]
    assert code == 0 and report["passed"], failed
    assert [r["name"] for r in report["results"]] == list(CHECK_NAMES)
    assert not failed  # the SDK accepts batches, so not even `batches` is skipped


@pytest.mark.parametrize("together", ["one loop", "two threads"])
def test_two_checks_at_once_in_one_process_leave_each_other_s_bot_alone(
    together: str, tmp_path: Path
) -> None:
    """Two checks of bots of one name at once, in one event loop (as the arena's gates run)
    or in two threads: the first ending kills nothing of the second's.  Their bots shared a
    cgroup named for the bot, and the first's removal SIGKILLed the second's bot mid-check.
    Files order it: the first's bot exits once the second's is up; the second's connects
    once the first check has ended, its bot stopped and its cgroups removed."""
    up, done = tmp_path / "up", tmp_path / "first-done"
    clock = ClockSettings.from_seconds(2.0)

    async def first() -> CheckReport:
        spec = BotSpec.checked("bot", f"python tests/check_bots/late_bot.py --exit {up}")
        report = await check_bot(spec, clock, log_path=tmp_path / "first.log", cwd=REPO_ROOT)
        done.touch()
        return report

    async def second() -> CheckReport:
        spec = BotSpec.checked("bot", f"python tests/check_bots/late_bot.py {up} {done}")
        return await check_bot(spec, clock, log_path=tmp_path / "second.log", cwd=REPO_ROOT)

    if together == "one loop":

        async def both() -> list[CheckReport]:
            return list(await asyncio.gather(first(), second()))

        ended, checked = asyncio.run(both())
    else:
        reports: dict[str, CheckReport] = {}
        threads = [
            threading.Thread(target=lambda f=f: reports.__setitem__(f.__name__, asyncio.run(f())))
            for f in (first, second)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        ended, checked = reports["first"], reports["second"]
    # The first's bot left on its own once the second's was up...
    assert ended.results[0].got == "exited with code 3 before its Hello", ended.results
    # ...and the second's bot lived through the first's end, to pass every check.
    log = (tmp_path / "second.log").read_text(errors="replace")
    assert "killed by signal" not in log, log
    assert checked.passed, [r for r in checked.results if r.status is not Status.PASS]


def test_a_bot_written_from_the_proto_alone_passes_and_skips_only_batches() -> None:
    code, report = check_in_process(f"{RAW_BOT} none")
    assert code == 0, report
    skipped = {name for name, status in statuses(report).items() if status != "pass"}
    assert skipped == {"batches"}
    (batches,) = [r for r in report["results"] if r["name"] == "batches"]
    assert "accept_batches" in batches["detail"]


@pytest.mark.parametrize(
    ("flaw", "failing"),
    [
        ("ignore-errors", {"errors-logged"}),
        ("no-jumbo-defence", {"defend-sequence", "defend-set-with-sacrifice"}),
        ("exit-on-game-end", {"replace-second"}),
    ],
)
def test_a_broken_bot_fails_the_check_that_names_its_flaw(flaw: str, failing: set[str]) -> None:
    # An allowance a loaded machine never misses, so that only the flaw can fail a check.
    code, report = check_in_process(f"{RAW_BOT} {flaw}", "--move-timeout", "1")
    assert code == 1
    outcome = statuses(report)
    assert failing <= {name for name, status in outcome.items() if status == "fail"}
    # Everything before the first failure passed: the check blames the flaw, not the bot.
    first = min(CHECK_NAMES.index(name) for name in failing)
    assert all(outcome[name] in ("pass", "skip") for name in CHECK_NAMES[:first]), outcome


def test_an_answer_to_the_wrong_request_is_named_in_the_failure() -> None:
    """The bot answers its first request (replace-first's) as if it were the next one, and
    every later one right: only that check fails, naming both requests."""
    code, report = check_in_process(f"{RAW_BOT} wrong-request-id", "--move-timeout", "0.2")
    assert code == 1
    first = report["results"][1]
    assert (first["name"], first["status"]) == ("replace-first", "fail")
    assert "request 1" in first["expected"]
    assert "request_id 2" in first["got"] and "never sent" in first["got"]
    failed = [name for name, status in statuses(report).items() if status == "fail"]
    assert failed == ["replace-first"], report["results"]


def test_a_bot_that_exits_at_once_fails_the_handshake_and_runs_nothing_else() -> None:
    code, report = check_in_process(f"{sys.executable} -c 'raise SystemExit(3)'")
    assert code == 1
    outcome = statuses(report)
    assert outcome["handshake"] == "fail"
    assert "exited with code 3" in report["results"][0]["got"]
    assert set(outcome.values()) == {"fail", "not run"}


def test_a_missing_command_is_a_clear_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", "check", "no-such-bot-command"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "Error:" in done.stderr and "no-such-bot-command" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("value", "allowance", "warned"), [("1.5", "1500 ms", False), ("2000", "2000 ms", True)]
)
def test_the_move_timeout_is_in_seconds_as_for_run(
    value: str, allowance: str, warned: bool
) -> None:
    """One unit for the clock everywhere; an old value in milliseconds (over 600) still works
    and says how to write it now."""
    done = subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", "check", "no-such-bot-command"]
        + ["--move-timeout", value],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert f"(decision allowance {allowance})" in done.stdout
    assert ("--move-timeout is in seconds now" in done.stderr) is warned
    assert ("write --move-timeout 2" in done.stderr) is warned


def test_check_shows_the_name_the_bot_gives_itself_unless_told_one() -> None:
    """Issue 37: check told every bot TACOCAT_ARENA_BOT=bot, so the SDK (which prefers it, as a
    tournament needs) named every bot 'bot'.  Now it tells none unless ``--name`` is given."""
    code, report = check_in_process("python example_bots/greedy_bot.py")
    assert code == 0 and report["bot_name"] == "greedy", report["bot_name"]
    assert "bot_name 'greedy'" in report["results"][0]["detail"]
    code, report = check_in_process("python example_bots/greedy_bot.py", "--name", "mine")
    assert code == 0 and report["bot_name"] == "mine", report["bot_name"]
    # Not the runner's own variable either: the check's environment is the bot's.
    done = subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", "check", "python example_bots/greedy_bot.py",
         "--sandbox", "none"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=180,
        env={**os.environ, "TACOCAT_ARENA_BOT": "leaked"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "check of bot 'greedy': 22 of 22 checks passed" in done.stdout, done.stdout


def test_a_bot_that_needs_its_name_told_fails_the_handshake_saying_why() -> None:
    code, report = check_in_process("python tests/check_bots/needs_name_bot.py")
    handshake = report["results"][0]
    assert code == 1 and handshake["status"] == "fail", handshake
    assert "exited with code" in handshake["got"] and "--name NAME" in handshake["got"], handshake
    code, report = check_in_process("python tests/check_bots/needs_name_bot.py", "--name", "mine")
    handshake = report["results"][0]
    assert code == 1 and "--name" not in handshake["got"], handshake  # told: no such hint


def test_no_limit_on_the_clock_stays_no_limit_in_the_check() -> None:
    """A clock of no limit (``serve --move-timeout 0``) is no limit for the arena's gate too:
    no decision is judged by its time (the gate turned it into 2 s; an allowance of 0 would
    have failed every decision)."""
    spec = BotSpec.checked("bot", "builtin:random")
    report = asyncio.run(check_bot(spec, ClockSettings(decision_ms=0)))
    assert report.passed, report.results
    (timing,) = [r for r in report.results if r.name == "decision-time"]
    assert timing.status is Status.PASS and timing.detail.endswith("(no limit)"), timing
