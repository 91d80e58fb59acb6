"""The gRPC referee end to end: real loopback gRPC, SDK bots in their own processes, and
raw-protocol clients where the test must control every message.

Helpers (the referee fixture, bot processes, the raw client) are in tests/bots/arena_harness.py;
the SDK bot used as a process is tests/bots/scripted_bot.py.
"""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import arena_harness as h  # tests/bots (pytest pythonpath)
import pytest

from tacocat.v1 import arena_pb2 as pb
from tacocat_arena.engine import (
    DEFAULT_RULESET,
    Game,
    Ruleset,
    Termination,
    defence_options,
    legal_attacks,
    replay,
)
from tacocat_arena.engine.types import Attack, Defend, Duel, Replace
from tacocat_arena.protocol.wire import event_from_pb, ruleset_to_pb
from tacocat_arena.referee import ClockSettings, FailurePolicy, RefereeSettings
from tacocat_arena.tournament.record_checks import seat_figures
from tacocat_arena.tournament.verify import GameEntry, verify_game

FINISHED = (Termination.GOAL, Termination.ROUND_CAP)
RAW_SETTINGS = RefereeSettings(clock=ClockSettings(decision_ms=5000))
SDK_SETTINGS = RefereeSettings(clock=ClockSettings(decision_ms=3000))


def _expected_result(report: Any, seat: int) -> str:
    winner = report.outcome.winner
    return "draw" if winner is None else ("win" if winner == seat else "loss")


# ---------------------------------------------------------------------------------------------
# 1, 10. SDK bots in separate processes: one game, then many at once
# ---------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_full_game_between_sdk_bot_processes(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with h.arena(SDK_SETTINGS) as (referee, port):
            with h.bot_farm(tmp_path, port) as farm:
                bot_a = farm.start("a", seed=1)
                bot_b = farm.start("b", seed=2)
                await referee.wait_for_session("a", 20)
                await referee.wait_for_session("b", 20)
                report = await referee.play("g1", ("a", "b"), seed=11, ruleset=DEFAULT_RULESET)

                assert report.outcome.termination in FINISHED, report
                assert report.seats == ("a", "b") and report.forfeit_by is None
                assert report.decisions[0] > 0 and report.decisions[1] > 0
                game = replay(report.record)
                assert game.outcome == report.outcome
                assert report.record["seed"] == 11 and game.round == report.rounds

                await h.wait_until(
                    lambda: "g1" in bot_a.game_ends() and "g1" in bot_b.game_ends(),
                    10,
                    "both bots to get GameEnd",
                )
                reason = report.outcome.termination.value
                for seat, bot in enumerate((bot_a, bot_b)):
                    end = bot.game_ends()["g1"]
                    expected = (_expected_result(report, seat), reason)
                    assert (end["result"], end["reason"]) == expected
                    assert bot.errors() == [], bot.errors()

                await referee.end_all_sessions("done")
                for bot in (bot_a, bot_b):
                    assert await h.wait_for_exit(bot.process, 10) == 0, bot.stderr_text()
                    assert bot.events()[-1] == {"event": "done", "games": 1, "errors": 0}

    h.run_async(scenario(), 40)


