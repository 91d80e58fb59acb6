"""Sampled worlds agree with everything a seat knows; the ISMCTS bot plays legal games."""

from __future__ import annotations

import random

from example_bots.ismcts_bot import IsmctsBot
from example_bots.search_bot import SearchBot

from tacocat_arena.engine import DecisionKind, Game, build_view
from tacocat_arena.play.ismcts import IsmctsPolicy, candidates, information_key
from tacocat_arena.play.policies import RandomPolicy
from tacocat_arena.play.worlds import sample_world
from tacocat_bot import play_local


def pending_views(games, seed):
    policy = RandomPolicy(random.Random(seed))
    for index in range(games):
        game = Game(seed=seed * 100 + index)
        while game.outcome is None:
            views = [build_view(game, seat) for seat in sorted(game.pending)]
            yield views
            for view in views:
                game.apply(view.seat, policy.act(view))


def test_a_sampled_world_shows_the_seat_exactly_what_it_knew():
    rng = random.Random(4)
    differs = 0
    for views in pending_views(games=20, seed=1):
        for view in views:
            world = sample_world(view, rng)
            seen = build_view(world, view.seat)
            assert (seen.hand, seen.events, seen.kind, seen.max_replace, seen.discards) == (
                view.hand,
                view.events,
                view.kind,
                view.max_replace,
                view.discards,
            )
            assert (seen.round, seen.tacocat, seen.covered) == (
                view.round,
                view.tacocat,
                view.covered,
            )
            others = {sample_world(view, rng).hands[1 - view.seat] for _ in range(4)}
            differs += len(others) > 1
    assert differs > 100  # the hidden cards are drawn anew each time


def test_a_world_for_a_search_of_one_round_numbers_it_one():
    views = next(pending_views(games=1, seed=2))
    world = sample_world(views[0], random.Random(1), whole_game=False)
    assert world.round == 1 and build_view(world, 0).hand == views[0].hand


def test_candidates_are_legal_and_the_policy_picks_one():
    policy = IsmctsPolicy(20, rng=random.Random(3))
    kinds = set()
    for views in pending_views(games=3, seed=3):
        for view in views:
            options = candidates(view)
            assert options and len(set(options)) == len(options)
            if view.kind is not DecisionKind.DEFEND:
                kinds.add(view.kind)
            assert policy.act(view) in options
            assert information_key(view) == information_key(view)
    assert kinds == {DecisionKind.REPLACE, DecisionKind.DUEL, DecisionKind.ATTACK}


def test_the_ismcts_bot_plays_a_full_match_against_the_search_bot():
    score = play_local(IsmctsBot(iterations=40, seed=1), SearchBot(budget=20, seed=2), games=2)
    assert score.games == 2
