"""Game records: the JSON form of a game and its re-verification (docs/game-record.md).

A record carries the ruleset, the seed, the actions in the order they were applied and the
full event log.  ``replay`` rebuilds the game from (ruleset, seed, actions) and checks that it
produces the recorded events: anyone can re-verify a result.  The events alone (deals
included) are enough to follow a game in another language without our shuffle.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tacocat_arena.engine.game import Game
from tacocat_arena.engine.ruleset import Ruleset
from tacocat_arena.engine.types import (
    Action,
    Attack,
    Defend,
    Duel,
    Forfeit,
    Replace,
    Seat,
    Termination,
)

FORMAT = "tacocat-game-record"
VERSION = 1


class RecordError(ValueError):
    """A record is malformed, or does not replay to its own events."""


def action_to_json(seat: Seat | None, action: Action | Forfeit) -> dict[str, Any]:
    """One applied action as a JSON object: ``{"seat": 0, "<kind>": ...}``."""
    if isinstance(action, Replace):
        return {"seat": seat, "replace": list(action.cards)}
    if isinstance(action, Duel):
        return {"seat": seat, "duel": action.card}
    if isinstance(action, Attack):
        return {"seat": seat, "attack": list(action.cards)}
    if isinstance(action, Defend):
        return {"seat": seat, "defend": list(action.answers)}
    return {"seat": seat, "forfeit": action.termination.value, "detail": action.detail}


def action_from_json(data: Mapping[str, Any]) -> tuple[Any, Action | Forfeit]:
    """Inverse of ``action_to_json``; raises RecordError on a malformed entry."""
    try:
        seat = None if data["seat"] is None else int(data["seat"])
        if "replace" in data:
            return seat, Replace(tuple(int(c) for c in data["replace"]))
        if "duel" in data:
            return seat, Duel(int(data["duel"]))
        if "attack" in data:
            return seat, Attack(tuple(int(c) for c in data["attack"]))
        if "defend" in data:
            return seat, Defend(tuple(None if a is None else int(a) for a in data["defend"]))
        if "forfeit" in data:
            return seat, Forfeit(Termination(data["forfeit"]), str(data.get("detail", "")))
    except (KeyError, TypeError, ValueError) as error:
        raise RecordError(f"malformed action {dict(data)!r}: {error}") from error
    raise RecordError(f"action {dict(data)!r} names no known kind")


def to_record(game: Game) -> dict[str, Any]:
    """The whole game as a JSON-ready record (holds hidden information: publish it after
    the game, never to a player during it)."""
    outcome = game.outcome
    return {
        "format": FORMAT,
        "version": VERSION,
        "ruleset": game.ruleset.to_dict(),
        "seed": game.seed,
        "result": None if outcome is None else outcome.result(),
        "termination": None if outcome is None else outcome.termination.value,
        "winner": None if outcome is None else outcome.winner,
        "rounds": game.round,
        "actions": [action_to_json(seat, action) for seat, action in game.actions],
        "events": events_to_json(game.events),
    }


def events_to_json(events: list[Any]) -> list[dict[str, Any]]:
    """The events in their JSON form (tuples become lists), as a record stores them."""
    return json.loads(json.dumps(events))


def replay(record: Mapping[str, Any]) -> Game:
    """Rebuild a game from a record's (ruleset, seed, actions) and check it against the
    record's events and result; raise RecordError on any difference."""
    if record.get("format") != FORMAT or record.get("version") != VERSION:
        raise RecordError(f"not a {FORMAT} version {VERSION} record")
    try:
        game = Game(Ruleset.from_dict(record["ruleset"]), int(record["seed"]))
    except (KeyError, TypeError, ValueError) as error:
        raise RecordError(f"the record's ruleset or seed is invalid: {error}") from error
    for index, entry in enumerate(record["actions"]):
        seat, action = action_from_json(entry)
        try:
            if isinstance(action, Forfeit):
                game.forfeit(seat, action.termination, action.detail)
            else:
                game.apply(seat, action)
        except ValueError as error:
            raise RecordError(f"action {index} ({entry}) is not legal: {error}") from error
    events = events_to_json(game.events)
    if events != list(record["events"]):
        for index, (mine, theirs) in enumerate(zip(events, record["events"], strict=False)):
            if mine != theirs:
                raise RecordError(f"event {index} differs: replayed {mine}, recorded {theirs}")
        raise RecordError(f"replay has {len(events)} events, the record {len(record['events'])}")
    if record.get("result") != (None if game.outcome is None else game.outcome.result()):
        raise RecordError("the recorded result does not match the replay")
    return game
