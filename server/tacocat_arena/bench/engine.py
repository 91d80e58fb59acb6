"""Benchmarks that print figures (never timed assertions: machines are shared and noisy)."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from tacocat_arena.engine import DEFAULT_RULESET, Ruleset
from tacocat_arena.play.local import play_game
from tacocat_arena.play.policies import RandomPolicy


@dataclass(frozen=True)
class EngineFigures:
    """What ``bench engine`` measured; rates use CPU time of this process (one core)."""

    games: int
    decisions: int
    rounds: int
    cpu_seconds: float
    wall_seconds: float

    @property
    def games_per_second(self) -> float:
        return self.games / self.cpu_seconds

    @property
    def decisions_per_second(self) -> float:
        return self.decisions / self.cpu_seconds


def bench_engine(games: int, *, seed: int = 1, ruleset: Ruleset = DEFAULT_RULESET) -> EngineFigures:
    """Play ``games`` random-vs-random games in process, with full validation of every
    action, and count decisions (one seat's action applied to the engine)."""
    decisions = rounds = 0
    # One generator per seat for the whole run: seeding a Mersenne Twister costs as much as
    # a dozen decisions, and the games stay reproducible from ``seed``.
    policies = (RandomPolicy(random.Random(2 * seed)), RandomPolicy(random.Random(2 * seed + 1)))
    wall, cpu = time.perf_counter(), time.process_time()
    for index in range(games):
        game = play_game(policies, ruleset=ruleset, seed=seed * 1_000_003 + index)
        decisions += game.decisions
        rounds += game.round
    return EngineFigures(
        games, decisions, rounds, time.process_time() - cpu, time.perf_counter() - wall
    )
