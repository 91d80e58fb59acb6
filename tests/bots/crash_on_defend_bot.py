"""A greedy SDK bot that dies (exit code 3, no goodbye) on its first defence: a hosted
version that crashes on one request kind, for ``replay --bot`` (tests/test_why_replay.py).
With ``fixed`` as its argument it defends as the greedy bot does: the author's next build."""

from __future__ import annotations

import os
import sys

from example_bots.greedy_bot import GreedyBot

from tacocat_bot import run


class CrashOnDefend(GreedyBot):
    name = "crash-on-defend"

    def defend(self, view):  # type: ignore[no-untyped-def]
        if "fixed" not in sys.argv[1:]:
            print("crash-on-defend: about to die on a defence", file=sys.stderr, flush=True)
            os._exit(3)
        return super().defend(view)


if __name__ == "__main__":
    run(CrashOnDefend())
