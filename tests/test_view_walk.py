"""I2 by construction: nothing reachable from a seat's view holds what the seat may not know.

Every view of both seats, after every action of thousands of random and greedy games, is
walked through every public attribute and property, recursively (tests/view_walk.py); the
walk fails on the game, its random state, its draw pile or full log, the opponent's hand, the
cards the opponent drew, the opponent's committed simultaneous choice, or the seed.  The
peeking bot runs the same walk from inside a bot, in ``play_local`` here and over the referee
in tests/test_view_walk_referee.py.
"""

from __future__ import annotations

import random
from typing import Any, NamedTuple

import peeking_bot  # tests/bots (pytest pythonpath)
import pytest
from view_walk import forbidden, peek

from tacocat_arena.engine import (
    DEFAULT_RULESET,
    DecisionKind,
    Duel,
    Game,
    Ruleset,
    TieRule,
    build_view,
)
from tacocat_arena.play.policies import GreedyPolicy, RandomPolicy
from tacocat_bot import play_local

ARROW_SHORT = Ruleset(tie_rule=TieRule.ARROW, max_rounds=6)


def walk_game(ruleset: Ruleset, seed: int, policies: Any) -> int:
    """Play one game one action at a time, walking both seats' views before every action
    (so a simultaneous decision is walked with one choice committed); returns views walked."""
    game = Game(ruleset, seed)
    walked = 0
    known: dict[int, object] = {}
    while not game.is_over:
        for seat in (0, 1):
            problems = forbidden(build_view(game, seat), game, seat, known)
            assert not problems, (seed, game.round, seat, problems)
            walked += 1
        seat = min(game.pending)
        game.apply(seat, policies[seat].act(build_view(game, seat)))
    for seat in (0, 1):
        assert not forbidden(build_view(game, seat), game, seat)
    return walked


@pytest.mark.parametrize(
    ("ruleset", "games"), [(DEFAULT_RULESET, 500), (ARROW_SHORT, 300)], ids=["default", "arrow"]
)
@pytest.mark.slow
def test_I2_no_view_of_random_games_reaches_hidden_information(
    ruleset: Ruleset, games: int
) -> None:
    rng = random.Random(1)
    walked = 0
    for index in range(games):
        seed = rng.randrange(2**33, 2**64)  # above 2**32, so the seed's value is recognisable
        policies = (RandomPolicy(random.Random(2 * index)), RandomPolicy(random.Random(index)))
        walked += walk_game(ruleset, seed, policies)
    assert walked > 50 * games


@pytest.mark.slow
def test_I2_no_view_of_greedy_games_reaches_hidden_information() -> None:
    rng = random.Random(2)
    for index in range(300):
        seed = rng.randrange(2**33, 2**64)
        policies = (GreedyPolicy(), RandomPolicy(random.Random(index)))
        if index % 2:
            policies = policies[::-1]
        walk_game(DEFAULT_RULESET, seed, policies)


class _LeakyView(NamedTuple):
    """What the views used to be: a public face over the game's own log."""

    seat: int
    log: list[dict[str, Any]]
    hands: list[tuple[int, ...]]


def test_the_walk_finds_what_a_leaky_view_exposes() -> None:
    """The walk can fail: the game's full log and its hands, held by a view, are found."""
    game = Game(DEFAULT_RULESET, 2**40 + 5)
    leaky = _LeakyView(0, game.events, game.hands)
    problems = forbidden(leaky, game, 0)
    assert any("the full event log" in p for p in problems)
    assert any("the opponent's hand" in p for p in problems)
    assert any("hidden cards" in p for p in peek(leaky))


def test_the_walk_finds_an_opponents_committed_duel_card() -> None:
    game = Game.from_position(((2, 9), (3, 8)), phase=DecisionKind.DUEL)
    game.apply(1, Duel(8))
    (committed,) = game._committed.values()
    assert forbidden((build_view(game, 0), committed), game, 0)
    assert not forbidden(build_view(game, 0), game, 0)


def test_view_events_are_read_only() -> None:
    """A bot cannot rewrite the history the other seat and the record see."""
    game = Game(DEFAULT_RULESET, 3)
    (deal,) = build_view(game, 0).events
    with pytest.raises(TypeError, match="read-only"):
        deal["hand"] = (1, 1, 1)  # type: ignore[index]
    assert dict(deal)["hand"] == game.hands[0]


def test_peeking_bot_finds_nothing_in_play_local() -> None:
    first, second = peeking_bot.PeekingBot(), peeking_bot.PeekingBot()
    score = play_local(first, second, games=20, seed=5)
    assert score.games == 20
    assert first.decisions > 500 and second.decisions > 500
    assert first.finds == [] and second.finds == []
