"""A live game's board is the replay viewer's, drawn from what a spectator may see.

``spectator_frames`` reads only ``engine.spectator_event``'s public form; at every action of
a real game its newest frame must agree with the engine (hand sizes, draw pile, Tacocat,
tiles, rounds won), and no frame may hold a card the spectator cannot know.
"""

from __future__ import annotations

import json
import random

from tacocat_arena.engine import Game, Ruleset, to_record
from tacocat_arena.engine.record import action_from_json
from tacocat_arena.engine.view import spectator_event
from tacocat_arena.play.local import play_game
from tacocat_arena.play.policies import GreedyPolicy, RandomPolicy
from tacocat_arena.report import render_live, replay_frames, spectator_frames

NAMES = ("greedy", "random")


def test_the_spectator_board_agrees_with_the_engine_after_every_action() -> None:
    record = to_record(play_game([GreedyPolicy(), RandomPolicy(random.Random(3))], seed=7))
    full = replay_frames(record, NAMES)
    game = Game(_ruleset(record), record["seed"])
    checked = 0
    for entry in record["actions"]:
        seat, action = action_from_json(entry)
        game.apply(seat, action)
        public = [spectator_event(e) for e in game.events]
        frames = spectator_frames(public, NAMES, game.ruleset)
        last = frames[-1]
        assert last.hands is None
        assert list(last.hand_sizes) == [len(game.hands[0]), len(game.hands[1])]
        assert last.draw_pile == len(game.draw_pile)
        assert last.position == game.tacocat
        assert sorted(t.space for t in last.tiles) == [
            i for i, covered in enumerate(game.covered) if covered
        ]
        checked += 1
    assert checked > 20
    # Event by event the public frames are the full ones without the hands.
    public = spectator_frames([spectator_event(e) for e in game.events], NAMES, game.ruleset)
    assert len(public) == len(full)
    for mine, theirs in zip(public, full, strict=True):
        assert mine.hands is None and theirs.hands is not None
        assert mine.hand_sizes == tuple(len(h) for h in theirs.hands)
        assert (mine.discards, mine.draw_pile, mine.position, mine.tiles, mine.rounds_won) == (
            theirs.discards, theirs.draw_pile, theirs.position, theirs.tiles, theirs.rounds_won
        )  # fmt: skip


def test_the_live_page_holds_no_hidden_card() -> None:
    record = to_record(play_game([GreedyPolicy(), RandomPolicy(random.Random(5))], seed=11))
    events = record["events"]
    cut = next(i for i, e in enumerate(events) if e["type"] == "round_end") + 3
    public = [spectator_event(e) for e in events[:cut]]
    html = render_live(
        spectator_frames(public, NAMES, _ruleset(record)),
        NAMES,
        _ruleset(record),
        game_id="L000001a",
        stream="/games/L000001a/events",
        back=("/", "the arena's leaderboard"),
    )
    assert 'id="board"' in html and "live</span>" in html
    for key in ('"hands"', '"drawn"', '"draw_pile"', "greedy is dealt", "random is dealt"):
        assert key not in html, key
    for event in events[:cut]:
        if event["type"] == "deal":
            for hand in event["hands"]:
                assert json.dumps(hand) not in html and json.dumps(hand, separators=(",", ":")) \
                    not in html  # fmt: skip


def _ruleset(record: dict) -> Ruleset:
    return Ruleset.from_dict(record["ruleset"])
