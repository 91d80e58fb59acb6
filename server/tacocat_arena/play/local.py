"""In-process play: policies against each other on the engine, no network."""

from __future__ import annotations

from collections.abc import Sequence

from tacocat_arena.engine import DEFAULT_RULESET, Game, Ruleset, build_view
from tacocat_arena.play.policies import Policy


def play_game(
    policies: Sequence[Policy], *, ruleset: Ruleset = DEFAULT_RULESET, seed: int = 0
) -> Game:
    """Play one game, ``policies[0]`` in seat 0; return the finished game.

    In a simultaneous decision both views are built before either seat commits, so neither
    policy can see the other's choice (D1, R3).
    """
    game = Game(ruleset, seed)
    while game.outcome is None:
        pending = game.pending
        if len(pending) == 1:
            (seat,) = pending
            game.apply(seat, policies[seat].act(build_view(game, seat)))
        else:
            view0, view1 = build_view(game, 0), build_view(game, 1)
            game.apply(0, policies[0].act(view0))
            game.apply(1, policies[1].act(view1))
    return game
