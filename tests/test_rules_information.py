"""What a player may know (RULES-SPEC I1) and never (I2): ``build_view``."""

from __future__ import annotations

import random

import pytest

from tacocat_arena.engine import (
    Attack,
    DecisionKind,
    Defend,
    Duel,
    Game,
    Replace,
    build_view,
)
from tacocat_arena.play.policies import RandomPolicy

HIDDEN_KEYS = {"hands", "draw_pile", "seed"}


def test_I1_view_contents_at_start() -> None:
    """I1: own hand, the board, round number, both hand sizes, draw pile size, events."""
    game = Game(seed=3)
    for seat in (0, 1):
        view = build_view(game, seat)
        assert view.seat == seat
        assert view.hand == game.hands[seat]
        assert view.opponent_hand_size == 7
        assert view.draw_pile_size == 24
        assert view.round == 1
        assert view.tacocat == 4
        assert view.covered == game.covered and not any(view.covered)
        assert view.ruleset.arrows_at(4) == {0, 1}
        assert view.ruleset.hand_sizes == (4, 5, 6, 7, 6, 5, 4)
        assert view.discards == ()
        assert view.kind is DecisionKind.REPLACE
        assert view.max_replace == 7
        (deal,) = view.events
        assert deal == {
            "type": "deal",
            "round": 1,
            "position": 4,
            "hand_size": 7,
            "hand": game.hands[seat],
        }


def test_I1_view_follows_the_round() -> None:
    """I1: discards, trick cards and outcomes, duel cards, and past rounds are all visible."""
    game = Game.from_position(
        ((2, 4, 6, 9), (3, 5, 7, 8)), draw_pile=(1, 10, 11, 12), tacocat=5, covered=(6,)
    )
    game.apply(0, Replace((4,)))
    game.apply(1, Replace(()))
    game.apply(0, Duel(9))
    game.apply(1, Duel(8))
    game.apply(0, Attack((6,)))
    view1 = build_view(game, 1)
    assert view1.kind is DecisionKind.DEFEND
    assert view1.current_attack == (6,) and view1.attacker == 0
    assert view1.legal is not None and view1.legal.defence == ((7,),)
    game.apply(1, Defend((7,)))
    for seat in (0, 1):
        view = build_view(game, seat)
        assert view.covered[6]
        assert view.discards == (4, 9, 8, 6, 7)
        types = [e["type"] for e in view.events]
        assert types == ["deal", "replace", "replace", "duel", "attack", "defend"]
        duel = view.events[3]
        assert duel["cards"] == (9, 8) and duel["winner"] == 0
        assert view.events[5]["trick_winner"] == 1
        assert view.opponent_hand_size == len(game.hands[1 - seat]) == 2
        assert view.draw_pile_size == 3


def test_I2_view_never_holds_opponent_hand_or_draw_pile() -> None:
    """I2: no public event carries the hands, the draw pile, or the opponent's drawn cards."""
    game = Game.from_position(((2, 4, 6, 9), (3, 5, 7, 8)), draw_pile=(1, 10, 11, 12), tacocat=3)
    game.apply(1, Replace((3, 5)))
    game.apply(0, Replace((2,)))
    view0 = build_view(game, 0)
    for event in view0.events:
        assert not HIDDEN_KEYS & set(event)
    opponent_replace = next(e for e in view0.events if e["type"] == "replace" and e["seat"] == 1)
    assert "drawn" not in opponent_replace
    deal = view0.events[0]
    assert deal["hand"] == (2, 4, 6, 9)
    assert game.hands[1] not in [v for e in view0.events for v in e.values()]


@pytest.mark.parametrize("seed", range(30))
def test_I2_random_play_views_hide_everything_hidden(seed: int) -> None:
    """I2: at every decision of random games, neither seat's public events hold a hand, the
    draw pile or the opponent's draws; the dealt hand shown is one's own."""
    game = Game(seed=seed)
    rngs = [random.Random(seed * 2 + s) for s in (0, 1)]
    policies = [RandomPolicy(rngs[0]), RandomPolicy(rngs[1])]
    dealt: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}
    while not game.is_over:
        deal = next(e for e in reversed(game.events) if e["type"] == "deal")
        dealt[game.round] = deal["hands"]
        for viewer in (0, 1):
            view = build_view(game, viewer)
            assert view.hand == game.hands[viewer]
            for event in view.events:
                assert not HIDDEN_KEYS & set(event), event
                if event["type"] == "deal":
                    assert event["hand"] == dealt[game.round][viewer]
                if event["type"] == "replace" and event["seat"] != viewer:
                    assert "drawn" not in event
        views = {s: build_view(game, s) for s in sorted(game.pending)}
        for seat, view in views.items():
            game.apply(seat, policies[seat].act(view))
