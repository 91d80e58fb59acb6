"""Components and setup (RULES-SPEC C1-C5, S1-S2): one test per rule ID."""

from __future__ import annotations

from collections import Counter

import pytest

from tacocat_arena.engine import (
    DEFAULT_RULESET,
    DecisionKind,
    Duel,
    Game,
    InvalidActionError,
    Replace,
    Ruleset,
    TieRule,
    round_deck,
)

DECIDED_DECK = {1: 2, 2: 3, 3: 3, 4: 3, 5: 4, 6: 4, 7: 4, 8: 4, 9: 3, 10: 3, 11: 3, 12: 2}


def test_C1_two_players_38_cards_7_tiles() -> None:
    """C1: two players, a deck of 38 cards, seven spaces (so seven tiles)."""
    game = Game(seed=1)
    assert len(game.hands) == 2
    assert DEFAULT_RULESET.deck_size == 38
    assert len(DEFAULT_RULESET.cards()) == 38
    assert DEFAULT_RULESET.spaces == 7
    assert len(game.covered) == 7 + 2  # seven spaces and the two goals


def test_C1_a_third_seat_is_refused() -> None:
    """C1: only seats 0 and 1 exist; any other seat is refused with a C1 message."""
    game = Game(seed=1)
    with pytest.raises(InvalidActionError) as info:
        game.apply(2, Replace(()))
    assert str(info.value).startswith("C1: ")


def test_C2_default_deck_counts() -> None:
    """C2 (DECIDED): values 1..12 with counts 2,3,3,3,4,4,4,4,3,3,3,2 (38 cards)."""
    assert dict(DEFAULT_RULESET.deck) == DECIDED_DECK
    assert sum(DECIDED_DECK.values()) == 38
    assert Counter(DEFAULT_RULESET.cards()) == Counter(DECIDED_DECK)


def test_C3_default_hand_sizes_centre_seven() -> None:
    """C3 (DECIDED): hand sizes 4,5,6,7,6,5,4 from seat 0's goal; the centre is 7."""
    assert DEFAULT_RULESET.hand_sizes == (4, 5, 6, 7, 6, 5, 4)
    assert DEFAULT_RULESET.centre == 4
    assert DEFAULT_RULESET.hand_size_at(DEFAULT_RULESET.centre) == 7
    assert [DEFAULT_RULESET.hand_size_at(p) for p in range(1, 8)] == [4, 5, 6, 7, 6, 5, 4]


@pytest.mark.parametrize("position", range(1, 8))
def test_C3_hand_size_of_the_space_is_dealt_to_each_player(position: int) -> None:
    """C3: a round played on a space deals that space's number of cards to each player."""
    game = Game.from_position(((12, 1), (11, 2)), tacocat=position, phase=DecisionKind.DUEL)
    game.apply(0, Duel(12))
    game.apply(1, Duel(11))  # 1 each: showdown, seat 0 wins, tacocat moves one toward 0
    new = game.tacocat
    assert new == position - 1
    if new >= 1:
        size = DEFAULT_RULESET.hand_size_at(new)
        assert len(game.hands[0]) == len(game.hands[1]) == size


def test_C4_default_arrows() -> None:
    """C4 (DECIDED): two arrows on the centre; elsewhere the arrow points to the player farther
    from winning (seat 1 on seat 0's half, seat 0 on seat 1's half)."""
    arrows = [DEFAULT_RULESET.arrows_at(p) for p in range(1, 8)]
    assert arrows == [{1}, {1}, {1}, {0, 1}, {0}, {0}, {0}]


def test_C4_C2_C3_defaults_are_the_decided_values() -> None:
    """C2/C3/C4/P10/W2: the default ruleset is exactly RULES-SPEC's DECIDED values."""
    assert Ruleset() == DEFAULT_RULESET
    assert DEFAULT_RULESET.tie_rule is TieRule.REPLAY_ROUND
    assert DEFAULT_RULESET.max_rounds == 50


@pytest.mark.parametrize("winner,goal", [(0, 0), (1, 8)])
def test_C5_each_seat_has_its_goal_at_one_end(winner: int, goal: int) -> None:
    """C5: seat 0's goal is position 0 and seat 1's the far end (spaces + 1)."""
    last = (1, 2) if winner == 0 else (2, 1)
    space = 1 if winner == 0 else 7
    game = Game.from_position(
        ((12, last[0]), (11, last[1])), tacocat=space, phase=DecisionKind.DUEL
    )
    game.apply(0, Duel(12))
    game.apply(1, Duel(11))
    assert game.tacocat == goal
    assert game.outcome is not None and game.outcome.winner == winner


@pytest.mark.parametrize("seed", [0, 1, 2, 12345, 2**63])
def test_S1_tacocat_starts_on_centre_nothing_covered(seed: int) -> None:
    """S1: the Tacocat starts on the centre space and no space is covered."""
    game = Game(seed=seed)
    assert game.tacocat == DEFAULT_RULESET.centre == 4
    assert not any(game.covered)
    assert game.round == 1


@pytest.mark.parametrize("seed", [0, 1, 2, 12345, 2**63])
def test_S2_deal_seven_each_draw_pile_24_discards_empty(seed: int) -> None:
    """S2: shuffle the whole deck, deal each player the centre's 7 cards, 24 form the draw
    pile, the discard pile is empty; the deal is the round-1 shuffle of the seed."""
    game = Game(seed=seed)
    assert len(game.hands[0]) == len(game.hands[1]) == 7
    assert len(game.draw_pile) == 24
    assert game.discards == ()
    everything = list(game.hands[0]) + list(game.hands[1]) + list(game.draw_pile)
    assert Counter(everything) == Counter(DEFAULT_RULESET.cards())
    deck = round_deck(DEFAULT_RULESET, seed, 1)
    assert game.hands[0] == tuple(sorted(deck[:7]))
    assert game.hands[1] == tuple(sorted(deck[7:14]))
    assert game.draw_pile == deck[14:]
    assert game.phase is DecisionKind.REPLACE


def test_S2_different_seeds_shuffle_differently() -> None:
    """S2: the deck is shuffled (seeds give different deals)."""
    deals = {tuple(round_deck(DEFAULT_RULESET, seed, 1)) for seed in range(20)}
    assert len(deals) == 20
