"""Moving the Tacocat, tiles, ties and winning (RULES-SPEC M1-M4, P10, W1-W2)."""

from __future__ import annotations

import random
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
    Termination,
    TieRule,
    round_deck,
)
from tacocat_arena.play.local import play_game
from tacocat_arena.play.policies import GreedyPolicy, RandomPolicy

GOAL_0, GOAL_1 = 0, DEFAULT_RULESET.spaces + 1


def finish_round(
    last0: int, last1: int, *, ruleset: Ruleset = DEFAULT_RULESET, **kw: object
) -> Game:
    """A round from a hand-built duel position that ends in the showdown last0 vs last1."""
    game = Game.from_position(
        ((12, last0), (11, last1)),
        phase=DecisionKind.DUEL,
        ruleset=ruleset,
        **kw,  # type: ignore[arg-type]
    )
    game.apply(0, Duel(12))
    game.apply(1, Duel(11))  # seat 0 wins the duel; one card each: showdown (P8)
    return game


def round_end(game: Game) -> dict:
    return next(e for e in game.events if e["type"] == "round_end")


def won_by(seat: int) -> tuple[int, int]:
    return (2, 9) if seat == 0 else (9, 2)


@pytest.mark.parametrize("winner,expected", [(0, 3), (1, 5)])
def test_M1_winner_moves_tacocat_one_space_toward_own_goal(winner: int, expected: int) -> None:
    """M1: the round winner moves the Tacocat one space toward their own goal."""
    game = finish_round(*won_by(winner), tacocat=4)
    assert round_end(game)["winner"] == winner
    assert game.tacocat == expected


@pytest.mark.parametrize("winner", [0, 1])
def test_M2_space_left_is_covered(winner: int) -> None:
    """M2: the space the Tacocat just left is covered with a tile; nothing else is."""
    game = finish_round(*won_by(winner), tacocat=4, covered=(1,))
    assert game.covered[4]
    assert [i for i, c in enumerate(game.covered) if c] == [1, 4]
    assert round_end(game)["covered"] == 4


def test_M2_tacocat_cannot_stand_on_covered_space() -> None:
    """M2: a position with the Tacocat on a covered space is impossible."""
    with pytest.raises(ValueError):
        Game.from_position(((1, 2), (3, 4)), tacocat=3, covered=(3,))


M3_CASES = [
    pytest.param(4, (3,), 0, 2, id="M3-seat0-skips-one"),
    pytest.param(4, (3, 2), 0, 1, id="M3-seat0-skips-two"),
    pytest.param(6, (5, 3), 0, 4, id="M3-seat0-skips-one-of-two"),
    pytest.param(3, (2, 1), 0, GOAL_0, id="M3-seat0-skips-into-goal"),
    pytest.param(4, (5,), 1, 6, id="M3-seat1-skips-one"),
    pytest.param(4, (5, 6), 1, 7, id="M3-seat1-skips-two"),
    pytest.param(2, (3, 5), 1, 4, id="M3-seat1-skips-one-of-two"),
    pytest.param(5, (6, 7), 1, GOAL_1, id="M3-seat1-skips-into-goal"),
    pytest.param(4, (1, 2, 3, 5, 6, 7), 0, GOAL_0, id="M3-seat0-everything-covered"),
    pytest.param(4, (1, 2, 3, 5, 6, 7), 1, GOAL_1, id="M3-seat1-everything-covered"),
]


@pytest.mark.parametrize("start,covered,winner,expected", M3_CASES)
def test_M3_moves_skip_covered_spaces(
    start: int, covered: tuple[int, ...], winner: int, expected: int
) -> None:
    """M3: a move onto a covered space skips it (and further covered ones) in the same
    direction; goals are never covered, so the Tacocat may always land in one."""
    game = finish_round(*won_by(winner), tacocat=start, covered=covered)
    assert round_end(game)["winner"] == winner
    assert game.tacocat == expected
    assert round_end(game)["tacocat_to"] == expected
    assert not game.covered[GOAL_0] and not game.covered[GOAL_1]
    if expected in (GOAL_0, GOAL_1):
        assert game.outcome is not None
        assert game.outcome.termination is Termination.GOAL and game.outcome.winner == winner
    else:
        assert not game.covered[expected]
        assert game.round == 2


@pytest.mark.parametrize("seed", range(40))
def test_M3_goals_never_covered_in_play(seed: int) -> None:
    """M3: goals are never covered, whatever happens in a game."""
    game = play_game([RandomPolicy(random.Random(seed)), GreedyPolicy()], seed=seed)
    assert not game.covered[GOAL_0] and not game.covered[GOAL_1]


@pytest.mark.parametrize("round_number", [1, 3])
def test_M4_whole_deck_reshuffled_and_dealt_with_new_hand_size(round_number: int) -> None:
    """M4: before the next round all 38 cards are shuffled together and dealt anew with the
    hand size of the Tacocat's new space (round r's deck depends only on seed and r)."""
    game = finish_round(*won_by(1), tacocat=5, seed=99, round_number=round_number)
    assert game.tacocat == 6 and game.round == round_number + 1
    size = DEFAULT_RULESET.hand_size_at(6)
    assert len(game.hands[0]) == len(game.hands[1]) == size == 5
    assert game.discards == ()
    assert len(game.draw_pile) == 38 - 2 * size
    everything = list(game.hands[0]) + list(game.hands[1]) + list(game.draw_pile)
    assert Counter(everything) == Counter(DEFAULT_RULESET.cards())
    deck = round_deck(DEFAULT_RULESET, 99, round_number + 1)
    assert game.hands[0] == tuple(sorted(deck[:size]))
    assert game.hands[1] == tuple(sorted(deck[size : 2 * size]))
    assert game.phase is DecisionKind.REPLACE and game.pending == {0}  # R1: arrow on 6


