"""Play: attacks, defences, sacrifices, the showdown (RULES-SPEC P1-P10)."""

from __future__ import annotations

from typing import Any

import pytest
from rules_support import snapshot  # tests/ (pytest pythonpath)

from tacocat_arena.engine import (
    ActionError,
    Attack,
    DecisionKind,
    Defend,
    Duel,
    Game,
    IllegalActionError,
    InvalidActionError,
    build_view,
)


def attack_position(hand0: tuple[int, ...], hand1: tuple[int, ...], attacker: int = 0) -> Game:
    return Game.from_position(
        (hand0, hand1), phase=DecisionKind.ATTACK, attacker=attacker, tacocat=3
    )


def refused(game: Game, seat: int, action: Any, rule: str, kind: type = IllegalActionError) -> None:
    """Assert ``action`` is refused citing ``rule`` and leaves the game unchanged."""
    before = snapshot(game)
    with pytest.raises(kind) as info:
        game.apply(seat, action)
    assert str(info.value).startswith(f"{rule}: "), str(info.value)
    assert info.value.rule == rule
    assert snapshot(game) == before


# -- P1 ----------------------------------------------------------------------------------------
def test_P1_duel_winner_is_first_attacker() -> None:
    """P1: the duel winner is the first attacker; the loser has no decision."""
    game = Game.from_position(((2, 9, 4), (3, 6, 5)), phase=DecisionKind.DUEL)
    game.apply(0, Duel(2))
    game.apply(1, Duel(6))
    assert game.decision_for(1) is DecisionKind.ATTACK
    assert game.decision_for(0) is None
    refused(game, 0, Attack((9,)), "P1", InvalidActionError)


def test_P1_attack_needs_a_card_from_hand() -> None:
    """P1: an empty attack or a card not in hand is refused with P1."""
    game = attack_position((2, 5, 9), (3, 6, 8))
    refused(game, 0, Attack(()), "P1")
    refused(game, 0, Attack((7,)), "P1")


def test_P1_defender_may_not_attack() -> None:
    """P1/P2: while an attack is pending, only the defender acts, and only by defending."""
    game = attack_position((2, 5, 9), (3, 6, 8))
    game.apply(0, Attack((5,)))
    refused(game, 0, Attack((9,)), "P2", InvalidActionError)
    refused(game, 1, Attack((8,)), "P2", InvalidActionError)


# -- P2 ----------------------------------------------------------------------------------------
def test_P2_defend_with_equal_card_then_defender_attacks() -> None:
    """P2: a card of equal value defends; the defender becomes the next attacker."""
    game = attack_position((2, 6, 9), (3, 6, 8))
    game.apply(0, Attack((6,)))
    game.apply(1, Defend((6,)))
    assert game.hands == [(2, 9), (3, 8)]
    assert game.phase is DecisionKind.ATTACK and game.pending == {1}
    assert game.events[-1]["trick_winner"] == 1


def test_P2_defend_with_higher_card() -> None:
    """P2: a higher card defends too."""
    game = attack_position((2, 6, 9), (3, 7, 8))
    game.apply(0, Attack((6,)))
    game.apply(1, Defend((8,)))
    assert game.hands == [(2, 9), (3, 7)]
    assert game.pending == {1}


def test_P2_defend_with_lower_card_refused() -> None:
    """P2: a lower card cannot defend: "P2: ...", state unchanged."""
    game = attack_position((2, 6, 9), (3, 5, 8))
    game.apply(0, Attack((6,)))
    refused(game, 1, Defend((5,)), "P2")
    refused(game, 1, Defend((3,)), "P2")


def test_P2_single_card_defence_not_in_hand_or_with_two_answers_refused() -> None:
    """P2, not P4 (the jumbo rule): a single-card attack defended with a card the defender
    does not hold, or answered twice, breaks the rule of single-card defences."""
    game = attack_position((2, 6, 9), (3, 5, 8))
    game.apply(0, Attack((6,)))
    refused(game, 1, Defend((7,)), "P2")
    refused(game, 1, Defend((8, None)), "P2")


def test_P2_sacrifice_takes_lowest_card_even_when_able_to_defend() -> None:
    """P2: a sacrifice plays the defender's lowest card; the same attacker attacks again."""
    game = attack_position((2, 6, 9, 10), (3, 7, 8, 12))
    game.apply(0, Attack((6,)))
    game.apply(1, Defend((None,)))
    assert game.hands == [(2, 9, 10), (7, 8, 12)]
    assert game.events[-1]["sacrificed"] == (3,)
    assert game.events[-1]["trick_winner"] == 0
    assert game.phase is DecisionKind.ATTACK and game.pending == {0}