@pytest.mark.slow
def test_one_session_plays_many_games_at_once(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with h.arena(SDK_SETTINGS) as (referee, port):
            with h.bot_farm(tmp_path, port) as farm:
                bot_a = farm.start("a", seed=3)
                bot_b = farm.start("b", seed=4)
                await referee.wait_for_session("a", 20)
                await referee.wait_for_session("b", 20)
                games = [
                    referee.play(
                        f"p{i}",
                        ("a", "b") if i % 2 == 0 else ("b", "a"),
                        seed=100 + i // 2,
                        ruleset=DEFAULT_RULESET,
                    )
                    for i in range(8)
                ]
                # And one game where the same session holds both seats ("self/0", "self/1").
                games.append(referee.play("self", ("a", "a"), seed=7, ruleset=DEFAULT_RULESET))
                reports = await asyncio.gather(*games)

                assert len(reports) == 9
                for report in reports:
                    assert report.outcome.termination in FINISHED, report
                    assert replay(report.record).outcome == report.outcome
                expected_a = {f"p{i}" for i in range(8)} | {"self/0", "self/1"}
                expected_b = {f"p{i}" for i in range(8)}
                await h.wait_until(
                    lambda: (
                        set(bot_a.game_ends()) == expected_a
                        and set(bot_b.game_ends()) == expected_b
                    ),
                    10,
                    "every GameEnd",
                )
                for report in reports[:8]:
                    for seat, name in enumerate(report.seats):
                        bot = bot_a if name == "a" else bot_b
                        end = bot.game_ends()[report.game_id]
                        assert end["result"] == _expected_result(report, seat)
                # The games really overlapped: every GameStart came before the first GameEnd.
                kinds = [e["event"] for e in bot_b.events()]
                assert kinds[:8] == ["game_start"] * 8, kinds[:10]
                starts = [e for e in bot_a.events() if e["event"] == "game_start"]
                self_seats = {
                    (e["game_id"], e["seat"]) for e in starts if e["game_id"].startswith("self")
                }
                assert self_seats == {("self/0", 0), ("self/1", 1)}
                assert bot_a.errors() == [] and bot_b.errors() == []

    h.run_async(scenario(), 50)


# ---------------------------------------------------------------------------------------------
# 2. Timeouts
# ---------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_bot_that_sleeps_past_its_deadline_forfeits(tmp_path: Path) -> None:
    settings = RefereeSettings(clock=ClockSettings(decision_ms=200))  # grace: the default

    async def scenario() -> None:
        async with h.arena(settings) as (referee, port):
            with h.bot_farm(tmp_path, port) as farm:
                sleeper = farm.start("a", sleep_s=1.0)  # sleeps in its first decision only
                opponent = farm.start("b")
                await referee.wait_for_session("a", 20)
                await referee.wait_for_session("b", 20)
                report = await referee.play("slow", ("a", "b"), seed=5, ruleset=DEFAULT_RULESET)

                assert report.outcome.termination is Termination.FORFEIT_TIMEOUT, report
                assert report.outcome.winner == 1 and report.forfeit_by == 0
                assert "within 200 ms" in report.detail
                replay(report.record)
                timeout = report.record["actions"][-1]
                assert timeout["forfeit"] == "timeout" and timeout["ms"] >= 200 + 100
                assert verify_game(GameEntry("slow", None, report.record)) == []
                await h.wait_until(lambda: "slow" in opponent.game_ends(), 10, "opponent GameEnd")
                end = opponent.game_ends()["slow"]
                assert (end["result"], end["reason"]) == ("win", "timeout")
                # The sleeper is told (TIMEOUT, then its GameEnd), and its late answer is stale.
                await h.wait_until(
                    lambda: any("STALE_REPLY" in e for e in sleeper.errors()),
                    10,
                    "the late reply to be refused as stale",
                )
                errors = sleeper.errors()
                assert "ERROR_CODE_TIMEOUT" in errors[0] and "STALE_REPLY" in errors[1], errors
                assert sleeper.game_ends()["slow"]["result"] == "loss"
                assert opponent.errors() == []

                # The session survives its timeout: the next game is played normally.
                again = await referee.play("next", ("a", "b"), seed=6, ruleset=DEFAULT_RULESET)
                assert again.outcome.termination in FINISHED, again

    h.run_async(scenario(), 40)


def test_both_seats_timing_out_in_a_simultaneous_decision() -> None:
    settings = RefereeSettings(clock=ClockSettings(decision_ms=150))

    async def scenario() -> None:
        async with h.arena(settings) as (referee, port), h.raw_clients(port, 2) as clients:
            for client, name in zip(clients, "ab", strict=True):
                await client.connect(name)
            report = await referee.play("both", ("a", "b"), seed=1, ruleset=DEFAULT_RULESET)
            assert report.outcome.termination is Termination.FORFEIT_TIMEOUT
            assert report.outcome.winner is None
            for seat, client in enumerate(clients):
                await client.recv_case("game_start")
                request = (await client.recv_case("decision_request")).decision_request
                assert request.view.seat == seat
                error = (await client.recv_case("error")).error
                assert error.code == pb.ERROR_CODE_TIMEOUT
                assert error.outcome == pb.ERROR_OUTCOME_FORFEIT
                assert (error.game_id, error.request_id) == ("both", request.request_id)
                end = (await client.recv_case("game_end")).game_end
                assert (end.result, end.reason) == (pb.GAME_RESULT_DRAW, pb.END_REASON_TIMEOUT)
                assert not end.HasField("winner_seat")

    h.run_async(scenario(), 20)


# ---------------------------------------------------------------------------------------------
# 3. Illegal actions and the failure policy
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("policy", [FailurePolicy.FORFEIT, FailurePolicy.DEFAULT_ACTION])
def test_illegal_attack_is_refused_with_its_rule(policy: FailurePolicy) -> None:
    settings = RefereeSettings(clock=ClockSettings(decision_ms=5000), failure_policy=policy)
    illegal: dict[int, tuple[int, tuple[int, ...]]] = {}  # seat -> (request_id, hand)

    def whole_hand_attack(seat: int) -> Any:
        def hook(request: pb.DecisionRequest) -> pb.Action | None:
            if request.kind != pb.DECISION_KIND_ATTACK or seat in illegal:
                return None
            illegal[seat] = (request.request_id, tuple(request.view.hand))
            return pb.Action(
                game_id=request.game_id,
                request_id=request.request_id,
                attack=pb.Attack(cards=request.view.hand),  # P6: must keep a card
            )

        return hook

    async def scenario() -> None:
        async with h.arena(settings) as (referee, port), h.raw_clients(port, 2) as clients:
            for client, name in zip(clients, "ab", strict=True):
                await client.connect(name)
            game = asyncio.create_task(
                referee.play("ill", ("a", "b"), seed=3, ruleset=DEFAULT_RULESET)
            )
            logs = await asyncio.gather(
                *(h.play_raw(c, seed=s, hook=whole_hand_attack(s)) for s, c in enumerate(clients))
            )
            report = await game

            assert illegal, "nobody attacked"
            if policy is FailurePolicy.FORFEIT:
                (offender,) = illegal  # the game ended at the first illegal attack
                request_id, _ = illegal[offender]
                (error,) = logs[offender].errors
                assert error.code == pb.ERROR_CODE_ILLEGAL_ACTION
                assert error.rule_id == "P6"
                assert error.outcome == pb.ERROR_OUTCOME_FORFEIT
                assert (error.game_id, error.request_id) == ("ill", request_id)
                assert error.message
                log = [m.WhichOneof("message") for m in clients[offender].log]
                assert log[-2:] == ["error", "game_end"], log
                end = logs[offender].ends["ill"]
                assert end.result == pb.GAME_RESULT_LOSS
                assert end.reason == pb.END_REASON_ILLEGAL_ACTION
                other_end = logs[1 - offender].ends["ill"]
                assert other_end.result == pb.GAME_RESULT_WIN
                assert other_end.winner_seat == 1 - offender
                assert logs[1 - offender].errors == []
                assert report.outcome.termination is Termination.FORFEIT_ILLEGAL
                assert report.forfeit_by == offender
                replay(report.record)
                forfeit = report.record["actions"][-1]  # the refused answer is recorded
                assert forfeit["forfeit"] == "illegal_action" and forfeit["ms"] >= 0
                refused = forfeit["refused"]
                assert refused["sent"] == {"attack": list(illegal[offender][1])}
                assert (refused["rule"], refused["then"]) == ("P6", "forfeit")
                assert verify_game(GameEntry("ill", None, report.record)) == []
            else:
                for seat, (request_id, hand) in illegal.items():
                    (error,) = logs[seat].errors
                    assert (error.code, error.rule_id) == (pb.ERROR_CODE_ILLEGAL_ACTION, "P6")
                    assert error.outcome == pb.ERROR_OUTCOME_DEFAULT_ACTION
                    assert error.request_id == request_id
                    # The default attack is the lowest single card (see arena.proto).
                    attacks = [
                        e
                        for e in report.record["events"]
                        if e["type"] == "attack" and e["seat"] == seat
                    ]
                    assert attacks[0]["cards"] == [min(hand)]
                assert report.outcome.termination in FINISHED, report
                assert replay(report.record).outcome == report.outcome
                marked = [a for a in report.record["actions"] if "substituted" in a]
                assert sorted(a["seat"] for a in marked) == sorted(illegal)
                for entry in marked:  # never mistaken for the bot's own attack
                    assert entry["substituted"] == "illegal_action"
                    assert entry["refused"]["sent"] == {"attack": list(illegal[entry["seat"]][1])}
                    assert (entry["refused"]["rule"], entry["refused"]["then"]) == (
                        "P6",
                        "default_action",
                    )
                assert verify_game(GameEntry("ill", None, report.record)) == []
                for log in logs:
                    assert log.ends["ill"].reason in (pb.END_REASON_GOAL, pb.END_REASON_ROUND_CAP)

    h.run_async(scenario(), 30)


def test_a_simultaneous_answer_the_record_does_not_hold_is_not_counted() -> None:
    """Seat 0's first duel card is not in its hand and forfeits the game; seat 1's duel card,
    answered in time for the same decision, is never applied, so the record does not hold
    it, and neither do the report's per-seat figures (games.jsonl's decisions and
    decision_ms, which ``verify`` checks against the record: G1)."""
    answered: dict[int, int] = {}  # seat -> its duel answers sent

    def duel_hook(seat: int) -> Any:
        def hook(request: pb.DecisionRequest) -> pb.Action | None:
            if request.kind != pb.DECISION_KIND_DUEL:
                return None
            answered[seat] = answered.get(seat, 0) + 1
            if seat == 1:
                return None
            missing = next(c for c in range(1, 13) if c not in request.view.hand)
            return pb.Action(
                game_id=request.game_id,
                request_id=request.request_id,
                duel=pb.Duel(card=missing),  # D1: not in the hand
            )

        return hook

    async def scenario() -> None:
        async with h.arena(RAW_SETTINGS) as (referee, port), h.raw_clients(port, 2) as clients:
            for client, name in zip(clients, "ab", strict=True):
                await client.connect(name)
            game = asyncio.create_task(
                referee.play("duel", ("a", "b"), seed=4, ruleset=DEFAULT_RULESET)
            )
            await asyncio.gather(
                *(h.play_raw(c, seed=s, hook=duel_hook(s)) for s, c in enumerate(clients))
            )
            report = await game
            assert report.outcome.termination is Termination.FORFEIT_ILLEGAL
            assert report.forfeit_by == 0 and answered == {0: 1, 1: 1}
            record = report.record
            assert [a["seat"] for a in record["actions"] if "duel" in a] == []  # none applied
            decisions, total = seat_figures(record)
            assert report.decisions == decisions
            assert report.think_ms == pytest.approx(total, abs=1e-6)
            seat_1 = [a for a in record["actions"] if a["seat"] == 1]
            assert report.decisions[1] == len(seat_1)  # its replace only: not its duel card
            assert verify_game(GameEntry("duel", None, record)) == []

    h.run_async(scenario(), 20)


# ---------------------------------------------------------------------------------------------
# 4. Disconnects
# ---------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_disconnect_mid_game_forfeits_and_referee_keeps_serving(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with h.arena(SDK_SETTINGS) as (referee, port):
            with h.bot_farm(tmp_path, port) as farm:
                crasher = farm.start("a", exit_after=4)  # dies in its 5th decision
                opponent = farm.start("b")
                await referee.wait_for_session("a", 20)
                await referee.wait_for_session("b", 20)
                first_session = referee.live_session("a")
                report = await referee.play("drop", ("a", "b"), seed=9, ruleset=DEFAULT_RULESET)

                assert report.outcome.termination is Termination.FORFEIT_DISCONNECT, report
                assert report.outcome.winner == 1 and report.forfeit_by == 0
                assert report.decisions[0] == 4
                replay(report.record)
                assert await h.wait_for_exit(crasher.process, 10) == 3
                await h.wait_until(lambda: "drop" in opponent.game_ends(), 10, "opponent GameEnd")
                end = opponent.game_ends()["drop"]
                assert (end["result"], end["reason"]) == ("win", "disconnect")
                assert referee.live_session("a") is None

                # The referee keeps serving: the bot reconnects and another game is played.
                farm.start("a", seed=5)
                second_session = await referee.wait_for_session("a", 20)
                assert second_session is not first_session
                again = await referee.play("after", ("b", "a"), seed=9, ruleset=DEFAULT_RULESET)
                assert again.outcome.termination in FINISHED, again
                assert opponent.errors() == []

    h.run_async(scenario(), 40)


def test_raw_client_closing_its_stream_mid_game_forfeits() -> None:
    async def scenario() -> None:
        async with h.arena(RAW_SETTINGS) as (referee, port), h.raw_clients(port, 3) as clients:
            quitter, stayer, newcomer = clients
            await quitter.connect("a")
            await stayer.connect("b")
            game = asyncio.create_task(
                referee.play("q", ("a", "b"), seed=2, ruleset=DEFAULT_RULESET)
            )
            answered = 0

            async def quit_on_third(request: pb.DecisionRequest) -> Any:
                nonlocal answered
                answered += 1
                if answered < 3:
                    return None
                await quitter.call.done_writing()  # half-close: "the bot closes its side"
                return False

            await asyncio.gather(
                _drain_until_quit(quitter, quit_on_third),
                h.play_raw(stayer, seed=1),
            )
            report = await game
            assert report.outcome.termination is Termination.FORFEIT_DISCONNECT
            assert report.forfeit_by == 0
            # Still serving.
            await newcomer.connect("a")
            again = asyncio.create_task(
                referee.play("q2", ("a", "b"), seed=2, ruleset=DEFAULT_RULESET)
            )
            await asyncio.gather(h.play_raw(newcomer, seed=2), h.play_raw(stayer, seed=3))
            assert (await again).outcome.termination in FINISHED

    h.run_async(scenario(), 30)


async def _drain_until_quit(client: Any, hook: Any) -> None:
    """Answer randomly until ``hook`` returns False (it closed the stream)."""
    rng = random.Random(0)
    for _ in range(10_000):
        message = await client.recv(5)
        if message is None or message.WhichOneof("message") != "decision_request":
            continue
        if await hook(message.decision_request) is False:
            return
        await client.answer(client.random_action(message.decision_request, rng))
    raise AssertionError("never quit")


# ---------------------------------------------------------------------------------------------
# 6. Simultaneous choices stay secret until both have committed
# ---------------------------------------------------------------------------------------------
def _cases(message: Any) -> set[str]:
    """Every message/field name set anywhere inside ``message`` (recursively)."""
    found: set[str] = set()
    for descriptor, value in message.ListFields():
        found.add(descriptor.name)
        if descriptor.message_type is not None:
            values = value if descriptor.is_repeated else [value]
            for item in values:
                found |= _cases(item)
    return found


async def _assert_silent(client: Any, seconds: float) -> None:
    """Nothing at all reaches ``client`` for ``seconds``."""
    try:
        message = await asyncio.wait_for(client.recv(), seconds)
    except TimeoutError:
        return
    raise AssertionError(f"unexpected message before committing: {message}")


@pytest.mark.parametrize("first", [0, 1])
def test_simultaneous_choices_are_hidden_until_both_commit(first: int) -> None:
    second = 1 - first

    async def scenario() -> None:
        async with h.arena(RAW_SETTINGS) as (referee, port), h.raw_clients(port, 2) as clients:
            for client, name in zip(clients, "ab", strict=True):
                await client.connect(name)
            game = asyncio.create_task(
                referee.play("sim", ("a", "b"), seed=4, ruleset=DEFAULT_RULESET)
            )
            for client in clients:
                await client.recv_case("game_start")
            # Round 1 is on the centre space: both replace at the same time (R3).
            replace = [(await c.recv_case("decision_request")).decision_request for c in clients]
            assert all(r.legal.replace.simultaneous for r in replace)
            discard = replace[first].view.hand[:2]
            await clients[first].answer(
                pb.Action(
                    game_id="sim",
                    request_id=replace[first].request_id,
                    replace=pb.Replace(discard=discard),
                )
            )
            await _assert_silent(clients[second], 0.3)
            assert "replaced" not in _cases(replace[second])
            await clients[second].answer(
                pb.Action(
                    game_id="sim",
                    request_id=replace[second].request_id,
                    replace=pb.Replace(),
                )
            )

            # The duel (D1): asked of both at once.
            duel = [(await c.recv_case("decision_request")).decision_request for c in clients]
            assert [d.kind for d in duel] == [pb.DECISION_KIND_DUEL] * 2
            for request in duel:  # both replacements are public now, seat 0's first
                replaced = [e.replaced for e in request.view.events if e.HasField("replaced")]
                assert [(r.seat, list(r.cards), r.count) for r in replaced] == sorted(
                    [(first, sorted(discard), 2), (second, [], 0)]
                )
            before = duel[second].view
            cards = {first: duel[first].view.hand[0], second: duel[second].view.hand[-1]}
            await clients[first].answer(
                pb.Action(
                    game_id="sim",
                    request_id=duel[first].request_id,
                    duel=pb.Duel(card=cards[first]),
                )
            )
            # The second seat's request (already received) and anything after it, until it
            # answers, show no trace of the first seat's card.
            await _assert_silent(clients[second], 0.3)
            await _assert_silent(clients[first], 0.05)
            assert "duel_revealed" not in _cases(duel[second])
            assert sorted(before.discards) == sorted(discard)
            assert before.opponent_hand_size == len(before.hand)
            await clients[second].answer(
                pb.Action(
                    game_id="sim",
                    request_id=duel[second].request_id,
                    duel=pb.Duel(card=cards[second]),
                )
            )

            # The next request each seat gets shows both cards, index = seat.
            expected = [cards[0], cards[1]]
            rng = random.Random(0)
            if cards[0] == cards[1]:
                nexts = [(await c.recv_case("decision_request")).decision_request for c in clients]
            else:
                winner = 0 if cards[0] > cards[1] else 1
                attack = (await clients[winner].recv_case("decision_request")).decision_request
                assert attack.kind == pb.DECISION_KIND_ATTACK
                await clients[winner].answer(clients[winner].random_action(attack, rng))
                defend = (await clients[1 - winner].recv_case("decision_request")).decision_request
                assert defend.kind == pb.DECISION_KIND_DEFEND
                nexts = [attack, defend]
            for request in nexts:
                (revealed,) = [
                    e.duel_revealed for e in request.view.events if e.HasField("duel_revealed")
                ]
                assert list(revealed.cards) == expected
                if cards[0] != cards[1]:
                    assert revealed.winner_seat == (0 if cards[0] > cards[1] else 1)
            # Finish the game so the referee task ends cleanly.
            for request in [r for r in nexts if r.kind != pb.DECISION_KIND_ATTACK]:
                owner = clients[request.view.seat]
                await owner.answer(owner.random_action(request, rng))
            await asyncio.gather(*(h.play_raw(c, seed=i) for i, c in enumerate(clients)))
            assert (await game).outcome.termination in FINISHED

    h.run_async(scenario(), 30)


# ---------------------------------------------------------------------------------------------
# 7. No message to a bot reveals hidden information
# ---------------------------------------------------------------------------------------------
PUBLIC_EVENT_CASES = {
    "deal",
    "replaced",
    "duel_revealed",
    "attacked",
    "defended",
    "showdown",
    "round_ended",
    "substituted",
}
SEAT_VIEW_FIELDS = {
    "seat",
    "round",
    "hand",
    "opponent_hand_size",
    "draw_pile_size",
    "board",
    "discards",
    "events",
    "past_rounds",
    "attacker",
    "current_attack",
}


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value))


