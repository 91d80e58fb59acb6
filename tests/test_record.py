"""Game records: JSON round trip and re-verification (docs/game-record.md)."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from tacocat_arena.engine import (
    Game,
    RecordError,
    Ruleset,
    Termination,
    TieRule,
    replay,
    to_record,
)
from tacocat_arena.play.local import play_game
from tacocat_arena.play.policies import GreedyPolicy, RandomPolicy


def finished(seed: int, ruleset: Ruleset | None = None) -> Game:
    policies = [RandomPolicy(random.Random(seed)), GreedyPolicy()]
    if ruleset is None:
        return play_game(policies, seed=seed)
    return play_game(policies, seed=seed, ruleset=ruleset)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 2**64 - 1])
def test_record_json_round_trip_then_replay(seed: int) -> None:
    """A record survives json.dumps/loads and replays to the same events and outcome."""
    game = finished(seed)
    record = to_record(game)
    text = json.dumps(record)
    loaded = json.loads(text)
    assert loaded == json.loads(json.dumps(loaded))
    again = replay(loaded)
    assert again.outcome == game.outcome
    assert again.actions == game.actions
    assert json.loads(json.dumps(again.events)) == loaded["events"]
    assert loaded["result"] == game.outcome.result()  # type: ignore[union-attr]
    assert loaded["seed"] == seed and loaded["rounds"] == game.round


def test_record_of_non_default_ruleset_round_trips() -> None:
    """The ruleset travels in the record; replay uses it."""
    ruleset = Ruleset(tie_rule=TieRule.ARROW, max_rounds=2)
    game = finished(5, ruleset)
    loaded = json.loads(json.dumps(to_record(game)))
    again = replay(loaded)
    assert again.ruleset == ruleset and again.outcome == game.outcome


def test_record_of_unfinished_game_replays() -> None:
    """A record of a game in progress replays to the same position."""
    game = Game(seed=4)
    policy = RandomPolicy(random.Random(4))
    from tacocat_arena.engine import build_view

    for _ in range(7):
        seat = min(game.pending)
        game.apply(seat, policy.act(build_view(game, seat)))
    record = json.loads(json.dumps(to_record(game)))
    assert record["result"] is None
    again = replay(record)
    assert again.hands == game.hands and again.pending == game.pending


def test_record_with_forfeit_replays() -> None:
    """A referee's forfeit is an action of the record and replays."""
    game = Game(seed=8)
    game.forfeit(1, Termination.FORFEIT_TIMEOUT, "clock")
    again = replay(json.loads(json.dumps(to_record(game))))
    assert again.outcome == game.outcome and again.outcome.winner == 0  # type: ignore[union-attr]


def _tampered(kind: str) -> dict[str, Any]:
    record = json.loads(json.dumps(to_record(finished(1))))
    bad = copy.deepcopy(record)
    if kind == "action":
        entry = next(a for a in bad["actions"] if "duel" in a)
        entry["duel"] = entry["duel"] % 12 + 1
    elif kind == "event":
        bad["events"][1]["seat"] = 1 - bad["events"][1].get("seat", 0)
    elif kind == "dropped-event":
        del bad["events"][-1]
    elif kind == "extra-event":
        bad["events"].append({"type": "game_end"})
    elif kind == "dropped-action":
        del bad["actions"][-1]
    elif kind == "result":
        bad["result"] = "1/2-1/2" if record["result"] != "1/2-1/2" else "1-0"
    elif kind == "action-after-end":
        bad["actions"].append({"seat": 0, "duel": 5})
    elif kind == "forfeit-after-end":
        bad["actions"].append({"seat": 0, "forfeit": "timeout", "detail": ""})
    elif kind == "format":
        bad["format"] = "chess"
    elif kind == "malformed-action":
        bad["actions"][0] = {"seat": 0, "juggle": 3}
    elif kind == "bad-ruleset":
        bad["ruleset"]["max_rounds"] = 0
    elif kind == "bad-seed":
        bad["seed"] = -1
    return bad


@pytest.mark.parametrize(
    "kind",
    [
        "action",
        "event",
        "dropped-event",
        "extra-event",
        "dropped-action",
        "result",
        "action-after-end",
        "format",
        "malformed-action",
    ],
)
def test_tampered_record_raises_record_error(kind: str) -> None:
    """Any change to a record's actions, events or result is detected (RecordError)."""
    with pytest.raises(RecordError):
        replay(_tampered(kind))


@pytest.mark.parametrize("kind", ["forfeit-after-end", "bad-ruleset", "bad-seed"])
def test_tampered_record_header_or_forfeit_raises_record_error(kind: str) -> None:
    """A record with an invalid ruleset or seed, or a forfeit after the end, is a bad record:
    replay's contract is to raise RecordError, not some other error."""
    with pytest.raises(RecordError):
        replay(_tampered(kind))
