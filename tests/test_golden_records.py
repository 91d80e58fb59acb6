"""Golden records (tests/golden/): checked-in games the engine must reproduce exactly.

Each is replayed from its (ruleset, seed, actions): every event, the result and the
termination must come out as recorded, so a change to the shuffle (S2, M4) or to an event's
shape fails here.  They cover the default ruleset, ``tie_rule = "arrow"`` with a small
``max_rounds``, substitutions under the default-action policy and a forfeit of each kind.
Regenerate on purpose only: ``python tests/golden/regenerate.py``, then review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tacocat_arena.engine import Termination, TieRule, replay, round_deck, to_record
from tacocat_arena.engine.ruleset import Ruleset
from tacocat_arena.tournament.verify import GameEntry, verify_game

GOLDEN = Path(__file__).resolve().parent / "golden"
FILES = sorted(GOLDEN.glob("*.json"))


def load(name: str) -> dict:
    return json.loads((GOLDEN / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_the_engine_reproduces_the_golden_record(path: Path) -> None:
    record = json.loads(path.read_text(encoding="utf-8"))
    game = replay(record)  # raises, naming the event, on any difference
    again = to_record(game, referee=record["referee"], players=tuple(record["players"]))
    assert again["events"] == record["events"]
    assert [
        {k: a[k] for k in a if k not in ("ms", "reason", "refused")} for a in record["actions"]
    ] == again["actions"]
    assert verify_game(GameEntry(path.stem, None, record)) == []


def test_the_golden_set_covers_every_ending_and_both_tie_rules() -> None:
    endings = {load(p.name)["termination"] for p in FILES}
    assert endings == {t.value for t in Termination}
    arrow = load("arrow-max-rounds-3.json")
    assert Ruleset.from_dict(arrow["ruleset"]).tie_rule is TieRule.ARROW
    assert arrow["termination"] == "round_cap" and arrow["rounds"] == 3
    substituted = [
        a["substituted"] for a in load("default-action.json")["actions"] if "substituted" in a
    ]
    assert substituted == ["timeout", "illegal_action"]


def test_the_golden_deal_is_the_shuffle_of_its_seed() -> None:
    """S2: the first deal is the first cards of round 1's shuffled deck, seat 0 first."""
    record = load("default.json")
    ruleset = Ruleset.from_dict(record["ruleset"])
    deck = round_deck(ruleset, record["seed"], 1)
    deal = record["events"][0]
    size = deal["hand_size"]
    assert deal["hands"] == [sorted(deck[:size]), sorted(deck[size : 2 * size])]
    assert deal["draw_pile"] == deck[2 * size :]
