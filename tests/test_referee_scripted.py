"""The referee without a transport (CONVENTIONS section 12): scripted bots drive ``play_game``
and ``admit`` directly.

A ``ScriptedBot`` stands where a stream would: it is the writer of a real ``BotSession`` (so
it decodes every message the referee posts, as a bot's stub would) and answers each
DecisionRequest with the next step of its script, through ``BotSession.deliver``, as the
servicer's reader does.  The model is python-chess's ``MockTransport``: a script of what is
expected and what is answered, checked to the end.  Every forfeit kind (timeout, illegal,
malformed, disconnect, crash) and each substitution of the default-action policy is played
here, and each rule of admission refuses with its own status.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass, field

import grpc
import pytest

from tacocat.v1 import arena_pb2 as pb
from tacocat_arena.engine import (
    DEFAULT_RULESET,
    DecisionKind,
    Duel,
    Failure,
    Replace,
    SeatView,
    Termination,
)
from tacocat_arena.play.policies import RandomPolicy
from tacocat_arena.protocol.wire import (
    KIND_FROM_PB,
    PROTOCOL_VERSION,
    action_to_pb,
    ruleset_from_pb,
    view_from_pb,
)
from tacocat_arena.referee import (
    BotSession,
    ClockSettings,
    FailurePolicy,
    GameReport,
    Referee,
    RefereeSettings,
    play_game,
)
from tacocat_arena.referee.admission import Refusal, admit

#: What a scripted step does with a request: an Action to send, or None to stay silent.
Step = Callable[[pb.DecisionRequest, SeatView], "pb.Action | None"]


def legal(request: pb.DecisionRequest, view: SeatView) -> pb.Action:
    """A random legal answer (the seat's own, seeded by the request id)."""
    action = RandomPolicy(random.Random(request.request_id)).act(view)
    return action_to_pb(request.game_id, request.request_id, action)


def silent(request: pb.DecisionRequest, view: SeatView) -> None:
    """No answer: the clock runs out."""
    return None


def illegal(request: pb.DecisionRequest, view: SeatView) -> pb.Action:
    """A well-formed answer of the kind asked, with a card the seat does not hold."""
    missing = next(value for value in range(1, 100) if value not in view.hand)
    kind = KIND_FROM_PB[request.kind]
    action = Replace((missing,)) if kind is DecisionKind.REPLACE else Duel(missing)
    return action_to_pb(request.game_id, request.request_id, action)


def _allowance(step: Step) -> int:
    """A short clock where the script waits for it, else one a loaded machine never misses."""
    return 1500 if step is silent else 10_000


def malformed(request: pb.DecisionRequest, view: SeatView) -> pb.Action:
    """An Action that names the request but carries no answer at all."""
    return pb.Action(game_id=request.game_id, request_id=request.request_id)


@dataclass
class ScriptedBot:
    """One bot's side of a session, scripted: ``steps`` answer the first requests in order
    (``legal`` afterwards); ``leave_at`` closes the session at that request instead."""

    steps: list[Step] = field(default_factory=list)
    leave_at: int | None = None
    seen: list[pb.RefereeMessage] = field(default_factory=list)
    requests: int = 0
    session: BotSession | None = None

    def connect(self, name: str) -> BotSession:
        self.session = BotSession(name=name, max_concurrent_games=4)
        self.session.start_writing(self.write)
        return self.session

    async def write(self, data: bytes) -> None:
        message = pb.RefereeMessage.FromString(data)
        self.seen.append(message)
        if message.WhichOneof("message") == "decision_request":
            self._answer(message.decision_request)

    def _answer(self, request: pb.DecisionRequest) -> None:
        assert self.session is not None
        self.requests += 1
        if self.leave_at == self.requests:
            self.session.close("the scripted bot left")
            return
        step = self.steps.pop(0) if self.steps else legal
        start = next(m.game_start for m in self.seen if m.WhichOneof("message") == "game_start")
        max_replace = request.legal.replace.max_discard if request.legal.HasField("replace") else 0
        view = view_from_pb(
            request.view, ruleset_from_pb(start.ruleset), KIND_FROM_PB[request.kind], max_replace
        )
        action = step(request, view)
        if action is not None:
            # As the servicer's reader would, on the loop's next turn (never inside the post).
            asyncio.get_running_loop().call_soon(self.session.deliver, action)

    def messages(self, case: str) -> list[pb.RefereeMessage]:
        return [m for m in self.seen if m.WhichOneof("message") == case]


def play(
    first: ScriptedBot,
    second: ScriptedBot,
    *,
    policy: FailurePolicy = FailurePolicy.FORFEIT,
    decision_ms: int = 2000,
    seed: int = 7,
    crashed: bool = False,
) -> GameReport:
    """One whole game between two scripted bots, with no stream anywhere."""
    settings = RefereeSettings(
        clock=ClockSettings(decision_ms=decision_ms, grace_ms=20), failure_policy=policy
    )

    async def classify(name: str) -> Termination:
        return Termination.FORFEIT_CRASH if crashed else Termination.FORFEIT_DISCONNECT

    async def game() -> GameReport:
        sessions = (first.connect("a"), second.connect("b"))
        report = await play_game(
            "g1",
            sessions,
            seed=seed,
            ruleset=DEFAULT_RULESET,
            settings=settings,
            classify_disconnect=classify,
        )
        await asyncio.sleep(0.01)  # the GameEnds are written
        for session in sessions:
            session.close()
        return report

    return asyncio.run(asyncio.wait_for(game(), 30))


def test_a_scripted_game_of_legal_answers_ends_by_the_rules() -> None:
    a, b = ScriptedBot(), ScriptedBot()
    report = play(a, b)
    assert report.outcome.termination in (Termination.GOAL, Termination.ROUND_CAP)
    assert report.decisions[0] == a.requests and report.decisions[1] == b.requests
    for bot, seat in ((a, 0), (b, 1)):
        (start,) = bot.messages("game_start")
        assert start.game_start.seat == seat and start.game_start.decision_timeout_ms == 2000
        assert len(bot.messages("game_end")) == 1 and not bot.messages("error")


@pytest.mark.parametrize(
    ("step", "termination", "code"),
    [
        (silent, Termination.FORFEIT_TIMEOUT, pb.ERROR_CODE_TIMEOUT),
        (illegal, Termination.FORFEIT_ILLEGAL, pb.ERROR_CODE_ILLEGAL_ACTION),
        (malformed, Termination.FORFEIT_ILLEGAL, pb.ERROR_CODE_MALFORMED),
    ],
)
def test_each_failed_answer_forfeits_the_seat_that_gave_it(
    step: Step, termination: Termination, code: int
) -> None:
    a, b = ScriptedBot(steps=[legal, step]), ScriptedBot()
    report = play(a, b, decision_ms=_allowance(step))
    assert report.outcome.termination is termination
    assert report.outcome.winner == 1 and report.forfeit_by == 0
    (error,) = a.messages("error")
    assert error.error.code == code
    assert not b.messages("error")  # the opponent is told in its GameEnd only
    assert b.messages("game_end")[0].game_end.winner_seat == 1


@pytest.mark.parametrize(
    ("crashed", "termination"),
    [(False, Termination.FORFEIT_DISCONNECT), (True, Termination.FORFEIT_CRASH)],
)
def test_a_bot_that_leaves_forfeits_as_the_tournament_classifies_it(
    crashed: bool, termination: Termination
) -> None:
    a, b = ScriptedBot(), ScriptedBot(leave_at=2)
    report = play(a, b, crashed=crashed)
    assert report.outcome.termination is termination
    assert report.outcome.winner == 0 and report.forfeit_by == 1


@pytest.mark.parametrize("step", [silent, illegal, malformed])
def test_under_default_action_a_failed_answer_is_substituted_and_the_game_goes_on(
    step: Step,
) -> None:
    a, b = ScriptedBot(steps=[legal, step]), ScriptedBot()
    report = play(a, b, policy=FailurePolicy.DEFAULT_ACTION, decision_ms=_allowance(step))
    assert report.outcome.termination in (Termination.GOAL, Termination.ROUND_CAP)
    expected = {silent: Failure.TIMEOUT, illegal: Failure.ILLEGAL, malformed: Failure.MALFORMED}
    marks = [entry["substituted"] for entry in report.record["actions"] if "substituted" in entry]
    assert marks == [expected[step].value]
    assert len(a.messages("error")) == 1 and len(a.messages("game_end")) == 1
    assert not b.messages("error")


# -- admission ----------------------------------------------------------------------------------
def hello(name: str = "a", token: str = "tok-a", version: int = PROTOCOL_VERSION) -> pb.Hello:
    return pb.Hello(protocol_version=version, bot_name=name, token=token)


class RecordingReferee(Referee):
    """A referee that remembers what it refused (as an arena shows its organizer)."""

    def __init__(self, **options: object) -> None:
        super().__init__({"a": "tok-a", "b": "tok-b"}, RefereeSettings(), **options)  # type: ignore[arg-type]
        self.refusals: list[str] = []

    def refused(self, name: str, peer: str, reason: str) -> None:
        self.refusals.append(f"{name}: {reason}")

    def revoked(self, name: str, token: str) -> bool:
        return name == "b" and token == "old-b"


def admitted(referee: Referee, message: pb.Hello, peer: str = "ipv4:127.0.0.1:1") -> object:
    return asyncio.run(admit(referee, message, peer))


@pytest.mark.parametrize(
    ("message", "code", "words"),
    [
        (hello(version=PROTOCOL_VERSION + 1), grpc.StatusCode.FAILED_PRECONDITION, "not supported"),
        (hello(name=" "), grpc.StatusCode.INVALID_ARGUMENT, "1-64 printable"),
        (hello(name="x" * 65), grpc.StatusCode.INVALID_ARGUMENT, "1-64 printable"),
        (hello(token="wrong"), grpc.StatusCode.UNAUTHENTICATED, "wrong token"),
        (hello(name="b", token="old-b"), grpc.StatusCode.PERMISSION_DENIED, "revoked"),
    ],
)
def test_each_rule_of_admission_refuses_with_its_own_status(
    message: pb.Hello, code: grpc.StatusCode, words: str
) -> None:
    refusal = admitted(RecordingReferee(), message)
    assert isinstance(refusal, Refusal) and refusal.code is code and words in refusal.message


def test_a_stalled_stream_a_foreign_peer_and_a_second_session_are_refused() -> None:
    referee = RecordingReferee(check_peer=lambda name, peer: "not its process" if peer else None)
    refusal = admitted(referee, hello(), peer="ipv4:127.0.0.1:9")
    assert isinstance(refusal, Refusal) and refusal.code is grpc.StatusCode.PERMISSION_DENIED
    referee = RecordingReferee()
    referee.stalled.add("a")
    refusal = admitted(referee, hello())
    assert isinstance(refusal, Refusal) and refusal.code is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert referee.refusals == ["a: its last stream stopped reading and is still open"]

    async def twice() -> tuple[object, object]:
        referee = RecordingReferee()
        first = await admit(referee, hello(), "p")
        assert isinstance(first, BotSession)
        await referee.register(first)
        return first, await admit(referee, hello(), "p")

    first, second = asyncio.run(twice())
    assert isinstance(second, Refusal) and second.code is grpc.StatusCode.ALREADY_EXISTS


def test_an_admitted_bot_gets_a_session_with_its_welcome_waiting() -> None:
    message = hello()
    message.max_concurrent_games = 2
    session = admitted(RecordingReferee(), message)
    assert isinstance(session, BotSession) and session.name == "a"
    (data,) = session._outbox  # noqa: SLF001 (the Welcome waits to be written)
    welcome = pb.RefereeMessage.FromString(data).welcome
    assert welcome.bot_name == "a" and welcome.max_concurrent_games == 2
    assert welcome.decision_timeout_ms == RefereeSettings().clock.decision_ms


def test_a_read_that_the_servers_stop_ends_is_the_streams_end_not_an_unreadable_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """grpc.aio raises its own error (a ``grpc.aio.BaseError``: "Server already stopped.")
    from a read the server's stop interrupts: the session ends quietly, with nothing logged
    as a failure and no INVALID_ARGUMENT kept for the stream (it was read, not unreadable)."""
    from tacocat_arena.referee.connection import read_actions

    async def scenario() -> list[str]:
        referee = Referee(None, RefereeSettings())
        session = BotSession("x", 1)

        async def read() -> object:
            raise grpc.aio.UsageError("Server already stopped.")

        unreadable: list[str] = []
        await read_actions(referee, session, read, unreadable)
        assert not session.is_open
        return unreadable

    assert asyncio.run(scenario()) == []
    assert not [r for r in caplog.records if r.levelname == "ERROR"], caplog.text
