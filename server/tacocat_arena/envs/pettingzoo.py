"""The game as a PettingZoo AEC environment (``pip install 'tacocat-arena[pettingzoo]'``).

    from tacocat_arena.envs.pettingzoo import env
    environment = env()
    environment.reset(seed=1)
    for agent in environment.agent_iter():
        observation, reward, termination, truncation, info = environment.last()
        action = None if termination or truncation else policy(observation)
        environment.step(action)

Agents ``seat_0`` and ``seat_1``.  As in PettingZoo's classic games, each observation is a dict
of ``observation`` (the seat's ``features`` vector) and ``action_mask`` (the legal ids of the
flat action space, ``codec``; all zeros for the seat not to move).  One step is one id: a
decision of several cards takes several steps of the same agent.  The simultaneous decisions
are taken seat 0 first, the committed choice hidden from seat 1 (see ``steps``).  The game's
end gives +1 to the winner and -1 to the loser (0 each for a draw); there is no truncation,
the round cap (W2) being part of the rules.  ``env()`` wraps ``raw_env()`` as the classic
games are: an illegal id ends the game with -1 for the agent that played it.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from tacocat_arena.engine import DEFAULT_RULESET, Ruleset
from tacocat_arena.envs.features import Features
from tacocat_arena.envs.masks import Masks
from tacocat_arena.envs.steps import MOVERS, StepGame

AGENTS = ("seat_0", "seat_1")
_SEAT_OF = {agent: seat for seat, agent in enumerate(AGENTS)}
_FLOAT32 = np.dtype(np.float32)  # a dtype object: frombuffer takes it faster than the type


def env(**kwargs: Any) -> AECEnv:
    """The environment with PettingZoo's usual wrappers (illegal move: -1 and the game ends)."""
    environment: AECEnv = raw_env(**kwargs)
    environment = wrappers.TerminateIllegalWrapper(environment, illegal_reward=-1)
    environment = wrappers.AssertOutOfBoundsWrapper(environment)
    return wrappers.OrderEnforcingWrapper(environment)


class raw_env(AECEnv):  # noqa: N801 (PettingZoo's name for the unwrapped environment)
    """Tacocat Spelled Backwards for two agents, one flat step at a time."""

    metadata = {"render_modes": ["ansi"], "name": "tacocat_v0", "is_parallelizable": False}

    def __init__(self, ruleset: Ruleset = DEFAULT_RULESET, render_mode: str | None = None):
        super().__init__()
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.ruleset = ruleset
        self.render_mode = render_mode
        self.features = Features.of(ruleset)
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        self._steps = StepGame(ruleset, 0)
        size = self._steps.codec.size
        self._masks = Masks(size, np.int8)
        observation = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (self.features.size,), np.float32),
                "action_mask": spaces.Box(0, 1, (size,), np.int8),
            }
        )
        self.observation_spaces = {agent: observation for agent in AGENTS}
        self.action_spaces = {agent: spaces.Discrete(size) for agent in AGENTS}
        self._seeds = random.Random()
        self._reset_bookkeeping()

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    @property
    def game(self) -> StepGame:
        """The step game being played (its ``game`` is the engine's)."""
        return self._steps

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game; ``seed`` fixes this deal and the deals of the resets that follow."""
        if seed is not None:
            self._seeds = random.Random(seed)
        self._steps = StepGame(self.ruleset, self._seeds.getrandbits(64))
        self.agents = list(AGENTS)
        self._reset_bookkeeping()

    def _reset_bookkeeping(self) -> None:
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self.agent_selection = AGENTS[self._steps.mover or 0]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The agent's features and its action mask (zeros unless it is to move)."""
        seat = _SEAT_OF[agent]
        steps = self._steps
        moving = MOVERS[steps.game.pending] == seat
        vector = self.features.pack(steps.view(seat), steps.chosen if moving else ())
        mask = self._masks.of(steps.legal_ids() if moving else ())
        return {"observation": np.frombuffer(vector, _FLOAT32), "action_mask": mask}

    def step(self, action: Any) -> None:
        """Take one flat step for ``agent_selection`` (None for an agent that is done)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        steps = self._steps
        steps.step(int(action))  # IllegalActionError (a ValueError) names the rule
        if steps.is_over:
            # The game's end is the only step with rewards: every other one leaves the
            # rewards all zeros, as they were (nothing to add to the cumulative rewards).
            self.rewards = dict(zip(AGENTS, steps.returns(), strict=True))
            self.terminations = dict.fromkeys(self.agents, True)
            self._accumulate_rewards()
        else:
            self.agent_selection = AGENTS[steps.mover]  # type: ignore[index]
        if self.render_mode == "ansi":
            print(self.render())

    def render(self) -> str | None:
        """The seat to move's view as text (``render_mode="ansi"``)."""
        if self.render_mode is None:
            return None
        seat = self._steps.mover
        if seat is None:
            outcome = self._steps.game.outcome
            return f"game over: {outcome}"
        return self.features.describe(self._steps.view(seat), self._steps.chosen)

    def close(self) -> None:
        """Nothing to release."""