def _seat_form(event: dict[str, Any], seat: int) -> dict[str, Any]:
    """What ``seat`` may know of one full-log event (I1, I2): the deal with its own hand only
    (never the opponent's, never the draw pile), a replacement with the drawn cards only when
    it is the seat's own; the rest is public as it is."""
    if event["type"] == "deal":
        public = {k: event[k] for k in ("type", "round", "position", "hand_size")}
        return _jsonable({**public, "hand": event["hands"][seat]})
    if event["type"] == "replace":
        shown = {
            "type": "replace",
            "round": event["round"],
            "seat": event["seat"],
            "discarded": sorted(event["discarded"]),
        }
        if event["seat"] == seat:
            shown["drawn"] = list(event["drawn"])
        return shown
    return _jsonable(event)


def _wire_events(events: Any, round_number: int, seat: int) -> list[dict[str, Any]]:
    decoded = []
    for event in events:
        assert event.WhichOneof("event") in PUBLIC_EVENT_CASES, event
        as_dict = event_from_pb(event, round_number, seat)
        assert as_dict is not None
        if as_dict["type"] == "replace":
            as_dict = {**as_dict, "discarded": sorted(as_dict["discarded"])}
        decoded.append(_jsonable(as_dict))
    return decoded


def _expected_view(game: Game, seat: int) -> dict[str, Any]:
    """A seat's view computed from the engine's raw state (not from build_view/wire)."""
    return {
        "seat": seat,
        "round": game.round,
        "hand": list(game.hands[seat]),
        "opponent_hand_size": len(game.hands[1 - seat]),
        "draw_pile_size": len(game.draw_pile),
        "discards": list(game.discards),
        "tacocat": game.tacocat,
        "covered": list(game.covered[1:-1]),
        "events": [
            _seat_form(e, seat)
            for e in game.round_events
            if e["type"] not in ("forfeit", "game_end")
        ],
        "past_rounds": [
            (r.round, r.winner, list(r.showdown), r.tacocat_from, r.tacocat_to, r.covered)
            for r in game.round_results
        ],
        "attacker": game.attacker,
        "current_attack": list(game.current_attack),
    }


