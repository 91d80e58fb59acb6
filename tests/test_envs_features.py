"""The learning environments' fast paths give what their plain definitions give.

The features are written out here as their definition (one loop per group over every card
value, as docs/envs.md describes them), the legal ids are enumerated afresh, and both are
compared with what the encoder and the step game return on random games; the step game's kept
views follow changes made to its engine game directly; and the arrays the adapters return are
the caller's own (a kept observation does not change when the game goes on)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tacocat_arena.engine import DecisionKind, Ruleset, SeatView, build_view
from tacocat_arena.engine.ruleset import default_arrows
from tacocat_arena.envs.codec import ActionCodec
from tacocat_arena.envs.features import Features
from tacocat_arena.envs.steps import StepGame
from tacocat_arena.play.policies import RandomPolicy

KINDS = (DecisionKind.REPLACE, DecisionKind.DUEL, DecisionKind.ATTACK, DecisionKind.DEFEND)
SMALL = Ruleset(
    deck={1: 3, 2: 3, 3: 5, 5: 4, 9: 3},
    hand_sizes=(2, 3, 4, 3, 2),
    arrows=default_arrows(5),
    max_rounds=7,
)


def defined_features(ruleset: Ruleset, view: SeatView, chosen: tuple[int | None, ...]) -> list:
    """The features by their definition, every group counted value by value."""
    deck = ruleset.deck
    values = sorted(set(ruleset.cards()))
    largest = max(ruleset.hand_sizes)
    out = [1.0 if view.kind is kind else 0.0 for kind in KINDS]
    out.append(float(view.seat))
    for cards in (view.hand, tuple(c for c in chosen if c is not None), view.current_attack):
        out.extend(cards.count(v) / deck[v] for v in values)
    answering = (
        view.current_attack[len(chosen)]
        if view.kind is DecisionKind.DEFEND and len(chosen) < len(view.current_attack)
        else None
    )
    out.extend(1.0 if v == answering else 0.0 for v in values)
    out.extend(view.discards.count(v) / deck[v] for v in values)
    out.extend(1.0 if p == view.tacocat else 0.0 for p in range(ruleset.spaces + 2))
    out.extend(1.0 if covered else 0.0 for covered in view.covered)
    out.append(chosen.count(None) / largest)
    out.append(view.opponent_hand_size / largest)
    out.append(view.draw_pile_size / ruleset.deck_size)
    out.append(view.max_replace / largest)
    out.append(min(view.round, ruleset.max_rounds) / ruleset.max_rounds)
    out.append(view.distance_to_goal() / (ruleset.spaces + 1))
    out.append(view.distance_to_goal(view.opponent) / (ruleset.spaces + 1))
    out.append(1.0 if view.attacker == view.seat else 0.0)
    return out


def random_steps(ruleset: Ruleset, games: int, seed: int):
    """Every step game moment of ``games`` random games (the game, before each step)."""
    rng = random.Random(seed)
    for index in range(games):
        steps = StepGame(ruleset, seed * 1000 + index)
        while not steps.is_over:
            yield steps
            steps.step(rng.choice(steps.legal_ids()))


@pytest.mark.parametrize("ruleset", [Ruleset(), SMALL], ids=["default", "small"])
def test_the_encoder_gives_the_defined_features_for_both_seats_at_every_step(ruleset):
    features = Features.of(ruleset)
    checked = 0
    for steps in random_steps(ruleset, games=12, seed=5):
        for seat in (0, 1):
            chosen = steps.chosen_by(seat)
            vector = features.encode(steps.view(seat), chosen)
            defined = defined_features(ruleset, build_view(steps.game, seat), chosen)
            # The observations hold float32s: the definition's values, rounded to float32.
            assert vector == np.array(defined, np.float32).tolist()
            assert len(vector) == features.size
            packed = np.frombuffer(features.pack(steps.view(seat), chosen), np.float32)
            assert packed.tolist() == vector
            checked += 1
    assert checked > 500


@pytest.mark.parametrize("ruleset", [Ruleset(), SMALL], ids=["default", "small"])
def test_the_kept_legal_ids_are_the_ids_enumerated_afresh(ruleset):
    codec = ActionCodec.of(ruleset)
    for steps in random_steps(ruleset, games=12, seed=6):
        fresh = ActionCodec(codec.values)  # a codec with empty tables
        view = build_view(steps.game, steps.mover)
        assert steps.legal_ids() == fresh.legal_ids(view, steps.chosen)
        assert steps.view(steps.mover) == view


def test_the_step_games_views_follow_a_change_made_to_its_engine_game_directly():
    steps = StepGame(seed=3)
    policy = RandomPolicy(random.Random(1))
    for _ in range(30):
        seat = steps.mover
        before = steps.view(seat)
        assert steps.legal_ids()  # kept for this moment
        steps.game.apply(seat, policy.act(before))  # behind the step game's back
        if steps.is_over:
            break
        for each in (0, 1):
            assert steps.view(each) == build_view(steps.game, each)
        assert steps.legal_ids() == ActionCodec(steps.codec.values).legal_ids(
            build_view(steps.game, steps.mover), steps.chosen
        )


def test_a_kept_pettingzoo_observation_does_not_change_as_the_game_goes_on():
    from tacocat_arena.envs.pettingzoo import raw_env

    environment = raw_env()
    environment.reset(seed=4)
    kept = []
    for _ in range(40):
        observation, *_ = environment.last()
        kept.append({key: value.copy() for key, value in observation.items()})
        kept.append(observation)
        observation["action_mask"][:] = 0  # the caller may write into its own arrays
        again = environment.observe(environment.agent_selection)
        assert again["action_mask"].any()
        legal = np.flatnonzero(again["action_mask"])
        environment.step(int(legal[-1]))
    for copy, original in zip(kept[::2], kept[1::2], strict=True):
        assert np.array_equal(copy["observation"], original["observation"])


def test_a_kept_gymnasium_observation_and_mask_do_not_change_as_the_game_goes_on():
    from tacocat_arena.envs.gymnasium import TacocatEnv

    environment = TacocatEnv(opponent="random")
    observation, info = environment.reset(seed=5)
    kept = [(observation, observation.copy(), info["action_mask"], info["action_mask"].copy())]
    for _ in range(30):
        mask = environment.action_masks()
        assert np.array_equal(mask, info["action_mask"].astype(bool))
        mask[:] = False  # the caller's own array
        observation, _, terminated, _, info = environment.step(
            int(np.flatnonzero(mask | info["action_mask"].astype(bool))[0])
        )
        if terminated:
            break
        kept.append(
            (observation, observation.copy(), info["action_mask"], info["action_mask"].copy())
        )
    for observation, copy, mask, mask_copy in kept:
        assert np.array_equal(observation, copy) and np.array_equal(mask, mask_copy)
