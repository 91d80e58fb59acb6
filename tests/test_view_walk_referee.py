"""The peeking bot over the real referee: two SDK bot processes on loopback walk every view
the SDK builds from the wire and find nothing RULES-SPEC I2 forbids."""

from __future__ import annotations

import json
from pathlib import Path

import arena_harness as h  # tests/bots (pytest pythonpath)
import pytest

from tacocat_arena.engine import DEFAULT_RULESET, replay
from tacocat_arena.referee import ClockSettings, RefereeSettings

PEEKING_BOT = h.BOTS_DIR / "peeking_bot.py"


@pytest.mark.slow
def test_peeking_bots_find_nothing_over_the_referee(tmp_path: Path) -> None:
    async def scenario() -> None:
        settings = RefereeSettings(clock=ClockSettings(decision_ms=5000))
        async with h.arena(settings) as (referee, port):
            with h.bot_farm(tmp_path, port) as farm:
                bots = [farm.start(name, script=PEEKING_BOT) for name in ("a", "b")]
                await referee.wait_for_session("a", 20)
                await referee.wait_for_session("b", 20)
                for index in range(4):
                    seats = ("a", "b") if index % 2 == 0 else ("b", "a")
                    report = await referee.play(
                        f"g{index}", seats, seed=2**40 + index // 2, ruleset=DEFAULT_RULESET
                    )
                    assert replay(report.record).outcome == report.outcome
                await referee.end_all_sessions("done")
                for bot in bots:
                    assert await h.wait_for_exit(bot.process, 10) == 0, bot.stderr_text()
                    (summary,) = [json.loads(line) for line in bot.record.read_text().splitlines()]
                    assert summary["games"] == 4 and summary["decisions"] > 40
                    assert summary["finds"] == []

    h.run_async(scenario(), 60)