def _actual_view(view: pb.SeatView) -> dict[str, Any]:
    return {
        "seat": view.seat,
        "round": view.round,
        "hand": list(view.hand),
        "opponent_hand_size": view.opponent_hand_size,
        "draw_pile_size": view.draw_pile_size,
        "discards": list(view.discards),
        "tacocat": view.board.tacocat,
        "covered": list(view.board.covered),
        "events": _wire_events(view.events, view.round, view.seat),
        "past_rounds": [
            (
                r.round,
                r.winner_seat if r.HasField("winner_seat") else None,
                list(r.showdown_cards),
                r.tacocat_from,
                r.tacocat_to,
                r.covered_space if r.HasField("covered_space") else None,
            )
            for r in view.past_rounds
        ],
        "attacker": view.attacker if view.HasField("attacker") else None,
        "current_attack": list(view.current_attack),
    }


def _check_legal(request: pb.DecisionRequest, game: Game, seat: int) -> None:
    """The legal options follow from the seat's own hand (and public state) alone."""
    hand = game.hands[seat]
    case = request.legal.WhichOneof("options")
    if case == "duel":
        assert list(request.legal.duel.values) == sorted(set(hand))
    elif case == "attack":
        assert [tuple(a.cards) for a in request.legal.attack.attacks] == list(legal_attacks(hand))
    elif case == "defend":
        options = defence_options(game.current_attack, hand)
        assert [tuple(c.defend_with) for c in request.legal.defend.cards] == list(options)
    else:
        assert case == "replace"
        assert request.legal.replace.max_discard == game.replace_limit(seat)


