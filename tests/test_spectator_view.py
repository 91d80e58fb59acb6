"""A spectator of a game in flight sees what both seats may know and no hidden card (issue 40:
the spectator view lives beside ``build_view``, in the engine, and the web page uses it).

Random games are played one action at a time; before every action the spectator view is
walked through every attribute (tests/view_walk.py) as if it were each seat's view in turn,
so it may reach neither hand, no card either seat drew, no draw pile, no full event and no
choice committed before both are revealed; the arena's live JSON built from it is checked
the same way.
"""

from __future__ import annotations

import json
import random

from view_walk import forbidden

from tacocat_arena.arena.ladder import LiveGame
from tacocat_arena.engine import (
    DEFAULT_RULESET,
    Game,
    Ruleset,
    TieRule,
    build_view,
    spectator_event,
    spectator_view,
)
from tacocat_arena.play.policies import RandomPolicy
from tacocat_arena.web import views

#: The keys a spectator's deal and replace events hold: counts and discards, no card kept.
PUBLIC_KEYS = {
    "deal": {"type", "round", "position", "hand_size"},
    "replace": {"type", "round", "seat", "discarded"},
}


def _hidden_in(found: object) -> list[str]:
    """Hidden-card keys anywhere in a JSON-like value."""
    if isinstance(found, dict):
        bad = [key for key in ("hand", "hands", "drawn", "draw_pile", "seed") if key in found]
        kind = found.get("type")
        if kind in PUBLIC_KEYS and set(found) != PUBLIC_KEYS[kind]:
            bad.append(f"{kind} event with {sorted(found)}")
        return bad + [b for value in found.values() for b in _hidden_in(value)]
    if isinstance(found, (list, tuple)):
        return [b for value in found for b in _hidden_in(value)]
    return []


def _play(ruleset: Ruleset, seed: int) -> int:
    """One game with random actions; checks the spectator's view and the live JSON before
    every action; returns how many views it checked."""
    game = Game(ruleset, seed)
    live = LiveGame("L1", ("ann", "ben"), "ladder", 0.0)
    live.game = game
    policy = RandomPolicy(random.Random(seed))
    checked = 0
    while not game.is_over:
        view = spectator_view(game)
        for seat in (0, 1):  # as if the spectator were either seat: both hands are hidden
            problems = forbidden(view, game, seat)
            assert not problems, (seed, game.round, problems)
        assert view.hand_sizes == (len(game.hands[0]), len(game.hands[1]))
        assert view.events == tuple(spectator_event(e) for e in game.events)
        state = views.spectator_state(live)
        assert not _hidden_in(state), (seed, _hidden_in(state))
        assert json.dumps(state["events"]) == json.dumps(view.events)
        checked += 1
        seat = min(game.pending)
        game.apply(seat, policy.act(build_view(game, seat)))
    return checked


def test_a_spectator_sees_no_hidden_card_during_a_live_game() -> None:
    checked = sum(_play(DEFAULT_RULESET, seed) for seed in range(8))
    checked += sum(_play(Ruleset(tie_rule=TieRule.ARROW, max_rounds=6), s) for s in range(4))
    assert checked > 200


def test_the_counts_a_spectator_sees_are_the_games() -> None:
    game = Game(DEFAULT_RULESET, 3)
    policy = RandomPolicy(random.Random(3))
    while not game.is_over:
        seat = min(game.pending)
        game.apply(seat, policy.act(build_view(game, seat)))
    view = spectator_view(game)
    won = [r.winner for r in game.round_results]
    assert view.rounds_won == (won.count(0), won.count(1)) and sum(view.rounds_won) >= 1
    assert view.round == game.round and view.tacocat == game.tacocat
    assert view.draw_pile_size == len(game.draw_pile) and view.covered == game.covered
