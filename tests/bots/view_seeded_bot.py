"""A random bot whose every choice is a function of its view and a salt (argv[1]), run as its
own process by tests/test_swiss_run.py.

The example random bot draws from one generator per process, so what it plays depends on
which games that process played before; this one reseeds from the decision's view, so a game
goes the same whichever process plays it, and a resumed tournament can be compared with an
uninterrupted one game by game.
"""

from __future__ import annotations

import hashlib
import random
import sys

from example_bots.random_bot import RandomBot

from tacocat_bot import run


class ViewSeededBot(RandomBot):
    def __init__(self, salt: str) -> None:
        super().__init__()
        self.salt = salt

    def act(self, view):
        digest = hashlib.sha256(f"{self.salt}:{view!r}".encode()).digest()
        self.rng = random.Random(int.from_bytes(digest[:8], "big"))
        return super().act(view)


if __name__ == "__main__":
    run(ViewSeededBot(sys.argv[1] if len(sys.argv) > 1 else ""))
