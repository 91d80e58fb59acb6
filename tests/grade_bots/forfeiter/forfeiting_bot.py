"""A weak bot for the grader's tests: random moves, but in real games (not ``check``'s
scripted ones, whose opponent is called "check") it sleeps past the clock in every 10th
decision of a game from its 5th on, so it passes ``check`` and then forfeits by timeout (its
2 s are 0.9 s past the test rubric's clock, 1 s and the referee's 100 ms grace)."""

import time

from example_bots.random_bot import RandomBot

from tacocat_bot import run


class ForfeitingBot(RandomBot):
    name = "forfeiter"

    def __init__(self) -> None:
        super().__init__(seed=7)
        self.decisions = 0
        self.real_game = False

    def on_game_start(self, game_id, seat, opponent):
        self.real_game = opponent != "check"
        self.decisions = 0

    def _tick(self) -> None:
        self.decisions += 1
        if self.real_game and self.decisions >= 5 and self.decisions % 10 == 5:
            time.sleep(2.0)

    def replace(self, view):
        self._tick()
        return super().replace(view)

    def duel(self, view):
        self._tick()
        return super().duel(view)

    def attack(self, view):
        self._tick()
        return super().attack(view)

    def defend(self, view):
        self._tick()
        return super().defend(view)


if __name__ == "__main__":
    run(ForfeitingBot())
