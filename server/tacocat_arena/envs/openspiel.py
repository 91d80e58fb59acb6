"""The game for OpenSpiel (``pip install 'tacocat-arena[openspiel]'``).

    import pyspiel
    import tacocat_arena.envs.openspiel  # registers python_tacocat
    game = pyspiel.load_game("python_tacocat")

Design (docs/envs.md):

- **Chance**: the first node is a chance node that picks the engine's seed, uniformly among
  ``deals`` seeds (a game parameter, 65536 by default); every round's deck is a function of
  (seed, round) as in the engine (S2, M4).  A real deck has far too many orders to list as
  chance outcomes, so this is an explicit, sampled chance design: ``deals`` bounds how many
  distinct games there are, not which hands a round can hold.
- **Turns**: the game is sequential with imperfect information.  The simultaneous decisions
  (R3, D1) are taken seat 0 first and kept hidden from seat 1 until both have committed,
  which is exactly the turn-based form ``pyspiel.convert_to_turn_based`` makes of a
  simultaneous game, and what OpenSpiel's ISMCTS and CFR require.
- **Actions**: the flat action space of ``codec`` (one card per step, ``done``, ``sacrifice``).
- **Observations**: ``observation_tensor``/``observation_string`` are the seat's ``features``
  (built from ``engine.view.build_view``); ``information_state_string`` is everything the seat
  has seen since the start, each event as ``public_event`` gives it (perfect recall).
- **Returns**: +1/-1 for a won/lost game, 0 for a draw (W2).
- **Resampling** (``resample_from_infostate``, which ISMCTS uses): a world drawn by
  ``play.worlds.sample_world`` at the same moment, the earlier rounds kept as they were (the
  whole deck is reshuffled after every round, M4, so they hold nothing about this one).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pyspiel

from tacocat_arena.engine import DEFAULT_RULESET, Ruleset
from tacocat_arena.envs.codec import ActionCodec
from tacocat_arena.envs.features import Features
from tacocat_arena.envs.steps import MOVERS, StepGame
from tacocat_arena.play.policies import RandomPolicy
from tacocat_arena.play.worlds import sample_world

GAME_NAME = "python_tacocat"
DEFAULT_DEALS = 1 << 16
_CODEC = ActionCodec.of(DEFAULT_RULESET)
# Read once: a pybind11 enum's value costs more than the rest of current_player.
_CHANCE = int(pyspiel.PlayerId.CHANCE)
#: The player to move for each set of pending seats (OpenSpiel asks ~5 times a step).
_PLAYER = {
    pending: int(pyspiel.PlayerId.TERMINAL) if seat is None else seat
    for pending, seat in MOVERS.items()
}
_FEATURES = Features.of(DEFAULT_RULESET)


def _max_game_length(ruleset: Ruleset) -> int:
    """Steps in the longest game: per round, each seat's replace (a card each, then done),
    and every card of both hands played one step each, plus a done per attack."""
    hand = max(ruleset.hand_sizes)
    return 1 + ruleset.max_rounds * (2 * (hand + 1) + 2 * hand + hand)


_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Tacocat Spelled Backwards (tacocat-arena's engine)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"deals": DEFAULT_DEALS},
)


class TacocatGame(pyspiel.Game):
    """Tacocat Spelled Backwards over the arena's engine, with the default ruleset."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = dict(params or {})
        self.deals = int(params.get("deals", DEFAULT_DEALS))
        if not 1 <= self.deals <= 1 << 24:
            raise ValueError(f"deals must be in [1, 2**24], got {self.deals}")
        self.ruleset = DEFAULT_RULESET
        info = pyspiel.GameInfo(
            num_distinct_actions=_CODEC.size,
            max_chance_outcomes=self.deals,
            num_players=2,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=_max_game_length(self.ruleset),
        )
        super().__init__(_GAME_TYPE, info, params)

    def new_initial_state(self) -> TacocatState:
        """The chance node that picks the deal."""
        return TacocatState(self)

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> TacocatObserver:
        """The observer: the seat's features, or its whole history for perfect recall."""
        if params:
            raise ValueError(f"observation parameters are not supported, got {params}")
        return TacocatObserver(iig_obs_type)


