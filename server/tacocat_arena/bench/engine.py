"""``bench engine``: random-vs-random games in process, per CPU second; with ``--against REV``
this tree and a worktree of REV in child processes, in turns (``trees``).

Benchmarks print figures, never timed assertions: machines are shared and noisy.  This file
is also what the children run: it imports nothing at its top that an older tree lacks.
"""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tacocat_arena.engine import DEFAULT_RULESET, Ruleset
from tacocat_arena.play.local import play_game
from tacocat_arena.play.policies import RandomPolicy

if TYPE_CHECKING:  # only: an older tree's package may lack it (the module docstring)
    from tacocat_arena.bench.trees import Comparison


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


def measure_engine(games: int, seed: int) -> list[float]:
    """``bench_engine`` in a child of ``bench engine --against`` (see ``trees.CHILD``): the
    figures as a JSON list."""
    f = bench_engine(games, seed=seed)
    return [f.games, f.decisions, f.rounds, f.cpu_seconds, f.wall_seconds]


def bench_engine_against(
    games: int, against: str, *, rounds: int = 5, seed: int = 1
) -> Comparison[EngineFigures]:
    """``bench_engine`` in a child process on this tree and one on a worktree of commit
    ``against``, in turns (each first in half the rounds), the same games in both; raises
    ``trees.BenchError`` if the comparison cannot be made."""
    from tacocat_arena.bench.trees import Comparison, compared, in_turns

    load_before = os.getloadavg()
    figures: dict[str, list[EngineFigures]] = {"mine": [], "theirs": []}
    with compared(against, __file__, "measure_engine") as (this, other, mine, theirs):
        into = {id(mine): figures["mine"], id(theirs): figures["theirs"]}
        for index in range(rounds):
            for runner in in_turns(index, mine, theirs):
                games_, decisions, rounds_, cpu, wall = runner.ask(games, seed)
                into[id(runner)].append(
                    EngineFigures(int(games_), int(decisions), int(rounds_), cpu, wall)
                )
    return Comparison(
        this, other, tuple(figures["mine"]), tuple(figures["theirs"]), load_before, os.getloadavg()
    )
