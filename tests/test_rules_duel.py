"""The duel (RULES-SPEC D1-D4) on hand-built positions."""

from __future__ import annotations

import pytest
from rules_support import snapshot  # tests/ (pytest pythonpath)

from tacocat_arena.engine import (
    DecisionKind,
    Duel,
    Game,
    IllegalActionError,
    InvalidActionError,
    build_view,
)


def duel_position(hand0: tuple[int, ...], hand1: tuple[int, ...]) -> Game:
    return Game.from_position((hand0, hand1), phase=DecisionKind.DUEL, tacocat=3)


def test_D1_duel_card_must_be_in_hand() -> None:
    """D1: a duel card not in hand is refused ("D1: ..."), the state unchanged."""
    game = duel_position((2, 5, 9), (3, 6, 8))
    before = snapshot(game)
    with pytest.raises(IllegalActionError) as info:
        game.apply(0, Duel(8))
    assert str(info.value).startswith("D1: ")
    assert snapshot(game) == before


def test_D1_simultaneous_nothing_revealed_before_both_commit() -> None:
    """D1: both choose at once; the first choice is not visible before the second commit."""
    game = duel_position((2, 5, 9), (3, 6, 8))
    assert game.pending == {0, 1}
    view1_before = tuple(build_view(game, 1))
    game.apply(0, Duel(9))
    assert game.pending == {1}
    view1 = build_view(game, 1)
    assert tuple(view1) == view1_before
    assert not any(e["type"] == "duel" for e in view1.events)
    assert view1.discards == () and view1.opponent_hand_size == 3
    with pytest.raises(InvalidActionError) as info:
        game.apply(0, Duel(5))  # no change of mind after committing
    assert str(info.value).startswith("D1: ")
    game.apply(1, Duel(3))
    duel = game.events[-1] if game.events[-1]["type"] == "duel" else None
    assert duel is not None and duel["cards"] == (9, 3)


@pytest.mark.parametrize("cards,attacker", [((9, 3), 0), ((5, 8), 1), ((12, 11), 0), ((2, 3), 1)])
def test_D2_higher_duel_card_attacks_first(cards: tuple[int, int], attacker: int) -> None:
    """D2/P1: the higher duel card attacks first; both duel cards go to the discard pile."""
    game = duel_position((2, 5, 9, 12), (3, 8, 10, 11))
    game.apply(0, Duel(cards[0]))
    game.apply(1, Duel(cards[1]))
    assert game.phase is DecisionKind.ATTACK
    assert game.pending == {attacker}
    assert game.attacker == attacker
    assert game.discards == cards
    assert cards[0] not in game.hands[0] and cards[1] not in game.hands[1]
    assert len(game.hands[0]) == len(game.hands[1]) == 3


def test_D3_tie_with_cards_left_duels_again() -> None:
    """D3: on a tie both cards are discarded and the players duel again."""
    game = duel_position((2, 5, 9, 11), (3, 5, 8, 10))
    game.apply(0, Duel(5))
    game.apply(1, Duel(5))
    assert game.phase is DecisionKind.DUEL
    assert game.pending == {0, 1}
    assert game.hands == [(2, 9, 11), (3, 8, 10)]
    assert game.discards == (5, 5)
    assert game.events[-1]["type"] == "duel" and game.events[-1]["winner"] is None
    game.apply(0, Duel(9))
    game.apply(1, Duel(8))
    assert game.phase is DecisionKind.ATTACK and game.attacker == 0


def test_D4_tied_duels_down_to_one_card_go_to_showdown() -> None:
    """D4 (DECIDED): tied duels that leave one card each skip play: straight to showdown."""
    game = duel_position((3, 5, 7), (4, 5, 7))
    game.apply(0, Duel(7))
    game.apply(1, Duel(7))  # tie, two cards each: duel again (D3)
    assert game.phase is DecisionKind.DUEL
    game.apply(0, Duel(5))
    game.apply(1, Duel(5))  # tie, one card each: showdown (D4)
    types = [e["type"] for e in game.events]
    assert "attack" not in types
    showdown = next(e for e in game.events if e["type"] == "showdown")
    assert showdown["cards"] == (3, 4) and showdown["winner"] == 0
    round_end = next(e for e in game.events if e["type"] == "round_end")
    assert round_end["winner"] == 0 and round_end["tacocat_from"] == 3
    assert game.round == 2


def test_D4_two_card_hands_tie_goes_to_showdown() -> None:
    """D4: a first tied duel from two cards each leaves one each: showdown at once."""
    game = duel_position((6, 9), (6, 2))
    game.apply(0, Duel(6))
    game.apply(1, Duel(6))
    showdown = next(e for e in game.events if e["type"] == "showdown")
    assert showdown["cards"] == (9, 2) and showdown["winner"] == 1
