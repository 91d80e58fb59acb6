"""The Python SDK never raises out of its session for a request it cannot match (issue 37,
point 2).

``check``'s concurrent-games check played its other games on after one failed and their
GameEnds were sent, so a bot whose attack raised or was illegal got a DecisionRequest of a
game it had ended; the SDK's ``games[request.game_id]`` raised KeyError, the bot died, and
``check`` blamed it in the next check ("expected the bot to stay connected").  Both are
fixed: the check stops its other games first, and the SDK leaves such a request unanswered
(the referee's mistake), says so and goes on.
"""

from __future__ import annotations

import asyncio
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tacocat.v1 import arena_pb2 as pb
from tacocat_arena.check import check_bot
from tacocat_arena.engine import DEFAULT_RULESET
from tacocat_arena.launch.sandbox import SandboxMode
from tacocat_arena.launch.spec import BotSpec
from tacocat_arena.referee.settings import ClockSettings
from tacocat_bot import Bot
from tacocat_bot.client import SessionSummary, _BotErrors, _decide, _GameInfo

RAISING = """
from tacocat_bot import Bot, run
class Raising(Bot):
    name = "raising"
    def attack(self, view):
        raise RuntimeError("my attack is broken")
run(Raising())
"""
ILLEGAL = """
from tacocat_bot import Bot, run
class Illegal(Bot):
    name = "illegal"
    def attack(self, view):
        return list(view.hand)  # every card: P6 (keep one) broken
run(Illegal())
"""


def test_a_request_of_no_game_of_the_session_is_left_unanswered_and_counted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    summary = SessionSummary()
    policy = _BotErrors("Bot", strict=True, summary=summary)  # strict: nothing is covered up
    request = pb.DecisionRequest(game_id="check-23", request_id=7, kind=pb.DECISION_KIND_DUEL)
    assert _decide(Bot(), request, {}, policy, summary) is None
    assert (
        _decide(Bot(), request, {"other": _GameInfo(DEFAULT_RULESET, 0)}, policy, summary) is None
    )
    assert summary.unmatched == 2 and summary.bot_errors == 0
    said = capsys.readouterr().err
    assert "left request 7 of game check-23 unanswered" in said
    assert "no GameStart of that game in this session" in said


#: Runs of the whole check per bot (twenty in all), two at a time.
RUNS = 10
#: ``check``'s default decision allowance (its --move-timeout).
CHECK_MOVE_TIMEOUT_S = 2.0


def _check(command: str, log: Path) -> dict[str, Any]:
    """What ``tacocat-arena check COMMAND --json --log LOG`` reports, checked in this process
    by the function the command calls (its bot a real process, in the sandbox check picks):
    twenty starts of the CLI were ~10 s of this test's CPU (tests/test_check.py runs the
    command itself)."""
    report = asyncio.run(
        check_bot(
            BotSpec.checked("bot", command),
            ClockSettings.from_seconds(CHECK_MOVE_TIMEOUT_S),
            tell_name=False,  # check without --name
            log_path=log,
            sandbox=SandboxMode.AUTO,
        )
    )
    return report.to_json()


@pytest.mark.slow
def test_check_twenty_times_with_raising_and_illegal_bots_gives_no_sdk_error(
    tmp_path: Path,
) -> None:
    scripts = {}
    for name, text in (("raising", RAISING), ("illegal", ILLEGAL)):
        scripts[name] = tmp_path / f"{name}.py"
        scripts[name].write_text(text, encoding="utf-8")

    def one(job: tuple[str, int]) -> tuple[str, Path, dict[str, Any]]:
        name, index = job
        log = tmp_path / f"{name}-{index}.log"
        return name, log, _check(f"{sys.executable} {scripts[name]}", log)

    # Two at a time, each in a thread of its own with its own event loop: two checks at
    # once in one process run apart (test_check.py's two-checks test says so).
    jobs = [(name, i) for i in range(RUNS) for name in scripts]
    with ThreadPoolExecutor(2) as pool:
        reports = list(pool.map(one, jobs))
    assert len(reports) == 2 * RUNS
    for name, log, report in reports:
        by_name = {r["name"]: r for r in report["results"]}
        output = log.read_text(encoding="utf-8", errors="replace")
        where = f"{name} ({log}): {[(r['name'], r['status'], r['got']) for r in report['results']]}"
        # The bot's own failures fail their checks, and only those...
        assert by_name["attack-single"]["status"] == "fail", where
        assert by_name["concurrent-games"]["status"] == "fail", where
        # ...the session outlives them: every later check ran, the bot left when told.
        assert by_name["batches"]["status"] == "pass", where
        # (It must exit with code 0 within 5 s; on a loaded machine a Python exit may be
        # slower and is killed, -9: not an SDK error.  An SDK error exits with code 1.)
        end = by_name["session-end"]
        assert end["status"] == "pass" or end["got"] == "exit code -9", where
        assert "KeyError" not in output, output
        assert "left request" not in output, output  # the check sent no stray request
