"""A bot that searches a tree of information sets: ISMCTS over sampled worlds.

Each decision runs ``iterations`` simulations of ``tacocat_arena.play.ismcts.IsmctsPolicy``:
sample the opponent's hand and the draw pile consistently with what this seat has seen,
descend a tree whose nodes are what the seat to move can know, finish the round greedily,
and credit the round's result.  On docs/sdk.md's ladder it plays the search bot even, at
several times its CPU per decision; ``builtin:ismcts?iterations=200`` makes it faster.

Run it:  python example_bots/ismcts_bot.py
"""

import random

from tacocat_arena.play.ismcts import IsmctsPolicy
from tacocat_bot import Bot, run


class IsmctsBot(Bot):
    name = "ismcts"

    def __init__(self, iterations: int = 600, uct: float = 0.7, seed: int | None = None) -> None:
        self.policy = IsmctsPolicy(iterations, uct=uct, rng=random.Random(seed))

    def act(self, view):
        return self.policy.act(view)


if __name__ == "__main__":
    run(IsmctsBot())
