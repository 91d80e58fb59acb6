"""Sampled worlds agree with everything a seat knows; the ISMCTS bot finds what wins and plays
legal games."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from example_bots.greedy_bot import GreedyBot
from example_bots.ismcts_bot import IsmctsBot
from example_bots.search_bot import SearchBot

from tacocat_arena.engine import Attack, DecisionKind, Defend, Duel, Game, Replace, build_view
from tacocat_arena.play.ismcts import IsmctsPolicy, candidates
from tacocat_arena.play.policies import GreedyPolicy, RandomPolicy
from tacocat_arena.play.worlds import RoundWorlds, sample_world
from tacocat_bot import play_local


def pending_views(games, seed, policy=None):
    policy = policy or RandomPolicy(random.Random(seed))
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


def test_round_worlds_deal_only_the_hidden_cards_anew_and_respect_sacrifices():
    rng = random.Random(5)
    differs = floors = 0
    for views in pending_views(games=12, seed=6):
        for view in views:
            worlds = RoundWorlds(view, rng)
            opponent = 1 - view.seat
            hands = set()
            for _ in range(3):
                world = worlds.sample()
                seen = build_view(world, view.seat)
                assert (seen.hand, seen.kind, seen.max_replace, seen.discards) == (
                    view.hand,
                    view.kind,
                    view.max_replace,
                    view.discards,
                )
                assert (seen.tacocat, seen.covered, seen.current_attack) == (
                    view.tacocat,
                    view.covered,
                    view.current_attack,
                )
                assert len(world.hands[opponent]) == view.opponent_hand_size
                hidden = Counter(world.hands[opponent]) + Counter(world.draw_pile)
                deck = Counter(view.ruleset.cards())
                deck.subtract(Counter(view.hand) + Counter(view.discards))
                assert hidden == +deck  # every card is somewhere, once
                sacrificed = [
                    card
                    for event in view.events
                    if event["type"] == "defend" and event["seat"] == opponent
                    for card in event["sacrificed"]
                ]
                if sacrificed:
                    floors += 1
                    assert min(world.hands[opponent]) >= max(sacrificed)  # P4
                hands.add(world.hands[opponent])
            differs += len(hands) > 1
    assert differs > 50 and floors > 5


def test_round_worlds_can_read_that_the_opponent_kept_its_lowest_card():
    rng = random.Random(9)
    fits = {False: 0, True: 0}
    checked = 0
    for views in pending_views(games=30, seed=10, policy=GreedyPolicy()):  # keeps its lowest
        for view in views:
            opponent = 1 - view.seat
            replaced = [e for e in view.events if e["type"] == "replace" and e["seat"] == opponent]
            if not replaced or not replaced[0]["discarded"] or view.kind is DecisionKind.REPLACE:
                continue
            lowest_discard = min(replaced[0]["discarded"])
            played = view.opponent_hand_size  # cards held now; the rest were played since
            for kept_lowest in (False, True):
                worlds = RoundWorlds(view, rng, kept_lowest=kept_lowest)
                for _ in range(20):
                    hand, _pile = worlds.deal()
                    assert len(hand) == played
                    fits[kept_lowest] += min(hand + tuple(worlds.played)) <= lowest_discard
            checked += 1
    assert checked > 20
    # a world where the opponent never held a card as low as its lowest discard is impossible
    # if it kept its lowest card; uniform worlds hold many of them, rejection far fewer
    assert fits[True] == 20 * checked > fits[False]


def test_a_round_world_ends_with_its_round_and_leaves_the_next_world_alone():
    view = next(pending_views(games=1, seed=7))[0]
    worlds = RoundWorlds(view, random.Random(2))
    first, second = worlds.sample(), worlds.sample()
    before = (list(second.hands), list(second.draw_pile), second.phase, second.pending)
    greedy = GreedyPolicy()
    while first.outcome is None:
        for seat in sorted(first.pending):
            first.apply(seat, greedy.act(build_view(first, seat)))
    assert len(first.round_results) == len(view.past_rounds) + 1  # no next round was dealt
    assert (list(second.hands), list(second.draw_pile), second.phase, second.pending) == before


def test_the_greedy_policy_plays_as_the_sdk_greedy_bot():
    policy, bot = GreedyPolicy(), GreedyBot()
    for views in pending_views(games=10, seed=8):
        for view in views:
            assert policy.act(view) == bot.act(view)


@pytest.mark.parametrize(
    ("greedy_opponent", "kept_lowest"), [(True, False), (False, False), (True, True)]
)
def test_candidates_are_legal_and_the_policy_picks_one(greedy_opponent, kept_lowest):
    policy = IsmctsPolicy(
        20, greedy_opponent=greedy_opponent, kept_lowest=kept_lowest, rng=random.Random(3)
    )
    kinds = set()
    for views in pending_views(games=3, seed=3):
        for view in views:
            options = candidates(view)
            assert options and len(set(options)) == len(options)
            assert options[0] == GreedyPolicy().act(view)
            if view.kind is not DecisionKind.DEFEND:
                kinds.add(view.kind)
            assert policy.act(view) in options
    assert kinds == {DecisionKind.REPLACE, DecisionKind.DUEL, DecisionKind.ATTACK}


def position(hands, seat, *actions):
    """A round from its start (as every round starts: a replace, here of nothing), with
    ``hands`` given seat-to-move first, then ``actions`` by (seat is 0, the other 1)."""
    ordered = hands if seat == 0 else hands[::-1]
    game = Game.from_position(ordered)
    game.apply(0, Replace(()))
    game.apply(1, Replace(()))
    for who, action in actions:
        game.apply(seat if who == 0 else 1 - seat, action)
    return build_view(game, seat)


def defence_position(seat):
    """``seat`` holds 1, 5 and 11 against a single 10 from 2, 10, 12 (after a duel it lost):
    defending with the 11 keeps the 1 and wins whatever follows; a sacrifice throws the 1
    away, and the attacker's 12 then takes the 5 too."""
    hands = ((1, 3, 5, 11), (2, 4, 10, 12))
    return position(hands, seat, (0, Duel(3)), (1, Duel(4)), (1, Attack((10,))))


def duel_position(seat):
    """Two cards each: the duel leaves one for the showdown, so ``seat`` (1 and 12 against
    2 and 11) duels the 12 and keeps the 1."""
    return position(((1, 12), (2, 11)), seat)


@pytest.mark.parametrize("seat", [0, 1])
@pytest.mark.parametrize("paired", [True, False], ids=["paired", "ucb-root"])
@pytest.mark.parametrize("greedy_opponent", [True, False], ids=["greedy-opponent", "so"])
def test_the_search_defends_and_duels_to_win_from_either_seat(seat, paired, greedy_opponent):
    policy = IsmctsPolicy(
        60, paired=paired, greedy_opponent=greedy_opponent, rng=random.Random(seat)
    )
    assert policy.act(defence_position(seat)) == Defend((11,))
    assert policy.act(duel_position(seat)) == Duel(12)


def test_the_ismcts_bot_plays_a_full_match_against_the_search_bot():
    score = play_local(IsmctsBot(iterations=40, seed=1), SearchBot(budget=20, seed=2), games=2)
    assert score.games == 2
