"""The referee's heap stays small for the cyclic garbage collector (referee/heap.py).

A full collection stops every game for as long as it takes to walk the heap, so the
referee keeps per-game values out of the collector's sight and never lets a finished game
wait for a collection to be freed.
"""

from __future__ import annotations

import asyncio
import gc
import weakref

import pytest

from tacocat.v1 import arena_pb2 as pb
from tacocat_arena.bench.load import _Arena
from tacocat_arena.engine import DEFAULT_RULESET, DecisionKind, Duel, Game, Replace, build_view
from tacocat_arena.protocol import wire
from tacocat_arena.referee.heap import freeze_long_lived


@pytest.mark.slow
def test_a_game_played_to_its_end_is_freed_by_reference_counting_alone() -> None:
    """No cycle holds a finished game, its report or its record: dropping the report frees
    them at once, with the collector switched off."""

    def games_alive() -> set[int]:
        # By id: the worker process may hold other tests' games (xdist runs many in one).
        return {id(thing) for thing in gc.get_objects() if isinstance(thing, Game)}

    async def play() -> tuple[list[weakref.ref[object]], set[int]]:
        reports: list[weakref.ref[object]] = []
        async with _Arena(4, 2000) as arena:
            await arena.play(0)  # warm up: first-use caches and lazily built objects
            before = games_alive()
            gc.disable()
            try:
                for index in range(1, 7):
                    report = await arena.play(index)
                    assert not report.outcome.termination.is_forfeit
                    assert report.record["actions"]  # built, and dropped with the report
                    # every answer's clock time is kept, as floats the collector never walks
                    assert len(report.action_ms) == sum(report.decisions)
                    assert not gc.is_tracked(report.action_ms)
                    reports.append(weakref.ref(report))
                    del report
                left = games_alive() - before
            finally:
                gc.enable()
        return reports, left

    reports, games_left = asyncio.run(play())
    assert len(reports) == 6
    assert [ref() for ref in reports if ref() is not None] == []
    assert games_left == set()


def test_the_wire_keeps_legal_options_and_events_as_bytes_not_messages() -> None:
    game = Game(DEFAULT_RULESET, 3)
    view = build_view(game, 0)
    assert view.kind is DecisionKind.REPLACE
    legal = pb.LegalOptions(duel=pb.DuelOptions(values=[1]))  # a request's last options
    wire.write_legal(legal, view, simultaneous=True, second=False)
    assert legal.WhichOneof("options") == "replace"  # the cached bytes replace them whole
    assert legal.replace.max_discard == view.max_replace
    cached = [
        wire._replace_options(view.max_replace, True, False),
        wire._hand_options(False, view.hand),
        wire._defend_options((view.hand[0],), view.hand),
    ]
    assert all(isinstance(value, bytes) and not gc.is_tracked(value) for value in cached)
    while game.phase is DecisionKind.REPLACE:  # on to the duel, an event both seats share
        game.apply(min(game.pending), Replace(()))
    for seat in (0, 1):
        game.apply(seat, Duel(game.hands[seat][0]))
    encoder = wire.ViewEncoder(0)
    message = encoder.update(build_view(game, 0))
    shared = [e for e in message.events if e.WhichOneof("event") not in ("deal", "replaced")]
    assert shared  # the deal and replacements are each seat's own (its hand, its draw)
    assert [pb.PublicEvent.FromString(e) for e in encoder._converted_log if e] == shared
    assert all(isinstance(event, bytes | None) for event in encoder._converted_log)


def test_freezing_the_heap_is_done_once_per_process() -> None:
    freeze_long_lived()  # the first call in this process, or a no-op after an earlier one
    frozen = gc.get_freeze_count()
    assert frozen > 0
    assert freeze_long_lived() == 0
    assert gc.get_freeze_count() == frozen