def _check_request(request: pb.DecisionRequest, game: Game, seat: int) -> None:
    assert _actual_view(request.view) == _expected_view(game, seat), (
        f"request {request.request_id} to seat {seat} differs from what it may know"
    )
    _check_legal(request, game, seat)


def check_no_hidden_information(
    report: Any, messages: dict[int, list[tuple[bytes, pb.RefereeMessage]]], seats: dict[int, str]
) -> int:
    """Check every message each seat got about ``report``'s game (``seats``: seat -> the
    game_id that seat saw).  Returns the number of DecisionRequests checked."""
    record = report.record
    requests = {
        s: [
            m.decision_request
            for _, m in messages[s]
            if m.WhichOneof("message") == "decision_request"
            and m.decision_request.game_id == seats[s]
        ]
        for s in (0, 1)
    }
    # Nothing can hide in fields this code does not know: no unknown fields anywhere.
    for s in (0, 1):
        for raw, message in messages[s]:
            copy = pb.RefereeMessage.FromString(raw)
            copy.DiscardUnknownFields()
            assert copy.ByteSize() == len(raw), f"unknown fields in a message to seat {s}"
            if message.WhichOneof("message") == "decision_request":
                assert {
                    d.name for d, _ in message.decision_request.view.ListFields()
                } <= SEAT_VIEW_FIELDS

    game = Game(Ruleset.from_dict(record["ruleset"]), int(record["seed"]))
    seen = [0, 0]
    for entry in record["actions"]:
        if "forfeit" in entry:  # a refused answer: its request saw the state as it is now
            for seat in (0, 1):
                for request in requests[seat][seen[seat] :]:
                    _check_request(request, game, seat)
                    seen[seat] += 1
            break
        seat = entry["seat"]
        _check_request(requests[seat][seen[seat]], game, seat)
        seen[seat] += 1
        if "replace" in entry:
            game.apply(seat, Replace(tuple(entry["replace"])))
        elif "duel" in entry:
            game.apply(seat, Duel(entry["duel"]))
        elif "attack" in entry:
            game.apply(seat, Attack(tuple(entry["attack"])))
        else:
            game.apply(seat, Defend(tuple(entry["defend"])))
    assert seen == [len(requests[0]), len(requests[1])], "a request was not answered"

    for s in (0, 1):
        ends = [
            m.game_end
            for _, m in messages[s]
            if m.WhichOneof("message") == "game_end" and m.game_end.game_id == seats[s]
        ]
        (end,) = ends
        last_round = [
            e
            for e in record["events"]
            if e["round"] == end.rounds and e["type"] not in ("forfeit", "game_end")
        ]
        assert _wire_events(end.last_round_events, end.rounds, s) == [
            _seat_form(e, s) for e in last_round
        ]
        starts = [
            m.game_start
            for _, m in messages[s]
            if m.WhichOneof("message") == "game_start" and m.game_start.game_id == seats[s]
        ]
        assert starts[0].ruleset == ruleset_to_pb(Ruleset.from_dict(record["ruleset"]))
    return sum(seen)


