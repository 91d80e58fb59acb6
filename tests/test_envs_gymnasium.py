"""The Gymnasium environment passes Gymnasium's checker, against built-ins and SDK bots."""

from __future__ import annotations

import random

import pytest

gymnasium = pytest.importorskip("gymnasium", reason="needs the [gymnasium] extra")

from example_bots.greedy_bot import GreedyBot  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402

from tacocat_arena.envs.gymnasium import ENV_ID, TacocatEnv  # noqa: E402
from tacocat_arena.launch.builtins import BuiltinError  # noqa: E402


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(
    ("opponent", "seat"),
    [("greedy", 0), ("builtin:random", 1), ("builtin:greedy?epsilon=0.3", None)],
)
def test_check_env(opponent, seat):
    environment = gymnasium.make(ENV_ID, opponent=opponent, seat=seat)
    check_env(environment.unwrapped)


def test_an_sdk_bot_can_be_the_opponent_and_episodes_end_with_the_game():
    environment = TacocatEnv(opponent=GreedyBot(), seat=None)
    rng = random.Random(0)
    results = []
    for seed in range(6):
        _, info = environment.reset(seed=seed)
        terminated, reward = False, 0.0
        while not terminated:
            legal = info["action_mask"].nonzero()[0].tolist()
            assert legal and environment.game.mover == environment.seat
            _, reward, terminated, truncated, info = environment.step(rng.choice(legal))
            assert not truncated
        assert environment.game.is_over
        results.append(reward)
    assert set(results) <= {-1.0, 0.0, 1.0}


def test_an_illegal_id_loses_the_game_at_once():
    environment = TacocatEnv(opponent="random")
    _, info = environment.reset(seed=2)
    illegal = info["action_mask"].tolist().index(0)
    _, reward, terminated, _, info = environment.step(illegal)
    assert (reward, terminated) == (-1.0, True)
    assert info["illegal_action"].startswith("R1: action id")


def test_the_illegal_id_message_lists_the_legal_ids_with_what_each_means():
    """Issue 25: the message listed card values where it said ids ("legal: 4, 5, 7, 8, 10,
    done" when the legal ids were 3, 4, 6, 7, 9, 12)."""
    environment = TacocatEnv(opponent="random")
    _, info = environment.reset(seed=2)
    mask = info["action_mask"].tolist()
    illegal = mask.index(0)
    legal = [i for i, allowed in enumerate(mask) if allowed]
    codec = environment.game.codec
    _, _, _, _, info = environment.step(illegal)
    listed = ", ".join(
        f"{i} (done)" if i == codec.done else f"{i} (card {codec.value(i)})" for i in legal
    )
    assert info["illegal_action"] == (
        f"R1: action id {illegal} (card {codec.value(illegal)}) is not legal now; "
        f"legal ids: {listed}"
    )


def test_a_bad_opponent_is_refused_when_the_env_is_made():
    with pytest.raises(BuiltinError, match="unknown 'builtin:genius'"):
        TacocatEnv(opponent="genius")
    with pytest.raises(BuiltinError, match=r"epsilon=2 is out of range \[0, 1\]"):
        TacocatEnv(opponent="builtin:greedy?epsilon=2")
