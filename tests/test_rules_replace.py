"""Replacing cards (RULES-SPEC R1-R4) on hand-built positions."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tacocat_arena.engine import (
    DecisionKind,
    Game,
    IllegalActionError,
    InvalidActionError,
    Replace,
    build_view,
)

HANDS = ((1, 4, 6, 9), (2, 5, 7, 11))
DRAW = (3, 8, 10, 12, 5, 6, 7, 8)


def snapshot(game: Game) -> dict[str, Any]:
    """Everything an action may change."""
    return copy.deepcopy(
        {
            "hands": tuple(game.hands),
            "draw": tuple(game.draw_pile),
            "discards": game.discards,
            "events": list(game.events),
            "phase": game.phase,
            "pending": game.pending,
            "cap": game.replace_cap,
            "actions": list(game.actions),
            "round": game.round,
            "views": [tuple(build_view(game, s)) for s in (0, 1)],
        }
    )


def position(tacocat: int) -> Game:
    return Game.from_position(HANDS, draw_pile=DRAW, tacocat=tacocat)


@pytest.mark.parametrize("tacocat,first", [(1, 1), (2, 1), (3, 1), (5, 0), (6, 0), (7, 0)])
def test_R1_arrow_seat_replaces_first(tacocat: int, first: int) -> None:
    """R1: the player the arrow points to replaces first; the other seat may not act first."""
    game = position(tacocat)
    assert game.phase is DecisionKind.REPLACE
    assert game.pending == {first}
    assert game.decision_for(first) is DecisionKind.REPLACE
    assert game.decision_for(1 - first) is None
    before = snapshot(game)
    with pytest.raises(InvalidActionError) as info:
        game.apply(1 - first, Replace(()))
    assert str(info.value).startswith("R1: ")
    assert snapshot(game) == before


def test_R1_discard_k_face_up_then_draw_k() -> None:
    """R1: the first replacer discards k cards (face up) and draws k from the draw pile."""
    game = position(3)  # arrow -> seat 1
    game.apply(1, Replace((2, 11)))
    assert game.hands[1] == tuple(sorted((5, 7) + DRAW[:2]))
    assert game.discards == (2, 11)
    assert tuple(game.draw_pile) == DRAW[2:]
    assert game.pending == {0}


@pytest.mark.parametrize("k", [0, 4])
def test_R1_zero_or_whole_hand_allowed(k: int) -> None:
    """R1: k = 0 and k = the whole hand are both allowed."""
    game = position(5)  # arrow -> seat 0
    cards = HANDS[0][:k]
    game.apply(0, Replace(cards))
    assert len(game.hands[0]) == 4
    assert game.discards == cards
    assert game.replace_limit(1) == k


def test_R1_cannot_replace_cards_not_in_hand() -> None:
    """R1: the replaced cards must come from the hand; refused, state unchanged."""
    game = position(5)
    before = snapshot(game)
    with pytest.raises(IllegalActionError) as info:
        game.apply(0, Replace((12,)))
    assert str(info.value).startswith("R1: ")
    assert snapshot(game) == before


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_R2_second_replacer_capped_at_k(k: int) -> None:
    """R2: the other player may replace j cards with 0 <= j <= k; j = k + 1 is refused."""
    game = position(6)  # arrow -> seat 0 first
    game.apply(0, Replace(HANDS[0][:k]))
    assert game.pending == {1}
    assert build_view(game, 1).max_replace == k
    before = snapshot(game)
    with pytest.raises(IllegalActionError) as info:
        game.apply(1, Replace(HANDS[1][: k + 1]))
    assert str(info.value).startswith("R2: ")
    assert snapshot(game) == before
    game.apply(1, Replace(HANDS[1][:k]))
    assert game.phase is DecisionKind.DUEL
    assert game.pending == {0, 1}
    assert len(game.hands[0]) == len(game.hands[1]) == 4


def test_R3_centre_both_choose_simultaneously_without_cap() -> None:
    """R3 (DECIDED): on the two-arrow centre both replace at once, neither sees the other's
    choice before both have committed, and there is no cap."""
    game = position(4)
    assert game.pending == {0, 1}
    view1_before = build_view(game, 1)
    game.apply(0, Replace((9,)))
    # Seat 0's choice is invisible to seat 1 until seat 1 commits.
    assert game.pending == {1}
    view1 = build_view(game, 1)
    assert tuple(view1) == tuple(view1_before)
    assert not any(e["type"] == "replace" for e in view1.events)
    assert view1.discards == ()
    assert view1.max_replace == 4  # no cap from seat 0's single card
    assert game.hands[0] == HANDS[0]  # nothing resolved yet
    # A second commit by seat 0 is refused.
    with pytest.raises(InvalidActionError):
        game.apply(0, Replace(()))
    game.apply(1, Replace(HANDS[1]))  # the whole hand: more than seat 0's k = 1
    assert game.phase is DecisionKind.DUEL
    replaces = [e for e in game.events if e["type"] == "replace"]
    assert sorted(e["seat"] for e in replaces) == [0, 1]
    assert sorted(game.discards) == sorted((9,) + HANDS[1])
    assert len(game.hands[0]) == len(game.hands[1]) == 4


def test_R3_seat1_may_commit_first_on_centre() -> None:
    """R3: simultaneous means either seat may commit first; seat 0 then sees nothing of it."""
    game = position(4)
    game.apply(1, Replace((2, 5)))
    view0 = build_view(game, 0)
    assert not any(e["type"] == "replace" for e in view0.events)
    assert view0.discards == () and view0.max_replace == 4
    game.apply(0, Replace((1, 4, 6)))
    assert game.phase is DecisionKind.DUEL


def test_R4_replaced_cards_public_drawn_cards_private() -> None:
    """R4/I1/I2: the opponent sees which cards were discarded, never which were drawn."""
    game = position(2)  # arrow -> seat 1
    game.apply(1, Replace((2, 5, 7)))
    game.apply(0, Replace((1,)))
    for viewer in (0, 1):
        view = build_view(game, viewer)
        assert view.discards == (2, 5, 7, 1)
        replaces = {e["seat"]: e for e in view.events if e["type"] == "replace"}
        assert replaces[1]["discarded"] == (2, 5, 7)
        assert replaces[0]["discarded"] == (1,)
        assert "drawn" in replaces[viewer]
        assert "drawn" not in replaces[1 - viewer]
        assert view.opponent_hand_size == 4
        assert view.draw_pile_size == len(DRAW) - 4
    assert build_view(game, 1).events[-2]["drawn"] == DRAW[:3]


def test_R1_malformed_replace_list_is_normalised_or_refused_without_change() -> None:
    """R1 / apply's contract: a Replace whose cards come as a list is either applied exactly
    like the tuple form or refused with an ActionError leaving the game unchanged; it must
    never half-apply (hand changed, draw pile consumed, discards not updated)."""
    from tacocat_arena.engine import ActionError

    expected = position(5)
    expected.apply(0, Replace((4,)))
    game = position(5)
    before = snapshot(game)
    try:
        game.apply(0, Replace([4]))  # type: ignore[arg-type]
    except ActionError:
        assert snapshot(game) == before
    except Exception as error:  # noqa: BLE001 - any other error must not corrupt the state
        assert snapshot(game) == before, f"{type(error).__name__} after changing the state"
    else:
        assert game.hands == expected.hands
        assert tuple(game.discards) == expected.discards
        assert game.draw_pile == expected.draw_pile
