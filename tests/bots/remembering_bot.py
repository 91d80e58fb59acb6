"""A connected bot that remembers every deal it saw and bets the next game against the same
opponent is its last one replayed with the seats swapped (a duplicate pair's second game:
its opponent then holds the hand it held).  It writes one JSON line per game to
REMEMBER_LOG: the game, the opponent, its own first hand and the opponent's hand it predicts
(None when it has no earlier game against that opponent).  Random legal play otherwise.

It asks for one game at a time (``max_concurrent_games=1``), so the game it plays is the one
it was told of last.  Environment: as tests/bots/ladder_bot.py, plus REMEMBER_LOG (a file to
append to).
"""

import json
import os
import random
import sys

from tacocat_arena.play.policies import RandomPolicy
from tacocat_bot import Bot, run


class RememberingBot(Bot):
    name = "remembering"

    def __init__(self, log_path: str) -> None:
        self.policy = RandomPolicy(random.Random(7))
        self.log_path = log_path
        self.last_hand: dict[str, list[int]] = {}  # opponent -> my first hand against it
        self.games: dict[str, str] = {}  # game id -> opponent
        self.noted: set[str] = set()
        self.current = ""  # one game at a time (max_concurrent_games=1): the one started last

    def on_game_start(self, game_id: str, seat: int, opponent: str) -> None:
        self.games[game_id] = opponent
        self.current = game_id

    def act(self, view):
        self._note(view)
        return self.policy.act(view)

    def _note(self, view) -> None:
        game_id = self.current
        if game_id in self.noted or view.round != 1:
            return
        deal = next((e for e in view.events if e.get("type") == "deal"), None)
        if deal is None or "hand" not in deal:
            return
        self.noted.add(game_id)
        opponent = self.games.get(game_id, "")
        hand = sorted(deal["hand"])
        line = {
            "game": game_id,
            "opponent": opponent,
            "hand": hand,
            "predicted": self.last_hand.get(opponent),
        }
        self.last_hand[opponent] = hand
        with open(self.log_path, "a") as out:
            out.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    bot = RememberingBot(os.environ["REMEMBER_LOG"])
    summary = run(bot, max_concurrent_games=1)
    print(json.dumps({"games": summary.games, "errors": len(summary.errors)}), flush=True)
    sys.exit(0)
