"""A bot for the arena tests: random legal play through the SDK, optionally slow.

Environment: TACOCAT_ARENA_ADDRESS, TACOCAT_ARENA_BOT, TACOCAT_ARENA_TOKEN (as for any SDK bot),
LADDER_BOT_DELAY (seconds to think per decision, default 0), LADDER_BOT_SEED.  It exits with
status 0 when the session ends normally and prints the session's summary as one JSON line.
"""

import json
import os
import random
import sys
import time

from tacocat_arena.play.policies import RandomPolicy
from tacocat_bot import Bot, run


class LadderBot(Bot):
    name = "ladder"

    def __init__(self, delay: float, seed: int) -> None:
        self.delay = delay
        self.policy = RandomPolicy(random.Random(seed))

    def act(self, view):
        if self.delay:
            time.sleep(self.delay)
        return self.policy.act(view)


if __name__ == "__main__":
    delay = float(os.environ.get("LADDER_BOT_DELAY", "0"))
    summary = run(LadderBot(delay, int(os.environ.get("LADDER_BOT_SEED", "1"))))
    print(json.dumps({"games": summary.games, "errors": len(summary.errors)}), flush=True)
    sys.exit(0)
