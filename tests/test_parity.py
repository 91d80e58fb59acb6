"""A bot sees the same game over the wire as in process, and plays it the same (issue 30).

Everything runs over the real transport: a referee on 127.0.0.1 (real gRPC), the real SDK
(``tacocat_bot.run``) in threads of this process, and the views the SDK builds from the real
DecisionRequests.  Each game is then replayed on the engine from its record, and at every
decision the engine's own ``build_view`` for that seat must equal, field by field, events
included, the view the SDK handed the bot for that decision.  The only field left out is
``log_start``: the index of the round's first event in the referee's whole log, which a bot
cannot know (the SDK's is 0) and no bot needs.
"""

from __future__ import annotations

import asyncio
import functools
import random
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import arena_harness as h  # tests/bots (pytest pythonpath)
import pytest
from example_bots.builtin import make_bot

from tacocat_arena.engine import (
    DEFAULT_RULESET,
    Action,
    DecisionKind,
    Duel,
    Game,
    Ruleset,
    SeatView,
    TieRule,
    build_view,
)
from tacocat_arena.engine.record import action_from_json
from tacocat_arena.engine.types import Failure, Forfeit
from tacocat_arena.launch.builtins import BuiltinSpec
from tacocat_arena.protocol import wire
from tacocat_arena.referee import ClockSettings, FailurePolicy, RefereeSettings
from tacocat_bot import Bot, local_games, run

TOKENS = {"a": "token-a", "b": "token-b"}
ARROW_RULESET = Ruleset(tie_rule=TieRule.ARROW, max_rounds=6)


@dataclass
class Recorder(Bot):
    """Plays as ``inner`` does and keeps every view it is handed, by game.  With ``illegal``
    > 0 it sometimes answers a duel with a card it does not hold, so that a referee under the
    default-action policy substitutes (and every later view holds a ``substituted`` event)."""

    inner: Bot
    illegal: float = 0.0
    rng: random.Random = field(default_factory=lambda: random.Random(5))
    views: dict[str, list[SeatView]] = field(default_factory=dict)
    current: str = ""

    def on_game_start(self, game_id: str, seat: int, opponent: str) -> None:
        self.current = game_id
        self.views[game_id] = []

    def act(self, view: SeatView) -> Action:
        self.views[self.current].append(view)
        if view.kind is DecisionKind.DUEL and self.rng.random() < self.illegal:
            return Duel(max(view.ruleset.deck) + 1)
        return self.inner.act(view)


def _over_the_wire(
    bots: Mapping[str, Bot],
    schedule: Sequence[tuple[str, tuple[str, str], int]],
    ruleset: Ruleset,
    settings: RefereeSettings,
) -> list[Any]:
    """Play ``schedule`` (game id, seat names, deal seed) one game at a time over a loopback
    referee, each bot a real SDK session; the games' reports, in order."""

    async def scenario() -> list[Any]:
        async with h.arena(settings, TOKENS) as (referee, port):
            threads = [
                threading.Thread(
                    target=run,
                    args=(bot, f"127.0.0.1:{port}", TOKENS[name], name),
                    kwargs={"exit_on_error": False, "strict": True},
                    daemon=True,
                )
                for name, bot in bots.items()
            ]
            for thread in threads:
                thread.start()
            for name in bots:
                await referee.wait_for_session(name, 20)
            reports = []
            for game_id, names, seed in schedule:
                reports.append(await referee.play(game_id, names, seed=seed, ruleset=ruleset))
            await referee.end_all_sessions("parity test over")
            for thread in threads:
                await asyncio.to_thread(thread.join, 20)
                assert not thread.is_alive(), "an SDK session did not end"
            return reports

    result: list[Any] = h.run_async(scenario(), 240)
    return result


def _engine_views(record: dict[str, Any]) -> tuple[list[SeatView], list[SeatView]]:
    """Replay ``record`` and build, at every decision of each seat, the engine's view of it:
    the views in process, one per request the referee sent (a refused answer included).
    A seat's view is built when it becomes pending, as the referee asks it: in a simultaneous
    decision both are built before either answer is applied (D1, R3)."""
    game = Game(Ruleset.from_dict(record["ruleset"]), int(record["seed"]))
    views: tuple[list[SeatView], list[SeatView]] = ([], [])
    asked: dict[int, SeatView] = {}
    for entry in record["actions"]:
        seat, action = action_from_json(entry)
        if isinstance(action, Forfeit):
            break
        for pending in sorted(game.pending - asked.keys()):
            asked[pending] = build_view(game, pending)
        views[seat].append(asked.pop(seat))
        if "substituted" in entry:
            game.substitute(seat, action, Failure(entry["substituted"]))
        else:
            game.apply(seat, action)
    return views


def _comparable(view: SeatView) -> SeatView:
    return view._replace(log_start=0)


def _assert_same_views(wire_views: list[SeatView], engine_views: list[SeatView]) -> int:
    assert len(wire_views) == len(engine_views), "a decision was asked but never seen"
    for index, (sdk, engine) in enumerate(zip(wire_views, engine_views, strict=True)):
        for name in SeatView._fields:
            if name == "log_start":
                continue
            assert getattr(sdk, name) == getattr(engine, name), (
                f"decision {index} of seat {engine.seat}: {name} differs over the wire\n"
                f"  wire:   {getattr(sdk, name)!r}\n  engine: {getattr(engine, name)!r}"
            )
        assert _comparable(sdk) == _comparable(engine)
        assert sdk.legal == engine.legal
    return len(wire_views)


