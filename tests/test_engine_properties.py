"""Invariants over random legal play (hypothesis): cards conserved, hands equal, P6, no leaks
(I2), determinism, seat-swap fairness, termination, records, and the legal-move helpers."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tacocat_arena.engine import (
    DEFAULT_RULESET,
    Attack,
    DecisionKind,
    Game,
    IllegalActionError,
    RecordError,
    Ruleset,
    TieRule,
    build_view,
    check_attack_shape,
    check_defence,
    enumerate_defences,
    legal_attacks,
    replay,
    round_deck,
    sample_defence,
    to_record,
)
from tacocat_arena.play.policies import GreedyPolicy, RandomPolicy

SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HIDDEN_KEYS = {"hands", "draw_pile", "seed"}

seeds = st.integers(min_value=0, max_value=2**64 - 1)
rng_seeds = st.integers(min_value=0, max_value=2**32)
kinds = st.sampled_from(["random", "random", "greedy"])
rulesets = st.sampled_from(
    [
        DEFAULT_RULESET,
        Ruleset(tie_rule=TieRule.ARROW),
        Ruleset(max_rounds=3),
    ]
)


def make_policy(kind: str, rng_seed: int) -> Any:
    return GreedyPolicy() if kind == "greedy" else RandomPolicy(random.Random(rng_seed))


def check_invariants(game: Game) -> None:
    """The invariants that hold at every step of a legal game."""
    deck = Counter(game.ruleset.cards())
    hand0, hand1 = game.hands
    # All cards accounted for: hands + draw pile + this round's discards == the deck.
    assert (
        Counter(hand0) + Counter(hand1) + Counter(game.draw_pile) + Counter(game.discards) == deck
    )
    # Hand sizes: equal at decision points, except mid-trick (DEFEND) where the attacker has
    # already played its k attack cards.
    if game.phase is DecisionKind.DEFEND:
        (defender,) = game.pending
        attacker = 1 - defender
        assert len(game.hands[defender]) == len(game.hands[attacker]) + len(game.current_attack)
    else:
        assert len(hand0) == len(hand1)
    # P6: nobody is ever left without a card.
    assert hand0 and hand1
    for viewer in (0, 1):
        view = build_view(game, viewer)
        assert view.hand == game.hands[viewer]
        assert view.opponent_hand_size == len(game.hands[1 - viewer])
        assert view.draw_pile_size == len(game.draw_pile)
        assert view.discards == game.discards
        assert view.tacocat == game.tacocat and view.round == game.round
        for event in view.events:
            assert not HIDDEN_KEYS & set(event), event
            if event["type"] == "replace" and event["seat"] != viewer:
                assert "drawn" not in event, event
            if event["type"] == "deal":
                full = next(e for e in reversed(game.events) if e["type"] == "deal")
                assert event["hand"] == full["hands"][viewer]
        if view.kind is DecisionKind.ATTACK:
            assert view.legal is not None
            assert all(len(a) < len(view.hand) for a in view.legal.attacks)  # P6


def play_checked(
    ruleset: Ruleset, seed: int, policies: list[Any], seat1_first: bool = False
) -> Game:
    """Play a game checking the invariants after every action and the secrecy of every
    simultaneous choice (D1, R3)."""
    game = Game(ruleset, seed)
    check_invariants(game)
    while not game.is_over:
        pending = sorted(game.pending)
        views = {seat: build_view(game, seat) for seat in pending}
        if len(pending) == 2:
            first, second = (1, 0) if seat1_first else (0, 1)
            other_before = tuple(build_view(game, second))
            game.apply(first, policies[first].act(views[first]))
            assert tuple(build_view(game, second)) == other_before  # nothing revealed yet
            check_invariants(game)
            game.apply(second, policies[second].act(views[second]))
        else:
            (seat,) = pending
            if game.phase is DecisionKind.ATTACK:
                attack = policies[seat].act(views[seat])
                assert len(attack.cards) < len(game.hands[seat])  # P6
                game.apply(seat, attack)
            else:
                game.apply(seat, policies[seat].act(views[seat]))
        check_invariants(game)
    assert game.round <= ruleset.max_rounds
    return game


@settings(SETTINGS, max_examples=40)
@given(
    ruleset=rulesets,
    seed=seeds,
    r0=rng_seeds,
    r1=rng_seeds,
    k0=kinds,
    k1=kinds,
    seat1_first=st.booleans(),
)
def test_random_play_invariants(
    ruleset: Ruleset, seed: int, r0: int, r1: int, k0: str, k1: str, seat1_first: bool
) -> None:
    """C1/S2/M4 (38 cards), P6, equal hands, I2, W1/W2 (ends within max_rounds and with at
    most `spaces` decisive rounds)."""
    game = play_checked(ruleset, seed, [make_policy(k0, r0), make_policy(k1, r1)], seat1_first)
    assert game.outcome is not None
    decisive = [e for e in game.events if e["type"] == "round_end" and e["winner"] is not None]
    assert len(decisive) <= ruleset.spaces
    assert not game.covered[0] and not game.covered[-1]


@SETTINGS
@given(seed=seeds, r0=rng_seeds, r1=rng_seeds, k0=kinds, k1=kinds)
def test_same_seed_and_actions_give_same_log(seed: int, r0: int, r1: int, k0: str, k1: str) -> None:
    """Determinism: identical (seed, policies' rng seeds) give identical actions and events."""
    from tacocat_arena.play.local import play_game

    first = play_game([make_policy(k0, r0), make_policy(k1, r1)], seed=seed)
    second = play_game([make_policy(k0, r0), make_policy(k1, r1)], seed=seed)
    assert first.actions == second.actions
    assert first.events == second.events
    assert first.outcome == second.outcome


@SETTINGS
@given(seed=seeds, r0=rng_seeds, r1=rng_seeds, k0=kinds, k1=kinds)
def test_seat_swapped_games_get_the_same_deal_per_round(
    seed: int, r0: int, r1: int, k0: str, k1: str
) -> None:
    """S2/M4 fairness: round r's deck depends only on (seed, r): with the policies swapped,
    every round played on the same space deals each seat the same cards."""
    from tacocat_arena.play.local import play_game

    a = play_game([make_policy(k0, r0), make_policy(k1, r1)], seed=seed)
    b = play_game([make_policy(k1, r1), make_policy(k0, r0)], seed=seed)
    deals_a = {e["round"]: e for e in a.events if e["type"] == "deal"}
    deals_b = {e["round"]: e for e in b.events if e["type"] == "deal"}
    assert deals_a[1]["hands"] == deals_b[1]["hands"]
    for round_number, deal in deals_a.items():
        size = deal["hand_size"]
        deck = round_deck(DEFAULT_RULESET, seed, round_number)
        assert deal["hands"] == (tuple(sorted(deck[:size])), tuple(sorted(deck[size : 2 * size])))
        assert deal["draw_pile"] == tuple(deck[2 * size :])
        other = deals_b.get(round_number)
        if other is not None and other["position"] == deal["position"]:
            assert other["hands"] == deal["hands"]
            assert other["draw_pile"] == deal["draw_pile"]


@pytest.mark.parametrize("round_number", [1, 2, 5, 50])
def test_round_deck_depends_only_on_seed_and_round(round_number: int) -> None:
    """M4: round_deck is a pure function of (ruleset, seed, round) and a permutation of it."""
    deck = round_deck(DEFAULT_RULESET, 11, round_number)
    assert deck == round_deck(DEFAULT_RULESET, 11, round_number)
    assert sorted(deck) == DEFAULT_RULESET.cards()


def _tamper_action(entry: dict[str, Any]) -> dict[str, Any]:
    entry = dict(entry)
    if "replace" in entry:
        entry["replace"] = entry["replace"][:-1] if entry["replace"] else [99]
    elif "duel" in entry:
        entry["duel"] = entry["duel"] % 12 + 1
    elif "attack" in entry:
        cards = entry["attack"]
        entry["attack"] = [cards[0]] if len(cards) > 1 else [cards[0] % 12 + 1]
    elif "defend" in entry:
        answers = list(entry["defend"])
        answers[0] = 12 if answers[0] is None else None
        entry["defend"] = answers
    return entry


@SETTINGS
@given(seed=seeds, r0=rng_seeds, r1=rng_seeds, k0=kinds, k1=kinds, data=st.data())
def test_records_replay_and_tampering_is_detected(
    seed: int, r0: int, r1: int, k0: str, k1: str, data: st.DataObject
) -> None:
    """Records: replay(to_record(game)) succeeds; any changed action or event raises."""
    from tacocat_arena.play.local import play_game

    game = play_game([make_policy(k0, r0), make_policy(k1, r1)], seed=seed)
    record = to_record(game)
    again = replay(record)
    assert again.events == game.events and again.outcome == game.outcome

    index = data.draw(st.integers(0, len(record["actions"]) - 1), label="action")
    tampered = dict(record, actions=list(record["actions"]))
    tampered["actions"][index] = _tamper_action(record["actions"][index])
    with pytest.raises(RecordError):
        replay(tampered)

    index = data.draw(st.integers(0, len(record["events"]) - 1), label="event")
    tampered = dict(record, events=list(record["events"]))
    tampered["events"][index] = dict(record["events"][index], round=-1)
    with pytest.raises(RecordError):
        replay(tampered)


# -- legal-move helpers ---------------------------------------------------------------------
small_hands = st.lists(st.integers(1, 7), min_size=1, max_size=7).map(lambda h: tuple(sorted(h)))


@settings(max_examples=60, deadline=None)
@given(hand=small_hands)
def test_legal_attacks_agree_with_shape_check_brute_force(hand: tuple[int, ...]) -> None:
    """P1/P3/P6: legal_attacks is exactly the sub-multisets of the hand that pass
    check_attack_shape, and the game accepts exactly those."""
    subsets = {
        tuple(hand[i] for i in combo)
        for size in range(1, len(hand) + 1)
        for combo in itertools.combinations(range(len(hand)), size)
    }
    expected = set()
    for cards in subsets:
        try:
            check_attack_shape(cards, len(hand))
        except IllegalActionError:
            continue
        expected.add(cards)
    listed = legal_attacks(hand)
    assert len(listed) == len(set(listed))
    assert set(listed) == expected
    for cards in subsets:
        game = Game.from_position((hand, (1,) * len(hand)), phase=DecisionKind.ATTACK)
        try:
            game.apply(0, Attack(cards))
        except IllegalActionError as error:
            assert cards not in expected, error
            assert str(error)[:3] in ("P3:", "P6:")
        else:
            assert cards in expected


attacks = st.lists(st.integers(1, 12), min_size=1, max_size=4)
hands = st.lists(st.integers(1, 12), min_size=1, max_size=6).map(lambda h: tuple(sorted(h)))


@settings(max_examples=60, deadline=None)
@given(attack=attacks, hand=hands, rng_seed=rng_seeds)
def test_enumerate_defences_is_exactly_the_legal_defences(
    attack: list[int], hand: tuple[int, ...], rng_seed: int
) -> None:
    """P2/P4: enumerate_defences yields each legal defence once (check_defence accepts it),
    misses none (brute force), and contains every sample_defence result."""
    legal = set()
    for answers in itertools.product([None, *sorted(set(hand))], repeat=len(attack)):
        try:
            check_defence(attack, answers, hand)
        except IllegalActionError:
            continue
        legal.add(answers)
    listed = list(enumerate_defences(attack, hand))
    assert len(listed) == len(set(listed))
    assert set(listed) == legal
    for answers in listed:
        rest = check_defence(attack, answers, hand)
        assert len(rest) == len(hand) - sum(a is not None for a in answers)
    rng = random.Random(rng_seed)
    for _ in range(5):
        assert sample_defence(attack, hand, rng) in legal


def test_a_copy_plays_on_alone_and_deals_the_same_later_rounds() -> None:
    for seed in range(20):
        original = play_partially(seed, decisions=12)
        before = (list(original.events), list(original.hands), list(original.draw_pile))
        copy = original.copy()
        finish(copy, seed)
        assert copy.outcome is not None and original.outcome is None
        assert (list(original.events), list(original.hands), list(original.draw_pile)) == before
        # the original, played on the same way, meets the same later deals: no shared state
        finish(original, seed)
        assert original.events == copy.events and original.outcome == copy.outcome


def test_a_copy_that_does_not_deal_fails_if_it_reaches_a_deal() -> None:
    game = play_partially(3, decisions=0)
    copy = game.copy(deals=False)
    with pytest.raises(AttributeError):
        finish(copy, 3)
    assert game.outcome is None and game.round == 1


def play_partially(seed: int, decisions: int) -> Game:
    game = Game(DEFAULT_RULESET, seed)
    finish(game, seed, limit=decisions)
    return game


def finish(game: Game, seed: int, limit: int | None = None) -> None:
    """Play on with seeded random policies (``limit`` decisions at most)."""
    rng, done = random.Random(seed), 0
    while game.outcome is None and (limit is None or done < limit):
        for seat in sorted(game.pending):
            game.apply(seat, RandomPolicy(rng).act(build_view(game, seat)))
            done += 1
