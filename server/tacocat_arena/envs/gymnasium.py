"""The game as a single-agent Gymnasium environment (``pip install 'tacocat-arena[gymnasium]'``).

    import gymnasium
    import tacocat_arena.envs.gymnasium  # registers the id
    env = gymnasium.make("tacocat_arena/Tacocat-v0", opponent="builtin:greedy?epsilon=0.1")

The agent plays one seat (``seat=0``, ``1``, or ``None`` for a random seat each episode); the
other seat is ``opponent``: a built-in's name or spec (``"greedy"``, ``"builtin:search?budget=30"``,
made anew and seeded from the environment's generator at every reset) or any policy object
with ``act(view) -> Action`` (an SDK ``Bot`` is one).  Observations are the seat's ``features``
vector; actions are ids of the flat action space (``codec``), one card per step; the legal ids
are ``info["action_mask"]`` and ``action_masks()`` (as sb3-contrib's MaskablePPO asks).  The
reward is +1 for a won game, -1 for a lost one, 0 for a draw and for every other step.  An
illegal id loses the game at once (reward -1, ``info["illegal_action"]`` says why), as it would
in the arena (a forfeit).
"""

from __future__ import annotations

from typing import Any, Protocol

import gymnasium
import numpy as np
from example_bots.builtin import make_bot
from gymnasium import spaces

from tacocat_arena.engine import DEFAULT_RULESET, Action, IllegalActionError, Ruleset, SeatView
from tacocat_arena.envs.features import Features
from tacocat_arena.envs.masks import Masks
from tacocat_arena.envs.steps import MOVERS, StepGame
from tacocat_arena.launch.builtins import BuiltinSpec, parse_builtin

ENV_ID = "tacocat_arena/Tacocat-v0"


class Opponent(Protocol):
    """A policy for the other seat."""

    def act(self, view: SeatView) -> Action: ...


class TacocatEnv(gymnasium.Env[np.ndarray, np.int64]):
    """One seat of Tacocat Spelled Backwards against a fixed opponent policy."""

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        opponent: str | Opponent = "greedy",
        seat: int | None = 0,
        ruleset: Ruleset = DEFAULT_RULESET,
        render_mode: str | None = None,
    ) -> None:
        if seat not in (0, 1, None):
            raise ValueError(f"seat must be 0, 1 or None (random), got {seat!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.ruleset = ruleset
        self.render_mode = render_mode
        self.features = Features.of(ruleset)
        self._opponent_spec: BuiltinSpec | None = None
        self._opponent: Opponent
        if isinstance(opponent, str):
            self._opponent_spec = parse_builtin(opponent)  # BuiltinError names the problem
            self._opponent = make_bot(self._opponent_spec, seed=0)
        elif callable(getattr(opponent, "act", None)):
            self._opponent = opponent
        else:
            raise TypeError(
                f"opponent must be a built-in's name or have act(view), got {opponent!r}"
            )
        self._fixed_seat = seat
        self.seat = 0 if seat is None else seat
        self._steps = StepGame(ruleset, 0)
        size = self._steps.codec.size
        self._masks = Masks(size, bool)
        self._info_masks = Masks(size, np.int8)
        self.observation_space = spaces.Box(0.0, 1.0, (self.features.size,), np.float32)
        self.action_space = spaces.Discrete(size)

    @property
    def game(self) -> StepGame:
        """The step game being played (its ``game`` is the engine's)."""
        return self._steps

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """A new game (and seat, if random); the opponent's first moves are played."""
        super().reset(seed=seed)
        rng = self.np_random
        if self._fixed_seat is None:
            self.seat = int(rng.integers(2))
        self._steps = StepGame(self.ruleset, int(rng.integers(2**63)))
        if self._opponent_spec is not None:
            self._opponent = make_bot(self._opponent_spec, seed=int(rng.integers(2**63)))
        self._play_opponent()
        return self._observed()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """One flat step for the agent, then the opponent's moves until the agent's turn."""
        steps = self._steps
        game = steps.game
        if game.outcome is not None:
            raise RuntimeError("the game is over: call reset()")
        try:
            steps.step(int(action))
        except IllegalActionError as error:
            return self._observed()[0], -1.0, True, False, {"illegal_action": str(error)}
        self._play_opponent()
        observation, info = self._observed()
        if game.outcome is None:
            return observation, 0.0, False, False, info
        return observation, steps.returns()[self.seat], True, False, info

    def action_masks(self) -> np.ndarray:
        """The legal ids now, as booleans."""
        steps = self._steps
        return self._masks.of(steps.legal_ids() if steps.mover == self.seat else ())

    def render(self) -> str | None:
        """The agent's view as text (``render_mode="ansi"``)."""
        if self.render_mode is None:
            return None
        return self.features.describe(self._steps.view(self.seat), self._steps.chosen_by(self.seat))

    def _play_opponent(self) -> None:
        steps, other = self._steps, 1 - self.seat
        game, act = steps.game, self._opponent.act
        while MOVERS[game.pending] == other:
            steps.apply(other, act(steps.view(other)))

    def _observed(self) -> tuple[np.ndarray, dict[str, Any]]:
        """The agent's observation and the step's info (its legal ids as a mask)."""
        steps, seat = self._steps, self.seat
        moving = MOVERS[steps.game.pending] == seat
        vector = self.features.pack(steps.view(seat), steps.chosen if moving else ())
        mask = self._info_masks.of(steps.legal_ids() if moving else ())
        return np.frombuffer(vector, _FLOAT32), {"action_mask": mask}


_FLOAT32 = np.dtype(np.float32)  # a dtype object: frombuffer takes it faster than the type

gymnasium.register(id=ENV_ID, entry_point=f"{__name__}:TacocatEnv")
