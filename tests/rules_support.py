"""Helpers shared by the rule tests (tests/test_rules_*.py)."""

from __future__ import annotations

import copy
from typing import Any

from tacocat_arena.engine import Game, build_view


def snapshot(game: Game) -> dict[str, Any]:
    """Everything an action may change (hands, events, pending, phase, ...): a refused action
    must leave it equal."""
    return copy.deepcopy(
        {
            "hands": tuple(game.hands),
            "discards": game.discards,
            "events": list(game.events),
            "phase": game.phase,
            "pending": game.pending,
            "attacker": game.attacker,
            "attack": game.current_attack,
            "actions": list(game.actions),
            "round": game.round,
            "tacocat": game.tacocat,
            "covered": game.covered,
            "views": [tuple(build_view(game, s)) for s in (0, 1)],
        }
    )