# -- P3 ----------------------------------------------------------------------------------------
LEGAL_JUMBOS = [
    pytest.param((5, 5), id="P3-set-of-2"),
    pytest.param((5, 5, 5), id="P3-set-of-3"),
    pytest.param((3, 4, 5), id="P3-sequence-of-3"),
    pytest.param((3, 4, 5, 6), id="P3-sequence-of-4"),
    pytest.param((6, 4, 5), id="P3-sequence-unordered"),
]
ILLEGAL_JUMBOS = [
    pytest.param((5, 6), id="P3-two-card-non-set"),
    pytest.param((3, 4), id="P3-two-consecutive-is-no-sequence"),
    pytest.param((3, 5, 6), id="P3-sequence-with-gap"),
    pytest.param((3, 4, 4, 5), id="P3-sequence-with-repeated-value"),
    pytest.param((4, 5, 5), id="P3-pair-plus-neighbour"),
    pytest.param((5, 5, 6, 6), id="P3-two-pairs"),
]
P3_HAND = (3, 4, 4, 5, 5, 5, 6)
P3_OTHER = (1, 2, 7, 8, 9, 10, 11)


@pytest.mark.parametrize("cards", LEGAL_JUMBOS)
def test_P3_legal_jumbo_attacks(cards: tuple[int, ...]) -> None:
    """P3: a set (2+ of a value) or a sequence (3+ consecutive values, once each) is legal."""
    game = attack_position(P3_HAND, P3_OTHER)
    assert tuple(sorted(cards)) in game.legal_attacks(0)
    game.apply(0, Attack(cards))
    assert game.phase is DecisionKind.DEFEND and game.pending == {1}
    assert game.current_attack == tuple(sorted(cards))
    assert len(game.hands[0]) == 7 - len(cards)


@pytest.mark.parametrize("cards", ILLEGAL_JUMBOS)
def test_P3_illegal_jumbo_attacks(cards: tuple[int, ...]) -> None:
    """P3: anything else is refused with "P3: ..." and leaves the game unchanged."""
    game = attack_position(P3_HAND, P3_OTHER)
    assert tuple(sorted(cards)) not in game.legal_attacks(0)
    refused(game, 0, Attack(cards), "P3")


# -- P4 ----------------------------------------------------------------------------------------
def test_P4_each_sacrifice_takes_lowest_card_not_named() -> None:
    """P4 (DECIDED): the defender names defending cards; each sacrifice removes the lowest card
    among those not named; exactly k cards leave the hand."""
    game = attack_position((1, 5, 5, 5, 12), (2, 6, 7, 8, 9))
    game.apply(0, Attack((5, 5, 5)))
    game.apply(1, Defend((None, 6, None)))  # names 6: the sacrifices are 2 and then 7
    event = game.events[-1]
    assert event["sacrificed"] == (2, 7)
    assert game.hands[1] == (8, 9)
    assert len(game.hands[1]) == 5 - 3
    assert event["trick_winner"] == 0  # P5: a sacrifice loses the trick


def test_P4_named_card_is_not_sacrificed_even_if_lowest() -> None:
    """P4: a sacrifice never takes a card the defence names, even the lowest."""
    game = attack_position((1, 2, 2, 12), (2, 3, 9, 10))
    game.apply(0, Attack((2, 2)))
    game.apply(1, Defend((2, None)))  # 2 is named, so the sacrifice takes 3
    assert game.events[-1]["sacrificed"] == (3,)
    assert game.hands[1] == (9, 10)


@pytest.mark.parametrize(
    "answers,rule",
    [
        pytest.param((6,), "P4", id="P4-too-few-answers"),
        pytest.param((6, 7, 8, None), "P4", id="P4-too-many-answers"),
        pytest.param((6, 6, None), "P4", id="P4-named-card-not-in-hand-twice"),
        pytest.param((11, None, None), "P4", id="P4-named-card-not-in-hand"),
        pytest.param((2, None, None), "P4", id="P4-jumbo-lower-card"),
    ],
)
def test_P4_malformed_defence_refused(answers: tuple[int | None, ...], rule: str) -> None:
    """P4: one answer per attack card, each named card a distinct card of the hand and equal
    to or higher than the attack card it defends."""
    game = attack_position((1, 5, 5, 5, 12), (2, 6, 7, 8, 9))
    game.apply(0, Attack((5, 5, 5)))
    refused(game, 1, Defend(answers), rule)


