"""A bot with a simple plan: keep a low card for the showdown, fight with the high ones.

The round is won by the LOWER last card, and a sacrifice always costs your lowest card. So:
  - replace: throw away middle cards (5-8), which are good neither for fighting nor for the
    final showdown;
  - duel: win the first attack with your highest card;
  - attack: play as many cards as possible, never your lowest one, to force sacrifices;
  - defend: beat each attack card with the cheapest card that does it, never your lowest.

With ``epsilon`` > 0 it plays a uniformly random legal move instead, with that chance at every
decision (``builtin:greedy?epsilon=0.1``): a baseline whose strength can be dialled down.

Run it:  python example_bots/greedy_bot.py
"""

import random

# The SDK first: it defers what a bot never uses before the engine can load it.
from tacocat_bot import Bot, run

# isort: split

from tacocat_arena.play.policies import RandomPolicy


class GreedyBot(Bot):
    name = "greedy"

    def __init__(self, epsilon: float = 0.0, seed: int | None = None) -> None:
        self.epsilon = epsilon
        self.rng = random.Random(seed)
        self.explore = RandomPolicy(self.rng)

    def act(self, view):
        if self.epsilon and self.rng.random() < self.epsilon:
            return self.explore.act(view)
        return super().act(view)

    def replace(self, view):
        lowest, *rest = view.hand
        middle = [card for card in rest if 5 <= card <= 8]
        return middle[: view.legal.max_replace]

    def duel(self, view):
        # With two cards, keep the higher one back: the lower one wins the showdown.
        return view.hand[-1] if len(view.hand) > 2 else view.hand[0]

    def attack(self, view):
        lowest = view.hand[0]
        spares = view.hand.count(lowest) - 1  # copies of the lowest card we may spend

        def score(attack):
            keeps_lowest = attack.count(lowest) <= spares
            return (keeps_lowest, len(attack), -max(attack))

        return max(view.legal.attacks, key=score)

    def defend(self, view):
        unused = list(view.hand[1:])  # never spend the lowest card
        answers = []
        for attack_card in view.current_attack:
            fitting = [card for card in unused if card >= attack_card]
            if fitting:
                unused.remove(fitting[0])
                answers.append(fitting[0])
            else:
                answers.append(None)  # sacrifice
        return answers


if __name__ == "__main__":
    run(GreedyBot())
