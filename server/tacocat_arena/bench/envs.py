"""``bench envs``: steps per second of each learning-library wrapper, and of the engine.

Every wrapper is driven the way a learner drives it, with uniformly random legal ids from
its own action mask or legal-action list, for the same number of games, and timed in CPU
seconds of this process (one core).  A *step* is one flat id (``envs.codec``); the engine's
own rate is given both per decision (one whole action of one seat) and per flat step, so the
cost of each wrapper reads as a ratio.  A library that is not installed is reported as such.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from tacocat_arena.bench.engine import bench_engine


@dataclass(frozen=True)
class EnvFigures:
    """One wrapper's measurement (``steps`` is None when its library is missing)."""

    name: str
    games: int
    steps: int | None
    cpu_seconds: float
    note: str = ""

    @property
    def steps_per_second(self) -> float:
        return (self.steps or 0) / self.cpu_seconds if self.cpu_seconds else 0.0


def _timed(name: str, games: int, run: Callable[[], int]) -> EnvFigures:
    try:
        start = time.process_time()
        steps = run()
        return EnvFigures(name, games, steps, time.process_time() - start)
    except ImportError as error:
        return EnvFigures(name, games, None, 0.0, f"not installed ({error.name})")


def bench_envs(games: int, *, seed: int = 1) -> list[EnvFigures]:
    """Play ``games`` random games through the engine and through each wrapper."""
    engine = bench_engine(games, seed=seed)
    figures = [
        EnvFigures("engine (decisions)", games, engine.decisions, engine.cpu_seconds),
        _timed("engine in flat steps (StepGame)", games, lambda: _step_games(games, seed)),
        _timed("PettingZoo raw_env", games, lambda: _pettingzoo(games, seed)),
        _timed("Gymnasium vs builtin:random", games, lambda: _gymnasium(games, seed)),
        _timed("OpenSpiel python_tacocat", games, lambda: _openspiel(games, seed)),
    ]
    return figures


def _step_games(games: int, seed: int) -> int:
    from tacocat_arena.envs.steps import StepGame

    rng = random.Random(seed)
    steps = 0
    for index in range(games):
        game = StepGame(seed=seed * 1_000_003 + index)
        while not game.is_over:
            legal = game.legal_ids()
            game.step(legal[int(rng.random() * len(legal))])
            steps += 1
    return steps


def _pettingzoo(games: int, seed: int) -> int:
    from tacocat_arena.envs.pettingzoo import raw_env

    rng = random.Random(seed)
    environment = raw_env()
    steps = 0
    for index in range(games):
        environment.reset(seed=seed * 1_000_003 + index)
        for _agent in environment.agent_iter():
            observation, _, termination, truncation, _ = environment.last()
            if termination or truncation:
                environment.step(None)
                continue
            legal = observation["action_mask"].nonzero()[0]
            environment.step(int(legal[int(rng.random() * len(legal))]))
            steps += 1
    return steps


def _gymnasium(games: int, seed: int) -> int:
    from tacocat_arena.envs.gymnasium import TacocatEnv

    rng = random.Random(seed)
    environment = TacocatEnv(opponent="builtin:random", seat=None)
    steps = 0
    for index in range(games):
        _, info = environment.reset(seed=seed * 1_000_003 + index)
        terminated = False
        while not terminated:
            legal = info["action_mask"].nonzero()[0]
            _, _, terminated, _, info = environment.step(int(legal[int(rng.random() * len(legal))]))
            steps += 1
    return steps


def _openspiel(games: int, seed: int) -> int:
    import pyspiel

    import tacocat_arena.envs.openspiel  # noqa: F401  (registers the game)

    rng = random.Random(seed)
    game = pyspiel.load_game("python_tacocat")
    steps = 0
    for index in range(games):
        state = game.new_initial_state()
        state.apply_action((seed * 1_000_003 + index) % game.max_chance_outcomes())
        while not state.is_terminal():
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.random() * len(legal))])
            steps += 1
    return steps