# -- P5 ----------------------------------------------------------------------------------------
def test_P5_jumbo_all_defended_defender_attacks_next() -> None:
    """P5: every card of a jumbo defended: the defender wins the trick and attacks next."""
    game = attack_position((1, 3, 4, 5, 12), (2, 4, 6, 9, 10))
    game.apply(0, Attack((3, 4, 5)))
    game.apply(1, Defend((4, 9, 6)))
    assert game.events[-1]["trick_winner"] == 1
    assert game.events[-1]["sacrificed"] == ()
    assert game.phase is DecisionKind.ATTACK and game.pending == {1} and game.attacker == 1
    assert game.hands == [(1, 12), (2, 10)]


def test_P5_jumbo_with_one_sacrifice_attacker_attacks_again() -> None:
    """P5: one sacrifice among the answers: the attacker wins the trick and attacks again."""
    game = attack_position((1, 3, 4, 5, 12), (2, 4, 6, 9, 10))
    game.apply(0, Attack((3, 4, 5)))
    game.apply(1, Defend((4, 9, None)))  # 4 and 9 named; sacrifice takes 2
    assert game.events[-1]["trick_winner"] == 0
    assert game.events[-1]["sacrificed"] == (2,)
    assert game.phase is DecisionKind.ATTACK and game.pending == {0} and game.attacker == 0
    assert game.hands == [(1, 12), (6, 10)]


# -- P6 ----------------------------------------------------------------------------------------
def test_P6_attack_with_last_card_refused() -> None:
    """P6: a player may never attack with their last card."""
    game = attack_position((7,), (3,))
    refused(game, 0, Attack((7,)), "P6")
    assert game.legal_attacks(0) == ()


@pytest.mark.parametrize(
    "hand,cards",
    [((5, 5), (5, 5)), ((4, 5, 6), (4, 5, 6)), ((8, 8, 8), (8, 8, 8))],
    ids=["P6-set-of-whole-hand", "P6-sequence-of-whole-hand", "P6-triple-of-whole-hand"],
)
def test_P6_attack_with_whole_hand_refused(hand: tuple[int, ...], cards: tuple[int, ...]) -> None:
    """P6: after any attack the attacker holds at least one card."""
    game = attack_position(hand, (1,) * len(hand))
    refused(game, 0, Attack(cards), "P6")
    assert cards not in game.legal_attacks(0)


# -- P7, P8, P9 ----------------------------------------------------------------------------------
def test_P7_played_defending_and_sacrificed_cards_are_discarded() -> None:
    """P7: attack, defence and sacrificed cards all go face up to the discard pile."""
    game = attack_position((1, 3, 4, 5, 12), (2, 4, 6, 9, 10))
    game.apply(0, Attack((3, 4, 5)))
    game.apply(1, Defend((4, None, 9)))
    assert sorted(game.discards) == sorted((3, 4, 5, 4, 9, 2))
    assert build_view(game, 0).discards == game.discards == build_view(game, 1).discards


def test_P8_play_continues_until_one_card_each_then_showdown() -> None:
    """P8/P9: tricks go on until both hold one card; then the showdown, lower card wins."""
    game = attack_position((2, 6, 9), (3, 7, 8))
    game.apply(0, Attack((9,)))
    game.apply(1, Defend((None,)))  # sacrifices 3; 2 cards each: play goes on
    assert game.phase is DecisionKind.ATTACK and game.pending == {0}
    game.apply(0, Attack((6,)))
    game.apply(1, Defend((7,)))  # one card each: showdown 2 vs 8
    showdown = next(e for e in game.events if e["type"] == "showdown")
    assert showdown["cards"] == (2, 8)
    assert showdown["winner"] == 0


@pytest.mark.parametrize("last,winner", [((1, 12), 0), ((12, 1), 1), ((5, 6), 0), ((7, 6), 1)])
def test_P9_lower_last_card_wins(last: tuple[int, int], winner: int) -> None:
    """P9: both reveal their last card at once; the lower card wins the round."""
    game = Game.from_position(((12, last[0]), (11, last[1])), phase=DecisionKind.DUEL, tacocat=3)
    game.apply(0, Duel(12))
    game.apply(1, Duel(11))
    showdown = next(e for e in game.events if e["type"] == "showdown")
    assert showdown["cards"] == last and showdown["winner"] == winner
    round_end = next(e for e in game.events if e["type"] == "round_end")
    assert round_end["winner"] == winner


def test_errors_are_action_errors_with_rule_attribute() -> None:
    """Errors: refusals are ActionErrors (ValueErrors) carrying the rule ID."""
    game = attack_position((2, 6, 9), (3, 7, 8))
    with pytest.raises(ActionError) as info:
        game.apply(0, Attack((6, 9)))
    assert isinstance(info.value, ValueError)
    assert info.value.rule == "P3"
