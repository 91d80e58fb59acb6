"""A challenged bot that cannot start (a hosted version's own doing: its process exits before
it connects) is the person's game not played, said so on the page without the bot's own
lines, and a row that says so; the arena's task does not raise (an unretrieved exception's
traceback in the arena's log, a row "in play" for ever), and the slot it held is given back.
In process, with the bot a real process (its start is what fails)."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest

from tacocat_arena.human.challenges import NOT_PLAYED, Challenges, Opponent
from tacocat_arena.launch.spec import BotSpec

pytestmark = pytest.mark.slow

DIES = "import sys; print('the secret of my strategy'); sys.exit(3)"


def test_a_challenged_bot_that_cannot_start_is_a_game_not_played(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spawned: list[Coroutine[Any, Any, None]] = []
    released: list[bool] = []
    challenges = Challenges(tmp_path / "human", bot_move_timeout_s=1.0, spawn=spawned.append)
    spec = BotSpec("ann@v1", f'{sys.executable} -c "{DIES}"')
    started = challenges.start("bob", Opponent(spec, lambda: released.append(True)))
    with caplog.at_level(logging.WARNING, "tacocat_arena.human.challenges"):
        asyncio.run(asyncio.wait_for(spawned[0], 120))  # raised BotStartError before
    relay = started.relay
    assert relay.finished and relay.results == []
    assert relay.notice == "ann@v1 could not start: the game was not played", relay.notice
    assert "secret" not in str(relay.state())  # the person never sees the bot's lines
    (row,) = challenges.history("bob")
    assert row["result"] == "" and row["reason"] == NOT_PLAYED, row
    assert released == [True] and started.done
    assert "not played" in caplog.text and "exited with code 3" in caplog.text, caplog.text
    assert challenges.refusal("bob", "greedy") == ""  # bob may challenge again
