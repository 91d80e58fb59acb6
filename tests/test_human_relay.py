"""A person's seat in process (docs/human-seat.md): the relay between the referee's client and
the page, the page's routes (Starlette's test client, no socket), and the per-seat clock the
person's seat plays under (scripted sessions, no transport).  The real thing, a person in
Chromium against a bot process over the real referee, is tests/test_human_seat.py."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from test_referee_scripted import ScriptedBot, silent

from tacocat_arena.engine import DEFAULT_RULESET, Attack, DecisionKind, Game, Replace, build_view
from tacocat_arena.human.page import create_page
from tacocat_arena.human.relay import Refusal, Relay, legal_json, pair_score, view_json
from tacocat_arena.play.policies import RandomPolicy
from tacocat_arena.referee import ClockSettings, RefereeSettings, play_game
from tacocat_arena.tournament.record_checks import check_referee_block, check_timing


def _game_at(kind: DecisionKind, seed: int = 3) -> Game:
    """A game played by random policies up to seat 0's first decision of ``kind``."""
    import random

    game = Game(DEFAULT_RULESET, seed)
    policy = RandomPolicy(random.Random(seed))
    while game.outcome is None:
        if 0 in game.pending and game.phase is kind:
            return game
        for seat in sorted(game.pending):
            game.apply(seat, policy.act(build_view(game, seat)))
    raise AssertionError(f"no {kind} decision for seat 0 with seed {seed}")


def _relay_at(kind: DecisionKind) -> tuple[Relay, Game]:
    game = _game_at(kind)
    relay = Relay("human", "bot")
    relay.on_game_start("g1", 0, 120_000)
    for _ in range(5):  # the page's number of the open request is then 5 (the referee's: 9)
        relay.on_request("g1", 9, build_view(game, 0), 120_000, 0)
    return relay, game


def test_the_page_state_is_the_seats_own_view_and_nothing_else() -> None:
    relay, game = _relay_at(DecisionKind.ATTACK)
    state = relay.state()
    view = build_view(game, 0)
    assert state["view"] == view_json(view)
    assert state["request"]["legal"] == legal_json(view)
    text = json.dumps(state)
    # The full log's deal holds both hands and the pile; the seat's public form holds neither.
    assert '"hands"' not in text and '"draw_pile"' not in text
    pile = json.dumps(list(game.draw_pile))[1:-1]
    assert pile not in text
    assert state["view"]["opponent_hand_size"] == len(game.hands[1])


def test_a_legal_answer_is_queued_once_and_a_replay_or_a_stale_id_is_refused() -> None:
    async def run() -> None:
        relay, game = _relay_at(DecisionKind.ATTACK)
        hand = game.hands[0]
        action = relay.answer(5, {"kind": "attack", "cards": [hand[0]]})
        assert action == Attack((hand[0],))
        assert relay.answers.get_nowait() == ("g1", 9, action)
        with pytest.raises(Refusal, match="already answered"):
            relay.answer(5, {"kind": "attack", "cards": [hand[0]]})
        with pytest.raises(Refusal, match="not the open one"):
            relay.answer(4, {"kind": "attack", "cards": [hand[0]]})
        assert relay.answers.empty()

    asyncio.run(run())


@pytest.mark.parametrize(
    ("kind", "choice", "rule"),
    [
        (DecisionKind.ATTACK, lambda hand: {"kind": "attack", "cards": list(hand)}, "P6"),
        (DecisionKind.ATTACK, lambda hand: {"kind": "attack", "cards": [99]}, "not a card|P1"),
        (DecisionKind.ATTACK, lambda hand: {"kind": "duel", "cards": [hand[0]]}, "kind"),
        (DecisionKind.REPLACE, lambda hand: {"kind": "replace", "cards": "1 2"}, "list"),
        (DecisionKind.DUEL, lambda hand: {"kind": "duel", "cards": []}, "exactly 1"),
        (DecisionKind.DEFEND, lambda hand: {"kind": "defend", "answers": []}, "P2|P4"),
    ],
)
def test_an_illegal_or_malformed_answer_is_refused_by_the_engines_rule_and_kept_open(
    kind: DecisionKind, choice: Any, rule: str
) -> None:
    async def run() -> None:
        relay, game = _relay_at(kind)
        with pytest.raises(Refusal, match=rule):
            relay.answer(5, choice(game.hands[0]))
        assert relay.open is not None and relay.answers.empty()  # still the person's to answer

    asyncio.run(run())


def test_replace_takes_at_most_the_cap_and_only_cards_in_hand() -> None:
    async def run() -> None:
        relay, game = _relay_at(DecisionKind.REPLACE)
        view = relay.open.view  # type: ignore[union-attr]
        too_many = list(game.hands[0]) + [game.hands[0][0]]
        with pytest.raises(Refusal):
            relay.answer(5, {"kind": "replace", "cards": too_many})
        assert relay.answer(5, {"kind": "replace", "cards": []}) == Replace(())
        assert view.max_replace >= 0

    asyncio.run(run())