@pytest.mark.parametrize("space", [3, 4, 6])
def test_P10_tie_leaves_board_and_deals_new_round_on_same_space(space: int) -> None:
    """P10: equal last cards tie the round: the Tacocat does not move, no tile is placed, the
    whole deck is shuffled and a new round (round + 1) is dealt on the same space."""
    covered = (1,) if space != 1 else (7,)
    game = finish_round(5, 5, tacocat=space, covered=covered, seed=7)
    end = round_end(game)
    assert end["winner"] is None and end["covered"] is None
    assert game.tacocat == space
    assert [i for i, c in enumerate(game.covered) if c] == list(covered)
    assert game.round == 2 and game.outcome is None
    size = DEFAULT_RULESET.hand_size_at(space)
    deal = game.events[-1]
    assert deal["type"] == "deal" and deal["round"] == 2 and deal["position"] == space
    assert len(game.hands[0]) == len(game.hands[1]) == size
    deck = round_deck(DEFAULT_RULESET, 7, 2)
    assert game.hands[0] == tuple(sorted(deck[:size]))
    assert game.phase is DecisionKind.REPLACE


ARROW = Ruleset(tie_rule=TieRule.ARROW)


@pytest.mark.parametrize("space,winner,to", [(3, 1, 4), (1, 1, 2), (6, 0, 5), (7, 0, 6)])
def test_P10_arrow_variant_gives_tie_to_arrow_seat(space: int, winner: int, to: int) -> None:
    """P10 variant (tie_rule = arrow): a tied round goes to the seat the single arrow points
    to; the Tacocat moves and the space is covered."""
    game = finish_round(5, 5, tacocat=space, ruleset=ARROW)
    end = round_end(game)
    assert end["winner"] == winner
    assert game.tacocat == to
    assert game.covered[space]


def test_P10_arrow_variant_still_ties_on_two_arrow_centre() -> None:
    """P10 variant: on a two-arrow space a tie is still a tie (new round, same space)."""
    game = finish_round(5, 5, tacocat=4, ruleset=ARROW)
    assert round_end(game)["winner"] is None
    assert game.tacocat == 4 and not any(game.covered)
    assert game.round == 2


def test_W1_reaching_own_goal_wins_and_ends_the_game() -> None:
    """W1: the first player to move the Tacocat into their own goal wins; nothing more is
    dealt and every further action is refused with W1."""
    game = finish_round(*won_by(1), tacocat=7, covered=(1, 2))
    assert game.tacocat == GOAL_1
    assert game.outcome is not None
    assert game.outcome.termination is Termination.GOAL
    assert game.outcome.winner == 1 and game.outcome.result() == "0-1"
    assert game.events[-1]["type"] == "game_end"
    assert [e["type"] for e in game.events].count("deal") == 1
    assert game.is_over and game.pending == frozenset() and game.phase is None
    with pytest.raises(InvalidActionError) as info:
        game.apply(0, Replace(()))
    assert str(info.value).startswith("W1: ")


@pytest.mark.parametrize("seed", range(150))
def test_W1_at_most_seven_decisive_rounds(seed: int) -> None:
    """W1: with 7 spaces and 7 tiles a game has at most 7 decisive rounds."""
    rng = random.Random(seed)
    policies = [RandomPolicy(random.Random(rng.random())) for _ in range(2)]
    if seed % 3 == 0:
        policies[seed % 2] = GreedyPolicy()
    game = play_game(policies, seed=seed)
    decisive = [e for e in game.events if e["type"] == "round_end" and e["winner"] is not None]
    assert len(decisive) <= 7
    assert game.outcome is not None
    if game.outcome.termination is Termination.GOAL:
        assert decisive[-1]["winner"] == game.outcome.winner


def test_W2_round_cap_reached_on_a_tie_is_a_draw() -> None:
    """W2: a game whose round count reaches max_rounds without a winner is a draw."""
    game = finish_round(5, 5, ruleset=Ruleset(max_rounds=1))
    assert game.outcome is not None
    assert game.outcome.termination is Termination.ROUND_CAP
    assert game.outcome.winner is None and game.outcome.result() == "1/2-1/2"
    assert game.round == 1 and game.events[-1]["type"] == "game_end"


def test_W2_round_cap_counts_ties_and_decisive_rounds() -> None:
    """W2: round count includes ties; a decisive round that misses the goal at the cap ends
    in a draw too; below the cap the game goes on."""
    capped = finish_round(*won_by(0), ruleset=Ruleset(max_rounds=2), round_number=2, tacocat=4)
    assert capped.outcome is not None and capped.outcome.termination is Termination.ROUND_CAP
    assert capped.outcome.winner is None
    going = finish_round(5, 5, round_number=49)
    assert going.outcome is None and going.round == 50
    capped50 = finish_round(5, 5, round_number=50)
    assert capped50.outcome is not None
    assert capped50.outcome.termination is Termination.ROUND_CAP


def test_W1_goal_beats_round_cap() -> None:
    """W1/W2: reaching a goal in the cap's last round is a win, not a draw."""
    game = finish_round(*won_by(0), ruleset=Ruleset(max_rounds=1), tacocat=1)
    assert game.outcome is not None
    assert game.outcome.termination is Termination.GOAL and game.outcome.winner == 0


@pytest.mark.parametrize("seed", range(10))
def test_W2_tie_rule_games_between_copycats_end_by_cap(seed: int) -> None:
    """W2: games always end, within max_rounds."""
    ruleset = Ruleset(max_rounds=3)
    game = play_game([GreedyPolicy(), GreedyPolicy()], ruleset=ruleset, seed=seed)
    assert game.outcome is not None and game.round <= 3
