"""The PettingZoo AEC environment passes PettingZoo's own API and seed tests."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("pettingzoo", reason="needs the [pettingzoo] extra")

from pettingzoo.test import api_test  # noqa: E402
from pettingzoo.test.seed_test import seed_test  # noqa: E402

from tacocat_arena.engine import IllegalActionError  # noqa: E402
from tacocat_arena.envs.pettingzoo import env, raw_env  # noqa: E402


@pytest.mark.filterwarnings("ignore::UserWarning")  # dict observations, as the classic games
@pytest.mark.parametrize("make", [env, raw_env], ids=["env", "raw_env"])
def test_api_test(make):
    api_test(make(), num_cycles=1000)


def test_seed_test():
    seed_test(env, num_cycles=500)


def test_random_legal_games_end_zero_sum_with_both_agents_done():
    environment = raw_env()
    rng = random.Random(3)
    for seed in range(5):
        environment.reset(seed=seed)
        totals = dict.fromkeys(environment.possible_agents, 0.0)
        for agent in environment.agent_iter(10_000):
            observation, reward, termination, truncation, _ = environment.last()
            totals[agent] += reward
            if termination or truncation:
                environment.step(None)
                continue
            mask = observation["action_mask"]
            other = environment.observe("seat_1" if agent == "seat_0" else "seat_0")
            assert not other["action_mask"].any()  # only the agent to move has legal ids
            environment.step(rng.choice(mask.nonzero()[0].tolist()))
        assert not environment.agents
        assert sum(totals.values()) == 0 and set(totals.values()) <= {-1.0, 0.0, 1.0}


def test_raw_env_refuses_an_illegal_id_with_the_rule():
    environment = raw_env()
    environment.reset(seed=1)
    observation = environment.observe(environment.agent_selection)
    illegal = int(observation["action_mask"].tolist().index(0))
    with pytest.raises(IllegalActionError, match=r"^R1: action id"):
        environment.step(illegal)


def test_the_wrapped_env_ends_the_game_on_an_illegal_id(caplog):
    environment = env()
    environment.reset(seed=1)
    agent = environment.agent_selection
    observation, *_ = environment.last()
    environment.step(int(observation["action_mask"].tolist().index(0)))
    assert "Illegal move made" in caplog.text
    assert environment.rewards[agent] == -1
    assert all(environment.terminations.values())