class TacocatState(pyspiel.State):
    """A state: before the deal, a chance node; after it, a ``StepGame``."""

    def __init__(self, game: TacocatGame) -> None:
        super().__init__(game)
        self.deals = game.deals
        self.steps: StepGame | None = None

    @property
    def dealt(self) -> StepGame:
        if self.steps is None:
            raise ValueError("the deal has not been made: this is the chance node")
        return self.steps

    def current_player(self) -> int:
        steps = self.steps
        return _CHANCE if steps is None else _PLAYER[steps.game.pending]

    def _legal_actions(self, player: int) -> tuple[int, ...]:
        # The kept tuple itself: pybind11 reads any sequence into the C++ vector.
        steps = self.steps
        if steps is None or player != _PLAYER[steps.game.pending]:
            return ()
        return steps.legal_ids()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.steps is not None:
            raise ValueError("chance_outcomes called on a decision node")
        probability = 1.0 / self.deals
        return [(seed, probability) for seed in range(self.deals)]

    def _apply_action(self, action: int) -> None:
        if self.steps is None:
            if not 0 <= action < self.deals:
                raise ValueError(f"deal {action} is not in [0, {self.deals})")
            self.steps = StepGame(DEFAULT_RULESET, int(action))
        else:
            self.steps.step(action)  # IllegalActionError names the rule

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {action}"
        return _CODEC.name(action)

    def is_terminal(self) -> bool:
        steps = self.steps
        return steps is not None and steps.game.outcome is not None

    def returns(self) -> list[float]:
        return [0.0, 0.0] if self.steps is None else list(self.steps.returns())

    def resample_from_infostate(
        self, player: int, probability_sampler: Callable[[], float] | None = None
    ) -> TacocatState:
        """A state ``player`` cannot tell from this one (same information state string),
        whose hidden cards are drawn at random (see the module docstring)."""
        steps = self.dealt
        draw = probability_sampler() if probability_sampler is not None else random.random()
        rng = random.Random(int(draw * 2**53))
        view = steps.view(player)
        world = sample_world(view, rng)
        past = (*steps.archive, *steps.game.events[: steps.game.round_start])
        sampled = StepGame.around(world, archive=past)
        other = 1 - player
        if steps.mover == player and other in world.pending and other < player:
            # the other seat has committed its simultaneous choice, unseen: draw one for it
            sampled.apply(other, RandomPolicy(rng).act(sampled.view(other)))
        elif player in steps.committed:  # its own simultaneous choice, known to it alone
            sampled.apply(player, steps.committed[player])
        sampled.chosen = steps.chosen_by(player)
        state = TacocatState(self.get_game())
        state.steps = sampled
        return state

    def __str__(self) -> str:
        if self.steps is None:
            return "chance: the deal"
        game = self.steps.game
        return (
            f"round {game.round} tacocat {game.tacocat} hands {game.hands[0]} {game.hands[1]} "
            f"phase {game.phase.value if game.phase else 'over'} chosen {self.steps.chosen}"
        )


class TacocatObserver:
    """OpenSpiel's observer of a seat: ``features`` as a tensor, text, or the whole history."""

    def __init__(self, iig_obs_type: Any) -> None:
        self.perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        self.tensor = np.zeros(_FEATURES.size, np.float32)
        self.dict = {"features": self.tensor}

    def set_from(self, state: TacocatState, player: int) -> None:
        """Fill ``tensor`` with ``player``'s features (zeros before the deal)."""
        if state.steps is None:
            self.tensor.fill(0.0)
            return
        steps = state.steps
        packed = _FEATURES.pack(steps.view(player), steps.chosen_by(player))
        self.tensor[:] = np.frombuffer(packed, np.float32)

    def string_from(self, state: TacocatState, player: int) -> str:
        """``player``'s observation, or its information state with perfect recall."""
        if state.steps is None:
            return f"seat {player} before the deal"
        steps = state.steps
        if self.perfect_recall:
            return steps.history(player)
        return _FEATURES.describe(steps.view(player), steps.chosen_by(player))


class PolicyBot(pyspiel.Bot):
    """An arena policy (``GreedyPolicy``, an SDK ``Bot``...) as an OpenSpiel bot: it decides
    the whole engine action at the first step of a decision and plays its ids one by one."""

    def __init__(self, player: int, policy: Any) -> None:
        pyspiel.Bot.__init__(self)
        self.player = player
        self.policy = policy
        self._path: list[int] = []

    def restart_at(self, state: TacocatState) -> None:
        self._path = []

    def step(self, state: TacocatState) -> int:
        steps = state.dealt
        if not steps.chosen:
            self._path = list(_CODEC.path(self.policy.act(steps.view(self.player))))
        return self._path.pop(0)


class EngineRolloutEvaluator:
    """An evaluator for OpenSpiel's MCTS and ISMCTS bots: the rest of the game played on the
    engine by ``GreedyPolicy`` for both seats (much faster than stepping a Python state)."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng if rng is not None else random.Random(0)

    def evaluate(self, state: TacocatState) -> np.ndarray:
        from tacocat_arena.play.policies import GreedyPolicy

        steps = state.dealt.clone()
        greedy = GreedyPolicy()
        if steps.chosen:  # finish the decision being built with its first legal ids
            seat = steps.mover
            while steps.chosen and steps.mover == seat:
                steps.step(steps.legal_ids()[-1] if seat is not None else 0)
        game = steps.game
        while game.outcome is None:
            for view in [steps.view(seat) for seat in sorted(game.pending)]:
                game.apply(view.seat, greedy.act(view))
        return np.array(steps.returns())

    def prior(self, state: TacocatState) -> list[tuple[int, float]]:
        legal = state.legal_actions(state.current_player())
        return [(action, 1.0 / len(legal)) for action in legal]


pyspiel.register_game(_GAME_TYPE, TacocatGame)
