"""Helpers for the tests of the replay pages: the engine's table after every action, and the
table a replay page shows (read from its DOM in one call)."""

from __future__ import annotations

from typing import Any

from tacocat_arena.engine import Forfeit, Game, Ruleset
from tacocat_arena.engine.record import action_from_json


def engine_states(record: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """Event index -> the engine's table right after the action that logged that event."""
    game = Game(Ruleset.from_dict(record["ruleset"]), record["seed"])
    states: dict[int, dict[str, Any]] = {}
    for entry in record["actions"]:
        seat, action = action_from_json(entry)
        before = len(game.events)
        if isinstance(action, Forfeit):
            game.forfeit(seat, action.termination, action.detail)
        else:
            game.apply(seat, action)
        if len(game.events) > before:
            won = [0, 0]
            for result in game.round_results:
                if result.winner is not None:
                    won[result.winner] += 1
            states[len(game.events) - 1] = {
                "hands": [list(game.hands[0]), list(game.hands[1])],
                "discards": list(game.discards),
                "position": game.tacocat,
                "covered": [i for i, c in enumerate(game.covered) if c],
                "won": won,
                "round": game.round,
            }
    return states


def read_table(page: Any) -> dict[str, Any]:
    return page.evaluate(
        """() => ({
          index: Number(document.getElementById('step').dataset.index),
          hands: [0, 1].map(s => {
            const c = document.getElementById('hand-' + s).dataset.cards;
            return c ? c.split(' ').map(Number) : [];
          }),
          discards: (d => d ? d.split(' ').map(Number) : [])(
            document.getElementById('discards').dataset.cards),
          position: Number(document.getElementById('tacocat').dataset.pos),
          covered: [...document.querySelectorAll('#board .tile.covered')]
            .map(t => Number(t.dataset.space)).sort((a, b) => a - b),
          won: document.getElementById('score').dataset.won.split('-').map(Number),
          text: document.getElementById('event-text').textContent,
        })"""
    )