@pytest.mark.parametrize(
    ("ruleset", "policy", "illegal"),
    [
        (DEFAULT_RULESET, FailurePolicy.FORFEIT, 0.0),
        (ARROW_RULESET, FailurePolicy.DEFAULT_ACTION, 0.2),
    ],
    ids=["default", "arrow-substitutions"],
)
def test_the_sdk_view_equals_the_engine_view_at_every_decision(
    ruleset: Ruleset, policy: FailurePolicy, illegal: float
) -> None:
    random_bot = functools.partial(make_bot, BuiltinSpec("random"))
    bots = {
        "a": Recorder(random_bot(seed=1), illegal=illegal),
        "b": Recorder(make_bot(BuiltinSpec("greedy"), seed=2)),
    }
    schedule = [(f"p{i}", ("a", "b") if i % 2 == 0 else ("b", "a"), 70 + i) for i in range(6)]
    settings = RefereeSettings(clock=ClockSettings(decision_ms=5000), failure_policy=policy)
    reports = _over_the_wire(bots, schedule, ruleset, settings)
    checked = 0
    kinds_seen: set[str] = set()
    for (game_id, names, _), report in zip(schedule, reports, strict=True):
        engine_views = _engine_views(report.record)
        for seat, name in enumerate(names):
            wire_views = bots[name].views[game_id]
            checked += _assert_same_views(wire_views, engine_views[seat])
            for view in wire_views:
                kinds_seen.update(e["type"] for e in view.events)
    assert checked > 100
    # The views compared hold the seat's own cards in their events, not just public ones.
    assert {"deal", "replace", "duel", "attack", "defend"} <= kinds_seen
    if illegal:
        assert "substituted" in kinds_seen


def test_each_seat_gets_its_own_hand_and_draw_and_never_the_opponents() -> None:
    """I1 and I2 on the wire: the two seats' encoders share the conversion of public events,
    but each Deal holds that seat's own hand and each Replaced that seat's own draw only."""
    game = Game(DEFAULT_RULESET, 9)
    converted: list[bytes | None] = []
    encoders = (wire.ViewEncoder(0, converted=converted), wire.ViewEncoder(1, converted=converted))
    while game.phase is DecisionKind.REPLACE:
        seat = min(game.pending)
        game.apply(seat, wire.action_from_pb(_discard_two(game, seat), DecisionKind.REPLACE))
    for seat in (0, 1):
        game.apply(seat, Duel(game.hands[seat][0]))
    deal = game.round_events[0]
    drawn = {e["seat"]: e["drawn"] for e in game.round_events if e["type"] == "replace"}
    assert len(drawn) == 2 and all(drawn.values())
    for seat, encoder in enumerate(encoders):
        events = list(encoder.update(build_view(game, seat)).events)
        (dealt,) = [e.deal for e in events if e.WhichOneof("event") == "deal"]
        assert tuple(dealt.dealt) == deal["hands"][seat]
        for replaced in (e.replaced for e in events if e.WhichOneof("event") == "replaced"):
            mine = replaced.seat == seat
            assert tuple(replaced.drawn) == (drawn[seat] if mine else ())
        assert [e.WhichOneof("event") for e in events][-1] == "duel_revealed"


def _discard_two(game: Game, seat: int) -> Any:
    from tacocat.v1 import arena_pb2 as pb

    return pb.Action(replace=pb.Replace(discard=game.hands[seat][-2:]))


BUILTIN_BOTS: dict[str, Callable[[int], Bot]] = {
    "random": lambda seed: make_bot(BuiltinSpec("random"), seed=seed),
    "greedy": lambda seed: make_bot(BuiltinSpec("greedy", (("epsilon", 0.2),)), seed=seed),
    "search": lambda seed: make_bot(BuiltinSpec("search", (("budget", 8),)), seed=seed),
    "ismcts": lambda seed: make_bot(BuiltinSpec("ismcts", (("iterations", 24),)), seed=seed),
}


@pytest.mark.parametrize("name", list(BUILTIN_BOTS))
def test_every_builtin_plays_the_same_over_the_wire_as_in_process(name: str) -> None:
    games, seed = 4, 31
    make, opponent = BUILTIN_BOTS[name], BUILTIN_BOTS["greedy"]
    local = [game.actions for _, game in local_games(make(1), opponent(2), games=games, seed=seed)]
    schedule = [
        (f"{name}{i}", ("a", "b") if i % 2 == 0 else ("b", "a"), seed + i // 2)
        for i in range(games)
    ]
    settings = RefereeSettings(clock=ClockSettings(decision_ms=20_000))
    reports = _over_the_wire({"a": make(1), "b": opponent(2)}, schedule, DEFAULT_RULESET, settings)
    for index, (actions, report) in enumerate(zip(local, reports, strict=True)):
        over_wire = [action_from_json(entry) for entry in report.record["actions"]]
        assert over_wire == [(seat, _ascending(a)) for seat, a in actions], (
            f"{name}: game {index} went differently over the wire"
        )


def _ascending(action: Any) -> Any:
    """The wire names a multiset in ascending order (arena.proto, CONVENTIONS)."""
    cards = getattr(action, "cards", None)
    if cards is None or not isinstance(cards, tuple):
        return action
    return type(action)(tuple(sorted(cards)))
