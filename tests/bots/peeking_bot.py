"""A bot that tries to cheat: at every decision it walks everything its view lets it reach
(tests/view_walk.py) looking for the opponent's cards, the draw pile, the seed or the game.

In process it is a ``Bot`` like any other (tests/test_view_walk.py); run as a script it
connects to a referee with ``tacocat_bot.run`` and writes what it found, one JSON line per
decision that found something and a final summary, to TACOCAT_TEST_RECORD.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/, for view_walk

from view_walk import peek  # noqa: E402

from tacocat_arena.engine import Action, SeatView  # noqa: E402
from tacocat_bot import Bot, run  # noqa: E402


class PeekingBot(Bot):
    """Plays the SDK's default legal moves; peeks through its whole view first."""

    name = "peeking"

    def __init__(self) -> None:
        self.finds: list[str] = []
        self.decisions = 0

    def act(self, view: SeatView) -> Action:
        self.decisions += 1
        self.finds.extend(peek(view))
        return super().act(view)


def main() -> None:
    bot = PeekingBot()
    summary = run(bot)
    record = os.environ.get("TACOCAT_TEST_RECORD")
    if record:
        entry = {"decisions": bot.decisions, "finds": bot.finds, "games": summary.games}
        Path(record).write_text(json.dumps(entry) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