def test_no_message_reveals_hidden_cards() -> None:
    async def scenario() -> None:
        async with h.arena(RAW_SETTINGS) as (referee, port), h.raw_clients(port, 2) as clients:
            for client, name in zip(clients, "ab", strict=True):
                await client.connect(name)
            plays = [
                referee.play(
                    f"info{i}",
                    ("a", "b") if i % 2 == 0 else ("b", "a"),
                    seed=20 + i,
                    ruleset=DEFAULT_RULESET,
                )
                for i in range(3)
            ]
            *reports, _, _ = await asyncio.gather(
                *plays, *(h.play_raw(c, games=3, seed=40 + i) for i, c in enumerate(clients))
            )
            checked = 0
            for report in reports:
                by_seat = {}
                for seat, name in enumerate(report.seats):
                    client = clients["ab".index(name)]
                    by_seat[seat] = list(zip(client.raw, client.log, strict=True))
                checked += check_no_hidden_information(
                    report, by_seat, {0: report.game_id, 1: report.game_id}
                )
                assert report.outcome.termination in FINISHED
            assert checked > 40

    h.run_async(scenario(), 30)


# ---------------------------------------------------------------------------------------------
# 8. Stale, duplicate, unknown and malformed replies
# ---------------------------------------------------------------------------------------------
def test_duplicate_and_unknown_replies_are_ignored_and_the_game_goes_on() -> None:
    async def scenario() -> None:
        async with h.arena(RAW_SETTINGS) as (referee, port), h.raw_clients(port, 2) as clients:
            client_a = clients[0]
            for client, name in zip(clients, "ab", strict=True):
                await client.connect(name)
            first: list[pb.DecisionRequest] = []

            async def mischief(request: pb.DecisionRequest) -> Any:
                if first:
                    return None
                first.append(request)
                rid, gid = request.request_id, request.game_id
                # Wrong game_id for an open request, and a request id never sent.
                await client_a.answer(
                    pb.Action(game_id="other", request_id=rid, replace=pb.Replace())
                )
                await client_a.answer(
                    pb.Action(game_id=gid, request_id=987_654, replace=pb.Replace())
                )
                await client_a.send(pb.BotMessage())  # no case set
                await client_a.send(pb.BotMessage(hello=pb.Hello(protocol_version=1)))
                good = pb.Action(game_id=gid, request_id=rid, replace=pb.Replace())
                await client_a.answer(good)
                await client_a.answer(good)  # the same answer again
                return False

            game = asyncio.create_task(
                referee.play("dup", ("a", "b"), seed=8, ruleset=DEFAULT_RULESET)
            )
            log_a, _ = await asyncio.gather(
                h.play_raw(client_a, hook=mischief), h.play_raw(clients[1], seed=1)
            )
            report = await game
            assert report.outcome.termination in FINISHED, report
            replay(report.record)
            rid = first[0].request_id
            got = [(e.code, e.game_id, e.request_id, e.outcome) for e in log_a.errors]
            ignored = pb.ERROR_OUTCOME_IGNORED
            assert got == [
                (pb.ERROR_CODE_UNKNOWN_REQUEST, "other", rid, ignored),
                (pb.ERROR_CODE_UNKNOWN_REQUEST, "dup", 987_654, ignored),
                (pb.ERROR_CODE_MALFORMED, "", 0, ignored),
                (pb.ERROR_CODE_UNEXPECTED_MESSAGE, "", 0, ignored),
                (pb.ERROR_CODE_DUPLICATE_REPLY, "dup", rid, ignored),
            ]
            # The first replacement applied is the one that was accepted: keep the hand.
            first = report.record["actions"][0]
            assert (first["seat"], first["replace"], "substituted" in first) == (0, [], False)

            # After the game, answering again is refused too (never crashes the session).
            last = log_a.requests[-1]
            await client_a.answer(client_a.random_action(last, random.Random(0)))
            error = (await client_a.recv_case("error")).error
            assert error.code in (pb.ERROR_CODE_DUPLICATE_REPLY, pb.ERROR_CODE_STALE_REPLY)
            assert error.outcome == ignored

    h.run_async(scenario(), 30)


