"""A random SDK bot with test behaviours, run as its own process by tests/test_referee.py.

It connects with ``tacocat_bot.run`` like any bot (TACOCAT_ARENA_ADDRESS / _TOKEN / _BOT) and
plays uniformly at random among the legal options.  Test knobs, all optional:

  TACOCAT_TEST_RECORD     file to append JSON lines to: game_start, game_end, error, done
  TACOCAT_TEST_SLEEP_S    sleep this long in the first decision (to miss its deadline)
  TACOCAT_TEST_EXIT_AFTER hard-exit the process (no goodbye) in decision number N+1
  TACOCAT_TEST_SEED       seed of the random choices (default 0)
"""

from __future__ import annotations

import json
import logging
import os
import random
import time

from tacocat_bot import Bot, run

RECORD = os.environ.get("TACOCAT_TEST_RECORD")


def record(**entry: object) -> None:
    if RECORD:
        with open(RECORD, "a", encoding="utf-8") as file:
            file.write(json.dumps(entry) + "\n")


class _ErrorRecorder(logging.Handler):
    """The SDK logs every referee Error as a warning: keep them."""

    def emit(self, record_: logging.LogRecord) -> None:
        record(event="error", text=record_.getMessage())


class ScriptedBot(Bot):
    name = "scripted"

    def __init__(self) -> None:
        self.rng = random.Random(int(os.environ.get("TACOCAT_TEST_SEED", "0")))
        self.sleep_s = float(os.environ.get("TACOCAT_TEST_SLEEP_S", "0"))
        exit_after = os.environ.get("TACOCAT_TEST_EXIT_AFTER")
        self.exit_after = None if exit_after is None else int(exit_after)
        self.decisions = 0

    def act(self, view):  # type: ignore[no-untyped-def]
        if self.exit_after is not None and self.decisions >= self.exit_after:
            record(event="exiting", decisions=self.decisions)
            os._exit(3)  # a crash: the connection drops without a goodbye
        if self.decisions == 0 and self.sleep_s:
            time.sleep(self.sleep_s)
        self.decisions += 1
        return super().act(view)

    def replace(self, view):  # type: ignore[no-untyped-def]
        return self.rng.sample(view.hand, self.rng.randint(0, view.legal.max_replace))

    def duel(self, view):  # type: ignore[no-untyped-def]
        return self.rng.choice(view.legal.duel_values)

    def attack(self, view):  # type: ignore[no-untyped-def]
        return self.rng.choice(view.legal.attacks)

    def defend(self, view):  # type: ignore[no-untyped-def]
        unused = list(view.hand)
        answers = []
        for attack_card in view.current_attack:
            choice = self.rng.choice([c for c in set(unused) if c >= attack_card] + [None])
            if choice is not None:
                unused.remove(choice)
            answers.append(choice)
        return answers

    def on_game_start(self, game_id: str, seat: int, opponent: str) -> None:
        record(event="game_start", game_id=game_id, seat=seat, opponent=opponent)

    def on_game_end(self, game_id: str, result: str, reason: str) -> None:
        record(event="game_end", game_id=game_id, result=result, reason=reason)


if __name__ == "__main__":
    logging.getLogger("tacocat_bot").addHandler(_ErrorRecorder())
    summary = run(ScriptedBot())
    record(event="done", games=summary.games, errors=len(summary.errors))
