"""Game records: the JSON form of a game and its re-verification (docs/game-record.md).

A record carries the ruleset, the seed, the actions in the order they were applied and the
full event log.  ``replay`` rebuilds the game from (ruleset, seed, actions) and checks that it
produces the recorded events: anyone can re-verify a result.  The events alone (deals
included) are enough to follow a game in another language without our shuffle.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tacocat_arena.engine.errors import ActionError
from tacocat_arena.engine.game import Game
from tacocat_arena.engine.ruleset import Ruleset
from tacocat_arena.engine.types import (
    Action,
    Attack,
    Defend,
    Duel,
    Failure,
    Forfeit,
    Replace,
    Seat,
    Termination,
)

FORMAT = "tacocat-game-record"
VERSION = 2
#: Versions ``replay`` reads: version 1 records carry no timings, refusals or marks.
READABLE_VERSIONS = (1, 2)

#: The rule behind each kind of event, for a replay whose events differ from the record's
#: (docs/game-record.md, "Checks"); F1 and E1 are the record's own checks, not game rules.
EVENT_RULE = {
    "deal": "S2",
    "replace": "R1",
    "duel": "D2",
    "attack": "P1",
    "defend": "P2",
    "showdown": "P9",
    "round_end": "M1",
    "forfeit": "E1",
    "game_end": "W1",
    "substituted": "F1",
}


class RecordError(ValueError):
    """A record is malformed, or does not replay to its own events.

    ``rule`` names what is broken (a RULES-SPEC rule ID, or one of the record's own checks in
    docs/game-record.md) and ``round`` where, when known, so that ``verify`` can say both.
    """

    def __init__(self, message: str, *, rule: str = "E1", round: int | None = None) -> None:
        super().__init__(message)
        self.rule = rule
        self.round = round


@dataclass(frozen=True, slots=True)
class Refused:
    """An answer the referee refused (record version 2): what the bot sent and why."""

    failure: Failure
    #: What the seat was told; it starts with the rule ID when a rule was broken.
    error: str
    rule: str = ""
    #: The action the bot sent, as the wire decoded it; None when it could not be decoded.
    sent: Action | None = None
    #: Why the answer could not be decoded (and what arrived), when ``sent`` is None.
    note: str = ""


@dataclass(frozen=True, slots=True)
class DecisionNote:
    """What the referee measured and ruled about one entry of a game's actions."""

    #: Milliseconds the referee's clock measured for the decision (hand-over to receipt).
    ms: float | None = None
    #: For a substituted action: the text the seat was told.
    reason: str = ""
    refused: Refused | None = None
    #: The bot's own answer was a fallback: a default its SDK played because the bot's code
    #: failed, and why (``Action.fallback``, one line).
    fallback: str = ""


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


def to_record(
    game: Game,
    notes: Mapping[int, DecisionNote] | None = None,
    referee: Mapping[str, Any] | None = None,
    players: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """The whole game as a JSON-ready record (holds hidden information: publish it after
    the game, never to a player during it).

    ``notes`` (by index in ``game.actions``) add what the referee measured and refused;
    ``referee`` is the clock and failure policy the game was played under, against which
    ``tacocat-arena verify`` re-checks every timing; ``players`` are the bots' names, so
    that one game's record, exported alone, still says who played.
    """
    outcome = game.outcome
    record: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "ruleset": game.ruleset.to_dict(),
        "seed": game.seed,
        "result": None if outcome is None else outcome.result(),
        "termination": None if outcome is None else outcome.termination.value,
        "winner": None if outcome is None else outcome.winner,
        "rounds": game.round,
    }
    if players is not None:
        record["players"] = list(players)
    if referee is not None:
        record["referee"] = dict(referee)
    notes = notes or {}
    record["actions"] = [
        _entry(seat, action, game.substitutions.get(index), notes.get(index))
        for index, (seat, action) in enumerate(game.actions)
    ]
    record["events"] = events_to_json(game.events)
    return record


