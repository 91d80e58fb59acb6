"""The flat action space reaches every legal engine action and nothing else; the features
and the step game show a seat nothing it may not know (RULES-SPEC I1, I2)."""

from __future__ import annotations

import random
from itertools import combinations, islice

import pytest

from tacocat_arena.engine import (
    Attack,
    DecisionKind,
    Defend,
    Duel,
    Game,
    IllegalActionError,
    Replace,
    build_view,
    enumerate_defences,
)
from tacocat_arena.envs.codec import ActionCodec
from tacocat_arena.envs.features import Features
from tacocat_arena.envs.steps import StepGame
from tacocat_arena.play.policies import RandomPolicy
from tacocat_arena.play.worlds import sample_world

CODEC = ActionCodec.of(Game().ruleset)


def engine_actions(view):
    """Every distinct legal engine action of ``view``'s decision, from the engine's lists."""
    if view.kind is DecisionKind.DUEL:
        return {Duel(v) for v in view.legal.duel_values}
    if view.kind is DecisionKind.ATTACK:
        return {Attack(cards) for cards in view.legal.attacks}
    if view.kind is DecisionKind.DEFEND:
        return {Defend(a) for a in islice(enumerate_defences(view.current_attack, view.hand), 5000)}
    return {
        Replace(tuple(sorted(cards)))
        for size in range(view.max_replace + 1)
        for cards in combinations(view.hand, size)
    }


def codec_actions(view, limit=5000):
    """Every engine action some path of legal ids completes (depth first)."""
    found = set()

    def walk(chosen):
        for action_id in CODEC.legal_ids(view, chosen):
            if len(found) >= limit:
                return
            after, action = CODEC.step(view, chosen, action_id)
            if action is None:
                walk(after)
            else:
                found.add(action)

    walk(())
    return found


def decision_views(games=10, seed=0):
    """Views of every pending decision along random games."""
    policy = RandomPolicy(random.Random(seed))
    for index in range(games):
        game = Game(seed=seed * 1000 + index)
        while game.outcome is None:
            views = [build_view(game, seat) for seat in sorted(game.pending)]
            yield from views
            for view in views:
                game.apply(view.seat, policy.act(view))


def test_the_ids_reach_exactly_the_legal_actions_of_every_decision():
    kinds = set()
    for view in decision_views():
        kinds.add(view.kind)
        expected = engine_actions(view)
        if view.kind is DecisionKind.DEFEND and len(expected) >= 5000:
            continue  # a long jumbo: the enumerations are cut, checked below
        reached = codec_actions(view)
        if view.kind is DecisionKind.DEFEND:
            assert reached == expected
        elif view.kind is DecisionKind.REPLACE:
            assert reached == expected, view.hand
        else:
            assert reached == expected
        for action in expected:
            chosen, completed = (), None
            for action_id in CODEC.path(action):
                chosen, completed = CODEC.step(view, chosen, action_id)
            assert completed == action
    assert kinds == set(DecisionKind)


def test_every_completed_action_is_accepted_by_the_engine():
    game = Game(seed=5)
    policy = RandomPolicy(random.Random(1))
    checked = 0
    while game.outcome is None:
        for view in [build_view(game, seat) for seat in sorted(game.pending)]:
            for action in islice(codec_actions(view, limit=300), 300):
                game.copy().apply(view.seat, action)  # raises if illegal
                checked += 1
        for view in [build_view(game, seat) for seat in sorted(game.pending)]:
            game.apply(view.seat, policy.act(view))
    assert checked > 100


@pytest.mark.parametrize(
    ("hand", "kind", "steps", "rule"),
    [
        ((3, 5, 9), DecisionKind.ATTACK, [CODEC.done], "P3"),  # an empty attack
        ((3, 5, 9), DecisionKind.DUEL, [CODEC.card(4)], "D1"),  # not in the hand
        ((3, 5, 9), DecisionKind.REPLACE, [CODEC.card(9), CODEC.card(3)], "R1"),  # descending
        ((3, 5, 9), DecisionKind.ATTACK, [CODEC.card(3), CODEC.card(5)], "P3"),  # no such jumbo
        ((3, 5, 9), DecisionKind.REPLACE, [CODEC.sacrifice], "R1"),
        ((3, 5, 9), DecisionKind.ATTACK, [99], "P3"),
    ],
)
def test_illegal_ids_are_refused_with_the_rule(hand, kind, steps, rule):
    game = Game.from_position((hand, (1, 2, 12)), phase=kind, attacker=0)
    view = build_view(game, 0)
    chosen = ()
    with pytest.raises(IllegalActionError, match=rf"^{rule}:"):
        for action_id in steps:
            chosen, _ = CODEC.step(view, chosen, action_id)


def test_the_r2_cap_limits_the_second_replace():
    hands = ((1, 5, 6, 9), (2, 3, 10, 11))
    game = Game.from_position(hands, draw_pile=tuple(range(1, 13)), tacocat=2)
    (first,) = game.pending  # R1: on seat 0's half the arrow points to seat 1
    game.apply(first, Replace((hands[first][-1],)))
    view = build_view(game, 1 - first)
    assert view.max_replace == 1
    chosen, _ = CODEC.step(view, (), CODEC.card(view.hand[0]))
    assert CODEC.legal_ids(view, chosen) == (CODEC.done,)


def test_features_are_a_function_of_the_view_alone():
    """Worlds that differ only in what a seat cannot see give it the same features."""
    features = Features.of(Game().ruleset)
    rng = random.Random(2)
    for view in islice(decision_views(games=6, seed=3), 400):
        vector = features.encode(view)
        assert len(vector) == features.size and all(0.0 <= x <= 1.0 for x in vector)
        world = sample_world(view, rng)
        assert features.encode(build_view(world, view.seat)) == vector


def test_a_committed_simultaneous_choice_stays_hidden_from_the_other_seat():
    steps = StepGame(seed=4)
    features = Features.of(steps.ruleset)
    while steps.game.phase is not DecisionKind.DUEL:
        steps.step(steps.legal_ids()[-1])
    before = (features.encode(steps.view(1)), steps.history(1))
    steps.step(steps.legal_ids()[-1])  # seat 0 duels with its highest card
    assert steps.mover == 1
    assert (features.encode(steps.view(1)), steps.history(1)) == before
    assert "committed duel" in steps.history(0)


def test_random_step_games_end_with_a_zero_sum_result():
    rng = random.Random(7)
    for seed in range(20):
        steps = StepGame(seed=seed)
        while not steps.is_over:
            steps.step(rng.choice(steps.legal_ids()))
        assert sum(steps.returns()) == 0
        copy = steps.clone()
        assert copy.game.events == steps.game.events and copy.game is not steps.game


def test_a_clone_plays_on_without_touching_the_original():
    steps = StepGame(seed=9)
    for _ in range(12):
        steps.step(steps.legal_ids()[0])
    before = (steps.view(0), steps.view(1), steps.history(0), list(steps.game.events))
    copy = steps.clone()
    rng = random.Random(1)
    while not copy.is_over:
        copy.step(rng.choice(copy.legal_ids()))
    assert (steps.view(0), steps.view(1), steps.history(0), list(steps.game.events)) == before
    assert not steps.is_over