def test_a_new_games_requests_are_numbered_on_so_an_old_answer_never_fits_them() -> None:
    async def run() -> None:
        relay, game = _relay_at(DecisionKind.ATTACK)
        card = game.hands[0][0]
        relay.answer(5, {"kind": "attack", "cards": [card]})
        relay.on_game_start("g2", 1, 120_000)  # the twin game: a new session, request ids anew
        relay.on_request("g2", 9, build_view(game, 0), 120_000, 0)
        with pytest.raises(Refusal, match="already answered"):
            relay.answer(5, {"kind": "attack", "cards": [card]})
        assert relay.state()["request"]["id"] == 6
        relay.on_error("g1", 9, "an old game's error")  # of another game: the request stays
        assert relay.open is not None
        relay.on_error("g2", 9, "timed out")
        assert relay.open is None and relay.state()["notice"] == "timed out"

    asyncio.run(run())


def test_the_twin_offer_waits_for_the_person_and_times_out_to_no() -> None:
    async def run() -> None:
        relay = Relay("human", "bot", games=2)
        with pytest.raises(Refusal, match="no twin"):
            relay.choose_twin(True)
        assert await relay.offer_twin(0.05) is False
        offer = asyncio.create_task(relay.offer_twin(5))
        await asyncio.sleep(0)
        relay.choose_twin(True)
        assert await offer is True

    asyncio.run(run())


def test_a_pair_is_scored_over_both_games() -> None:
    assert pair_score([{"result": "win"}]) is None
    assert pair_score([{"result": "win"}, {"result": "draw"}]) == 1.5
    # The page shows the relay's score, not one it counts again.
    relay = Relay("human", "random", games=2)
    relay.on_game_end({"result": "loss"}, None)
    assert relay.state()["pair_points"] is None
    relay.on_game_end({"result": "draw"}, None)
    assert relay.state()["pair_points"] == 0.5


async def asgi(app: Any, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
    """One request to an ASGI app in process: its status and whole body."""
    data = body if isinstance(body, bytes) else b"" if body is None else json.dumps(body).encode()
    sent: list[dict[str, Any]] = []
    requested = False

    async def receive() -> dict[str, Any]:
        nonlocal requested
        if requested:
            await asyncio.sleep(3600)
        requested = True
        return {"type": "http.request", "body": data, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"content-type", b"application/json")],
        "http_version": "1.1",
        "scheme": "http",
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 1),
        "root_path": "",
    }
    await app(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


def test_the_page_refuses_a_stale_post_a_wrong_key_and_a_body_that_is_not_json() -> None:
    async def run() -> None:
        relay, game = _relay_at(DecisionKind.DUEL)
        app = create_page(relay, "k3y")
        assert (await asgi(app, "GET", "/other/"))[0] == 404
        status, page = await asgi(app, "GET", "/k3y/")
        assert status == 200 and b"Your hand" in page
        stale = {"request_id": 4, "action": {"kind": "duel"}}
        status, answer = await asgi(app, "POST", "/k3y/action", stale)
        assert status == 409 and "not the open one" in json.loads(answer)["error"]
        assert (await asgi(app, "POST", "/k3y/action", b"{nope"))[0] == 400
        card = game.hands[0][0]
        body = {"request_id": 5, "action": {"kind": "duel", "cards": [card]}}
        assert await asgi(app, "POST", "/k3y/action", body) == (
            200,
            json.dumps({"played": f"duel {card}"}, separators=(",", ":")).encode(),
        )
        status, answer = await asgi(app, "POST", "/k3y/action", body)
        assert status == 409 and "replay" in json.loads(answer)["error"]
        relay.finish()
        status, stream = await asgi(app, "GET", "/k3y/events")  # finished: one state, the end
        (line,) = [x for x in stream.decode().splitlines() if x.startswith("data: ")]
        assert json.loads(line[6:])["finished"] is True

    asyncio.run(run())


def test_a_seat_with_its_own_allowance_is_timed_by_it_and_the_record_says_so() -> None:
    """The person's longer clock (``RefereeSettings.allowances``): seat a (silent) times out
    after its own 400 ms; the record's block holds both seats' allowances, which verify's
    timing check re-runs, and a record claiming a longer one is caught."""
    settings = RefereeSettings(
        clock=ClockSettings(decision_ms=150, grace_ms=20), allowances=(("a", 400),)
    )
    first, second = ScriptedBot(steps=[silent]), ScriptedBot()

    async def game() -> Any:
        sessions = (first.connect("a"), second.connect("b"))
        report = await play_game("g1", sessions, seed=7, ruleset=DEFAULT_RULESET, settings=settings)
        await asyncio.sleep(0.01)
        for session in sessions:
            session.close()
        return report

    report = asyncio.run(asyncio.wait_for(game(), 30))
    assert first.messages("game_start")[0].game_start.decision_timeout_ms == 400
    assert second.messages("game_start")[0].game_start.decision_timeout_ms == 150
    assert "within 400 ms" in report.detail
    record = report.record
    assert record["referee"]["seat_decision_ms"] == [400, 150]
    assert not list(check_referee_block(record)) and not list(check_timing(record, []))
    longer = {**record, "referee": {**record["referee"], "seat_decision_ms": [1000, 150]}}
    assert [rule for _, rule, _ in check_timing(longer, [])] == ["T2"]
    broken = {**record, "referee": {**record["referee"], "seat_decision_ms": [400]}}
    assert [rule for _, rule, _ in check_referee_block(broken)] == ["E1"]