def _entry(
    seat: Seat | None,
    action: Action | Forfeit,
    substituted: Failure | None,
    note: DecisionNote | None,
) -> dict[str, Any]:
    entry = action_to_json(seat, action)
    if substituted is not None:
        entry["substituted"] = substituted.value
    if note is None:
        return entry
    if note.ms is not None:
        entry["ms"] = round(note.ms, 3)
    if note.reason:
        entry["reason"] = note.reason
    if note.fallback:
        entry["fallback"] = note.fallback
    refused = note.refused
    if refused is not None:
        sent = None if refused.sent is None else action_to_json(seat, refused.sent)
        if sent is not None:
            del sent["seat"]
        entry["refused"] = {
            "failure": refused.failure.value,
            "sent": sent,
            **({"note": refused.note} if refused.note else {}),
            "rule": refused.rule,
            "error": refused.error,
            "then": "forfeit" if isinstance(action, Forfeit) else "default_action",
        }
    return entry


def events_to_json(events: list[Any]) -> list[dict[str, Any]]:
    """The events in their JSON form (tuples become lists), as a record stores them."""
    return json.loads(json.dumps(events))


def replay(
    record: Mapping[str, Any],
    *,
    rounds: list[int] | None = None,
    before: Callable[[int, Game], None] | None = None,
) -> Game:
    """Rebuild a game from a record's (ruleset, seed, actions) and check it against the
    record's events and result; raise RecordError (naming the rule and round) on any
    difference.  Reads record versions 1 and 2.  ``rounds``, when given, receives the round
    in which each action was applied; ``before(index, game)`` is shown the game just before
    each action is applied (``verify`` checks there what the referee claims of it), and
    must not change it."""
    if not isinstance(record, Mapping) or record.get("format") != FORMAT:
        raise RecordError(f'not a {FORMAT} (no "format": "{FORMAT}" field)')
    if record.get("version") not in READABLE_VERSIONS:
        raise RecordError(
            f"{FORMAT} version {record.get('version')!r} is not one this version reads "
            f"({', '.join(map(str, READABLE_VERSIONS))})"
        )
    try:
        game = Game(Ruleset.from_dict(record["ruleset"]), int(record["seed"]))
        actions, recorded = list(record["actions"]), list(record["events"])
    except (KeyError, TypeError, ValueError) as error:
        raise RecordError(
            f"the record's ruleset, seed, actions or events are invalid: {error}"
        ) from error
    for index, entry in enumerate(actions):
        if not isinstance(entry, Mapping):
            raise RecordError(f"action {index} is not an object: {entry!r}", round=game.round)
        seat, action = action_from_json(entry)
        if rounds is not None:
            rounds.append(game.round)
        if before is not None:
            before(index, game)
        try:
            if isinstance(action, Forfeit):
                game.forfeit(seat, action.termination, action.detail)
            elif "substituted" in entry:
                game.substitute(seat, action, _failure(entry["substituted"], index))
            else:
                game.apply(seat, action)
        except ActionError as error:
            raise RecordError(
                f"action {index} ({dict(entry)}) is not legal: {error}",
                rule=error.rule,
                round=game.round,
            ) from error
        except ValueError as error:
            raise RecordError(
                f"action {index} ({dict(entry)}): {error}", round=game.round
            ) from error
    events = events_to_json(game.events)
    for index, (mine, theirs) in enumerate(zip(events, recorded, strict=False)):
        if mine != theirs:
            marked = any(
                isinstance(e, Mapping) and e.get("type") == "substituted" for e in (mine, theirs)
            )
            rule = "F1" if marked else EVENT_RULE.get(mine["type"], "E1")
            raise RecordError(
                f"event {index} differs: replayed {mine}, recorded {theirs}",
                rule=rule,
                round=mine.get("round"),
            )
    if len(events) != len(recorded):
        raise RecordError(
            f"replay has {len(events)} events, the record {len(recorded)}", round=game.round
        )
    outcome = game.outcome
    for key, value in (
        ("result", None if outcome is None else outcome.result()),
        ("termination", None if outcome is None else outcome.termination.value),
        ("winner", None if outcome is None else outcome.winner),
        ("rounds", game.round),
    ):
        if key in record and record[key] != value:
            raise RecordError(
                f"the recorded {key} {record[key]!r} does not match the replay's {value!r}",
                rule="W1",
                round=game.round,
            )
    return game


def _failure(value: Any, index: int) -> Failure:
    try:
        return Failure(value)
    except ValueError:
        known = ", ".join(f.value for f in Failure)
        raise RecordError(
            f"action {index}: substituted {value!r} is not one of {known}", rule="F1"
        ) from None
