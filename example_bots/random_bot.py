"""A bot that plays uniformly at random among the legal options.

Run it against a referee:  python example_bots/random_bot.py
(the address, token and name come from TACOCAT_ARENA_ADDRESS, TACOCAT_ARENA_TOKEN and
TACOCAT_ARENA_BOT, which `tacocat-arena run` sets for you).
"""

import random

from tacocat_bot import Bot, run


class RandomBot(Bot):
    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def replace(self, view):
        # Discard a random number of cards, up to what the rules allow now (R1, R2).
        count = self.rng.randint(0, view.legal.max_replace)
        return self.rng.sample(view.hand, count)

    def duel(self, view):
        return self.rng.choice(view.legal.duel_values)

    def attack(self, view):
        # view.legal.attacks lists every legal attack: singles, sets and sequences.
        return self.rng.choice(view.legal.attacks)

    def defend(self, view):
        # For each attack card: defend with a random unused card that is high enough, or
        # sacrifice (None).
        unused = list(view.hand)
        answers = []
        for attack_card in view.current_attack:
            choices = [card for card in set(unused) if card >= attack_card] + [None]
            choice = self.rng.choice(choices)
            if choice is not None:
                unused.remove(choice)
            answers.append(choice)
        return answers


if __name__ == "__main__":
    run(RandomBot())