@pytest.mark.parametrize("answer", ["wrong_case", "no_case", "bad_defence", "absurd_card"])
def test_malformed_action_forfeits(answer: str) -> None:
    async def scenario() -> None:
        async with h.arena(RAW_SETTINGS) as (referee, port), h.raw_clients(port, 2) as clients:
            for client, name in zip(clients, "ab", strict=True):
                await client.connect(name)
            bad: list[pb.DecisionRequest] = []
            wanted = {
                "wrong_case": pb.DECISION_KIND_REPLACE,
                "no_case": pb.DECISION_KIND_DUEL,
                "bad_defence": pb.DECISION_KIND_DEFEND,
                "absurd_card": pb.DECISION_KIND_DUEL,
            }[answer]

            def hook(request: pb.DecisionRequest) -> pb.Action | None:
                if bad or request.kind != wanted:
                    return None
                bad.append(request)
                action = pb.Action(game_id=request.game_id, request_id=request.request_id)
                if answer == "wrong_case":
                    action.duel.card = request.view.hand[0]
                elif answer == "bad_defence":
                    action.defend.answers.extend(
                        [pb.DefenceChoice(sacrifice=False)] * len(request.view.current_attack)
                    )
                elif answer == "absurd_card":
                    action.duel.card = 4_000_000_000
                return action  # "no_case": nothing set

            game = asyncio.create_task(
                referee.play("mal", ("a", "b"), seed=12, ruleset=DEFAULT_RULESET)
            )
            logs = await asyncio.gather(
                *(h.play_raw(c, seed=i, hook=hook) for i, c in enumerate(clients))
            )
            report = await game
            (request,) = bad
            offender = request.view.seat
            (error,) = logs[offender].errors
            assert error.code == pb.ERROR_CODE_MALFORMED
            assert error.outcome == pb.ERROR_OUTCOME_FORFEIT
            assert (error.game_id, error.request_id) == ("mal", request.request_id)
            end = logs[offender].ends["mal"]
            assert (end.result, end.reason) == (pb.GAME_RESULT_LOSS, pb.END_REASON_ILLEGAL_ACTION)
            assert logs[1 - offender].ends["mal"].result == pb.GAME_RESULT_WIN
            assert report.outcome.termination is Termination.FORFEIT_ILLEGAL
            assert report.forfeit_by == offender
            replay(report.record)
            refused = report.record["actions"][-1]["refused"]
            assert (refused["failure"], refused["sent"]) == ("malformed", None)
            assert refused["note"].startswith("could not be decoded")

    h.run_async(scenario(), 30)
