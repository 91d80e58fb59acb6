"""An SDK bot that is slow on its first decisions and quick after: run as its own process.

Its first SLOW_CALLS decisions (TACOCAT_TEST_SLOW_CALLS) each sleep SLOW_S seconds
(TACOCAT_TEST_SLOW_S), far past the referee's clock; every later one thinks THINK_S
(TACOCAT_TEST_THINK_S, well within it) and plays the first legal option.  Each decision it
makes is logged on stderr (``decided N``), so a test can tell the work the SDK skipped.
"""

from __future__ import annotations

import os
import sys
import time

from tacocat_arena.engine import Action, SeatView
from tacocat_arena.protocol.wire import default_action
from tacocat_bot import Bot, run


class SlowStartBot(Bot):
    name = "slowstart"

    def __init__(self, slow_calls: int, slow_s: float, think_s: float) -> None:
        self.slow_calls = slow_calls
        self.slow_s = slow_s
        self.think_s = think_s
        self.calls = 0

    def act(self, view: SeatView) -> Action:
        self.calls += 1
        time.sleep(self.slow_s if self.calls <= self.slow_calls else self.think_s)
        print(f"decided {self.calls}", file=sys.stderr, flush=True)
        return default_action(view)


if __name__ == "__main__":
    run(
        SlowStartBot(
            int(os.environ.get("TACOCAT_TEST_SLOW_CALLS", "1")),
            float(os.environ.get("TACOCAT_TEST_SLOW_S", "2")),
            float(os.environ.get("TACOCAT_TEST_THINK_S", "0")),
        )
    )
