"""Refereeing one game between two bot sessions: the engine wrapped in clocks and policy.

The engine decides what is legal; this module decides what happens around it: who is asked
what and when, how long they may take, and what a timeout, an illegal or malformed answer or
a disconnect costs (RULES-SPEC says nothing of these: they are referee policy, in the manner
of PettingZoo's wrappers).  Simultaneous decisions are asked of both seats at once and applied
only when both answers are in, so no bot can learn the other's choice first (D1, R3).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import text_format

from tacocat.v1 import arena_pb2 as pb
from tacocat_arena.engine import (
    Action,
    ActionError,
    DecisionKind,
    DecisionNote,
    Failure,
    Game,
    Outcome,
    Refused,
    Ruleset,
    Seat,
    Termination,
    build_view,
    to_record,
)
from tacocat_arena.engine import record as record_format
from tacocat_arena.protocol.wire import (
    KIND_TO_PB,
    TERMINATION_TO_PB,
    MalformedAction,
    ViewEncoder,
    action_from_pb,
    board_to_pb,
    default_action,
    round_result_to_pb,
    ruleset_to_pb,
    write_legal,
)
from tacocat_arena.referee.policy import FailureRules, Ruling
from tacocat_arena.referee.session import BotSession, SessionClosed
from tacocat_arena.referee.settings import FailurePolicy, RefereeSettings

FAILURE_POLICY_PB = {
    FailurePolicy.FORFEIT: pb.FAILURE_POLICY_FORFEIT,
    FailurePolicy.DEFAULT_ACTION: pb.FAILURE_POLICY_DEFAULT_ACTION,
}


@dataclass
class GameReport:
    """What the tournament stores about a finished game."""

    game_id: str
    seats: tuple[str, str]
    seed: int
    outcome: Outcome
    detail: str
    rounds: int
    decisions: list[int] = field(default_factory=lambda: [0, 0])
    think_ms: list[float] = field(default_factory=lambda: [0.0, 0.0])
    #: Each answered decision's clock time, per seat, in milliseconds (hand-over to receipt).
    clock_ms: tuple[list[float], list[float]] = field(default_factory=lambda: ([], []))
    #: The longest time the game waited on the referee alone, with no seat's clock running
    #: (between an answer's receipt and the next request's hand-over), in milliseconds.
    max_untimed_ms: float = 0.0
    #: The longest the referee took to rule on a decision once it was due (from the reading
    #: of its Action, or from its deadline for a timeout, to the ruling), in milliseconds: a
    #: stalled loop's lag, which a timeout's recorded time includes (``bench load``).
    max_ruling_lag_ms: float = 0.0
    #: The finished game; ``record`` is built from it when first asked for.
    game: Game | None = field(default=None, repr=False)
    #: A record given outright (a game that was never played has no ``game``).
    given_record: dict[str, Any] | None = field(default=None, repr=False)
    #: What the referee refused or substituted, by index in ``game.actions`` (the record's).
    notes: dict[int, DecisionNote] = field(default_factory=dict, repr=False)
    #: The clock time of every other answered decision, by index in ``game.actions``.  Kept
    #: as plain floats, not notes: a dict of floats is invisible to the cyclic garbage
    #: collector, whose full collections would otherwise walk one object per decision of
    #: every game in flight (see referee/heap.py).
    action_ms: dict[int, float] = field(default_factory=dict, repr=False)
    #: The clock and failure policy of the game, as the record states them.
    referee: dict[str, Any] | None = field(default=None, repr=False)
    #: The names the record gives the players (default: ``seats``, the sessions' names).
    players: tuple[str, str] | None = field(default=None, repr=False)

    @property
    def record(self) -> dict[str, Any]:
        """The game record (docs/game-record.md).  Built on first use, off the referee's
        hot path: a record costs as much as a few dozen decisions, and not every caller
        stores one."""
        if self.given_record is None:
            notes = {index: DecisionNote(ms) for index, ms in self.action_ms.items()}
            notes.update(self.notes)
            self.given_record = (
                to_record(self.game, notes, self.referee, self.players or self.seats)
                if self.game is not None
                else {}
            )
        return self.given_record

    def add_to_detail(self, more: str) -> None:
        """Say more of how a forfeited game ended (a crashed bot's exit: "exited with code
        1"), in ``detail`` and in the record's forfeit (its entry and its event) alike, so the
        record says what the games.jsonl line and the store say (G1)."""
        record = self.record  # built now, from the game as the referee ended it
        self.detail = f"{self.detail} ({more})"
        for item in (*record.get("actions", ()), *record.get("events", ())):
            if "forfeit" in item or item.get("type") == "forfeit":
                item["detail"] = self.detail

    @property
    def fallbacks(self) -> tuple[int, int]:
        """Per seat, the actions that were not the bot's own decision but a default its SDK
        played because the bot's code failed (``Action.fallback``)."""
        counts = [0, 0]
        if self.game is not None:
            actions = self.game.actions
            for index, note in self.notes.items():
                seat = actions[index][0]
                if note.fallback and seat is not None:
                    counts[seat] += 1
        return counts[0], counts[1]

    @property
    def forfeit_by(self) -> Seat | None:
        """The seat that forfeited, if the game ended by forfeit with a winner."""
        if self.outcome.termination.is_forfeit and self.outcome.winner is not None:
            return 1 - self.outcome.winner
        return None

    @classmethod
    def unplayed(
        cls, game_id: str, seats: tuple[str, str], seed: int, outcome: Outcome, detail: str
    ) -> GameReport:
        """A game decided without being played (a bot absent or past its restarts): its
        record has no actions and says why in ``unplayed``."""
        record = {
            "format": record_format.FORMAT,
            "version": record_format.VERSION,
            "seed": seed,
            "result": outcome.result(),
            "termination": outcome.termination.value,
            "winner": outcome.winner,
            "rounds": 0,
            "actions": [],
            "events": [],
            "unplayed": detail,
        }
        return cls(game_id, seats, seed, outcome, detail, 0, given_record=record)


@dataclass
class _Failure:
    """Why a seat's decision produced no legal action.

    ``message`` goes to the failing seat (it may quote that seat's hand); ``public`` is what
    anyone else may read (the opponent's GameEnd): it never holds a hidden card (rule I2).
    """

    termination: Termination
    code: pb.ErrorCode
    message: str
    public: str
    rule: str = ""
    failure: Failure = Failure.TIMEOUT
    #: The refused answer, for the record (None for a timeout or a disconnect).
    refused: Refused | None = None


class _Seat:
    """The referee's side of one seat: session, clock and the seat's request message.

    The DecisionRequest is one message per seat, updated in place for each request (see
    ``ViewEncoder``): a request is only built after the previous one is answered and written.
    """

    def __init__(
        self,
        seat: Seat,
        session: BotSession,
        game_id: str,
        bank_ms: int,
        converted: list[bytes | None],
        allowance_ms: int,
    ) -> None:
        self.seat = seat
        self.session = session
        self.game_id = game_id
        self.bank_ms = float(bank_ms)
        #: This seat's per-decision allowance (``RefereeSettings.allowance_ms``).
        self.allowance_ms = allowance_ms
        self.message = pb.RefereeMessage(decision_request=pb.DecisionRequest(game_id=game_id))
        self.request = self.message.decision_request
        self.encoder = ViewEncoder(seat, self.request.view, converted)
        self.decisions = 0
        self.think_ms = 0.0
        self.clock_ms: list[float] = []
        #: The longest the referee took to rule on one of this seat's decisions once it
        #: was due (its Action read, or its deadline passed), in seconds: the loop's lag.
        self.ruling_lag = 0.0


@dataclass(frozen=True)
class PendingDecision:
    """A decision a seat is being asked now, as a spectator may know it: whose, what kind,
    and by when (``time.time()`` seconds).  The arena's live page shows it with its clock
    counting down; nothing in it is hidden information (docs/protocol.md, "Time": the clock
    is the same for everyone who reads the rules)."""

    seat: Seat
    kind: DecisionKind
    #: When the request was handed to the seat's session.
    asked_at: float
    #: The decision's allowance, in milliseconds (0: no clock).
    allowance_ms: int
    #: What was left of the seat's bank when it was asked, in milliseconds.
    bank_left_ms: float
    #: Allowance + bank left after ``asked_at``, what the seat's request says it has (the
    #: referee's grace on top is its own slack, not the bot's time); None: no clock.
    deadline_at: float | None


#: Told the decisions pending whenever they change (``play_game``'s ``on_pending``).
PendingListener = Callable[[tuple[PendingDecision, ...]], None]


@dataclass
class _Asked:
    """A decision request on its way: what the answer will be checked against."""

    seat: _Seat
    kind: DecisionKind
    request_id: int
    future: asyncio.Future[tuple[pb.Action, float]]
    timer: asyncio.TimerHandle | None
    #: When the request was handed to the session (``time.monotonic``): the clock's start.
    started: float
    #: What was left of the seat's bank when it was asked, in milliseconds.
    bank_left_ms: float
    #: Allowance + bank left + grace: an answer read later than this is a timeout.
    deadline_ms: float
    #: When the clock stopped (the Action was read, or the deadline passed).
    stopped: float = 0.0
    #: The answer's ``Action.fallback``: why it is a default the bot's SDK played because
    #: the bot's code failed ("" for the bot's own decision).
    fallback: str = ""
    #: The clock's time, rounded to the microsecond as the record holds it, so that the
    #: referee's bank arithmetic and ``verify``'s re-run of it use the same numbers (set by
    #: ``stop``).
    elapsed_ms: float = 0.0

    def stop(self, at: float) -> None:
        """Stop the clock at ``at`` (``time.monotonic``).  The rounding is done once here:
        ``round(x, 3)`` formats and parses a decimal string, a microsecond a decision."""
        self.stopped = at
        self.elapsed_ms = round((at - self.started) * 1000, 3)


async def play_game(
    game_id: str,
    sessions: tuple[BotSession, BotSession],
    *,
    seed: int,
    ruleset: Ruleset,
    settings: RefereeSettings,
    match_info: str = "",
    classify_disconnect: Callable[[str], Awaitable[Termination]] | None = None,
    observe: Callable[[Game], None] | None = None,
    on_pending: PendingListener | None = None,
) -> GameReport:
    """Referee one whole game and return its report; never raises for anything a bot does.

    ``classify_disconnect(bot_name)`` may turn a lost connection into another termination
    (the tournament says FORFEIT_CRASH when the bot's process died).  ``observe(game)`` is
    called once with the game as it starts, for spectators (an arena's live page), and
    ``on_pending(decisions)`` each time the seats it waits on change (``()``: none).
    """
    game = Game(ruleset, seed)
    if observe is not None:
        observe(game)
    match = _Match(game_id, sessions, game, settings, classify_disconnect, on_pending)
    match.start(match_info)
    await match.play()
    return match.report()


class _Match:
    """One game in play: the engine, the seats' clocks and what the record will say.

    ``play`` plays the decisions of the engine's pending seats; when one fails it asks the
    failure policy (``policy.FailureRules``) whether the seat forfeits or is substituted.
    """

    def __init__(
        self,
        game_id: str,
        sessions: tuple[BotSession, BotSession],
        game: Game,
        settings: RefereeSettings,
        classify_disconnect: Callable[[str], Awaitable[Termination]] | None,
        on_pending: PendingListener | None = None,
    ) -> None:
        self.game_id = game_id
        self.on_pending = on_pending
        self.game = game
        self.settings = settings
        self.rules = FailureRules(settings.failure_policy)
        self.classify_disconnect = classify_disconnect
        same_session = sessions[0] is sessions[1]
        converted: list[bytes | None] = []  # the log in wire form, shared by the seats
        bank_ms = settings.clock.bank_ms
        self.seats = [
            _Seat(
                s,
                sessions[s],
                f"{game_id}/{s}" if same_session else game_id,
                bank_ms,
                converted,
                settings.allowance_ms(sessions[s].name),
            )
            for s in (0, 1)
        ]
        self.names = (sessions[0].name, sessions[1].name)
        self.untimed_since = time.monotonic()  # no seat's clock runs: the game waits on us
        self.max_untimed = 0.0
        self.detail = ""
        self.notes: dict[int, DecisionNote] = {}  # for the record, by index in game.actions
        self.action_ms: dict[int, float] = {}  # the same, for the answers applied as they came
        #: What each seat's GameEnd says (a seat reads its own failure in full, the other's
        #: only in public form).
        self.seat_details = ["", ""]

    def start(self, match_info: str) -> None:
        """Tell both seats the game starts."""
        clock, settings = self.settings.clock, self.settings
        for seat in self.seats:
            start = pb.GameStart(
                game_id=seat.game_id,
                seat=seat.seat,
                opponent_name=self.names[1 - seat.seat],
                ruleset=ruleset_to_pb(self.game.ruleset),
                decision_timeout_ms=seat.allowance_ms,
                time_bank_ms=clock.bank_ms,
                failure_policy=FAILURE_POLICY_PB[settings.failure_policy],
                match_info=match_info,
            )
            seat.session.post(pb.RefereeMessage(game_start=start))

    async def play(self) -> None:
        """Play decisions until the game ends: ask every pending seat, then apply or rule on
        each answer.  One coroutine for the whole game, not one a decision."""
        game, settings = self.game, self.settings
        while game.outcome is None:
            pending = sorted(game.pending)
            simultaneous = len(pending) == 2
            # Every pending seat is asked before any answer is awaited: for a simultaneous
            # decision both requests are out at once, and neither answer is applied before both
            # are in (the engine's pending set guarantees the second half).
            asked = [_ask(game, self.seats[s], settings, simultaneous) for s in pending]
            timed = [a for a in asked if isinstance(a, _Asked)]
            if timed:
                self.max_untimed = max(self.max_untimed, timed[0].started - self.untimed_since)
            if self.on_pending is not None:
                self.on_pending(_pending(timed))
            answers = []  # a loop, not an async comprehension: that is one more coroutine
            for each in asked:
                answers.append(await _answer(each, settings))
                if self.on_pending is not None:
                    self.on_pending(_pending(timed))
            if timed:
                self.untimed_since = max(a.stopped for a in timed)
            paired = list(zip(pending, answers, strict=True))
            failures = [(s, a) for s, a in paired if isinstance(a, _Failure)]
            if failures and self.rules.ends_both(len(failures)):
                self._both_failed(failures)
                return
            for seat_index, answer in paired:
                request = _request(asked, seat_index)
                ms = None if request is None else request.elapsed_ms
                if not isinstance(answer, _Failure):
                    fallback = "" if request is None else request.fallback
                    refused = self._apply(seat_index, answer, asked, ms, fallback)
                    if refused is None:
                        continue
                    answer = refused
                if await self._rule(seat_index, answer, ms):
                    return

    def _apply(
        self,
        seat_index: Seat,
        action: Action,
        asked: list[_Asked | _Failure],
        ms: float | None,
        fallback: str,
    ) -> _Failure | None:
        """Apply a seat's answer (``fallback``: why it is a default its SDK played, "" for the
        bot's own decision); the failure that stands in for it if the rules forbid it."""
        game = self.game
        try:
            game.apply(seat_index, action)
        except ActionError as error:
            kind = _asked_kind(asked, seat_index)
            return _Failure(
                Termination.FORFEIT_ILLEGAL,
                pb.ERROR_CODE_ILLEGAL_ACTION,
                str(error),
                f"{error.rule}: illegal {kind} (the reason went to that seat only)",
                error.rule,
                Failure.ILLEGAL,
                Refused(Failure.ILLEGAL, str(error), error.rule, action),
            )
        if fallback:
            self.notes[len(game.actions) - 1] = DecisionNote(ms, fallback=fallback)
        elif ms is not None:
            self.action_ms[len(game.actions) - 1] = ms
        _account(self.seats[seat_index], ms, True)
        return None

    async def _rule(self, seat_index: Seat, failure: _Failure, ms: float | None) -> bool:
        """Rule on one seat's failed decision by the policy; True if that ended the game."""
        game, seat = self.game, self.seats[seat_index]
        forfeits = self.rules.ruling(failure.failure) is Ruling.FORFEIT
        _send_error(seat, failure, forfeits)
        _account(seat, ms, answered=failure.refused is not None)
        if not forfeits:
            substitute = default_action(build_view(game, seat_index))
            game.substitute(seat_index, substitute, failure.failure)
            self.notes[len(game.actions) - 1] = DecisionNote(ms, failure.message, failure.refused)
            return False
        termination = failure.termination
        if termination is Termination.FORFEIT_DISCONNECT and self.classify_disconnect:
            termination = await self.classify_disconnect(self.names[seat_index])
        who = f"{self.names[seat_index]} (seat {seat_index})"
        self.detail = f"{who}: {failure.message}"
        self.seat_details[seat_index] = self.detail
        self.seat_details[1 - seat_index] = f"{who}: {failure.public}"
        game.forfeit(seat_index, termination, self.detail)
        self.notes[len(game.actions) - 1] = DecisionNote(ms, refused=failure.refused)
        return True

    def _both_failed(self, failures: list[tuple[Seat, _Failure]]) -> None:
        """Both seats failed the same decision: each is told, and the game ends undecided."""
        (first_seat, first), (second_seat, second) = failures
        self.detail = f"both seats failed: {first.message}; {second.message}"
        self.seat_details[first_seat] = f"both seats failed: {first.message}; {second.public}"
        self.seat_details[second_seat] = f"both seats failed: {first.public}; {second.message}"
        for seat_index, failure in failures:  # each is told, as for a single failure
            _send_error(self.seats[seat_index], failure, forfeits=True)
        self.game.forfeit(None, first.termination, self.detail)
        self.notes[len(self.game.actions) - 1] = DecisionNote(refused=first.refused)

    def report(self) -> GameReport:
        """Send both GameEnds and return what the tournament stores."""
        game, seats = self.game, self.seats
        outcome = game.outcome
        if outcome is None:
            raise RuntimeError("report() before the game ended")
        _send_game_end(game, seats, outcome, self.seat_details)
        return GameReport(
            game_id=self.game_id,
            seats=self.names,
            seed=game.seed,
            outcome=outcome,
            detail=self.detail,
            rounds=game.round,
            decisions=[s.decisions for s in seats],
            think_ms=[s.think_ms for s in seats],
            clock_ms=(seats[0].clock_ms, seats[1].clock_ms),
            max_untimed_ms=self.max_untimed * 1000,
            max_ruling_lag_ms=max(s.ruling_lag for s in seats) * 1000,
            game=game,
            notes=self.notes,
            action_ms=self.action_ms,
            referee=self.settings.record_block(self.names),
        )


def _pending(timed: list[_Asked]) -> tuple[PendingDecision, ...]:
    """The requests of ``timed`` not answered yet, as spectators see them (wall-clock times:
    a page compares them with its own clock)."""
    now_wall, now = time.time(), time.monotonic()
    pending = []
    for asked in timed:
        if asked.future.done() or asked.stopped:
            continue
        allowance_ms = asked.seat.allowance_ms
        asked_at = now_wall - (now - asked.started)
        deadline = asked_at + (allowance_ms + asked.bank_left_ms) / 1000
        pending.append(
            PendingDecision(
                asked.seat.seat,
                asked.kind,
                asked_at,
                allowance_ms,
                asked.bank_left_ms,
                deadline if allowance_ms else None,
            )
        )
    return tuple(pending)


def _request(asked: list[_Asked | _Failure], seat_index: int) -> _Asked | None:
    """A seat's request of this decision (None if it was never asked: its session was
    closed), with the milliseconds its clock ran and its answer's fallback reason."""
    for request in asked:
        if isinstance(request, _Asked) and request.seat.seat == seat_index:
            return request
    return None


#: The most of an ``Action.fallback`` the record keeps (arena.proto).
MAX_FALLBACK_CHARS = 200


def _account(seat: _Seat, ms: float | None, answered: bool) -> None:
    """Count a decision the record holds in the report's per-seat figures: its time (every
    recorded ``ms``) and, when an answer came (applied or refused), the decision itself.
    A decision the record does not hold (the other seat's answer to a simultaneous decision
    that ended the game) is not counted, so games.jsonl's figures follow from the record."""
    if ms is None:
        return
    seat.think_ms += ms
    if answered:
        seat.decisions += 1
        seat.clock_ms.append(ms)


def _asked_kind(asked: list[_Asked | _Failure], seat_index: int) -> str:
    """The decision kind a seat was asked (for public texts)."""
    for request in asked:
        if isinstance(request, _Asked) and request.seat.seat == seat_index:
            return request.kind.value
    return "decision"


def _ask(
    game: Game, seat: _Seat, settings: RefereeSettings, simultaneous: bool
) -> _Asked | _Failure:
    """Hand one seat its pending decision and start its clock; never waits.

    The clock starts when the request is handed to the session, not when it is written: a
    bot that reads slowly spends its own time, and no write can hold the game up.
    """
    view = build_view(game, seat.seat)
    kind = view.kind
    assert kind is not None  # only pending seats are asked
    clock = settings.clock
    allowance_ms = seat.allowance_ms
    session = seat.session
    try:
        request_id, future = session.open_request(seat.game_id)
    except SessionClosed as error:
        return _disconnected(error)
    second = kind is DecisionKind.REPLACE and not simultaneous and game.replace_cap is not None
    request = seat.request
    request.request_id = request_id
    request.kind = KIND_TO_PB[kind]
    seat.encoder.update(view)
    write_legal(request.legal, view, simultaneous=simultaneous, second=second)
    request.time_left_ms = allowance_ms
    request.time_bank_left_ms = int(seat.bank_ms)
    session.post(seat.message)
    started = time.monotonic()
    # A timer on the request's own future, rather than asyncio.wait_for, which would add a
    # future and two callbacks to every decision.
    timer = None
    deadline_ms = allowance_ms + seat.bank_ms + clock.grace_ms
    if allowance_ms:
        timer = asyncio.get_running_loop().call_later(deadline_ms / 1000, _expire, future)
    return _Asked(seat, kind, request_id, future, timer, started, seat.bank_ms, deadline_ms)


async def _answer(asked: _Asked | _Failure, settings: RefereeSettings) -> Action | _Failure:
    """Wait for the answer to a request; return the action (not yet validated by the engine)
    or the failure that stands in for it."""
    if isinstance(asked, _Failure):
        return asked
    seat, kind, request_id = asked.seat, asked.kind, asked.request_id
    allowance_ms = seat.allowance_ms
    try:
        reply, read_at = await asked.future
    except TimeoutError:
        now = time.monotonic()
        asked.stop(now)
        seat.ruling_lag = max(seat.ruling_lag, now - asked.started - asked.deadline_ms / 1000)
        seat.session.close_request(request_id, "timed out")
        return _timed_out(asked, settings)
    except SessionClosed as error:
        asked.stop(time.monotonic())
        return _disconnected(error)
    finally:
        if asked.timer is not None:
            asked.timer.cancel()
    # The clock stopped when the reader task read the Action, not when this task woke up:
    # the referee's own scheduling delay is never charged to the bot.
    asked.stop(read_at)
    seat.ruling_lag = max(seat.ruling_lag, time.monotonic() - read_at)
    elapsed_ms = asked.elapsed_ms
    if allowance_ms and elapsed_ms > asked.deadline_ms:
        # Read past the deadline (the timer ran late, the loop being stalled): one clock for
        # every answer, so this is a timeout as the record's ``verify`` (T1) would rule it.
        return _timed_out(asked, settings)
    if allowance_ms and elapsed_ms > allowance_ms:
        seat.bank_ms = max(0.0, seat.bank_ms - (elapsed_ms - allowance_ms))
    if reply.HasField("fallback"):
        # One line, bounded: the bot's text goes into records and pages (never trusted).
        asked.fallback = " ".join(reply.fallback.split())[:MAX_FALLBACK_CHARS] or "fallback"
    try:
        return action_from_pb(reply, kind)
    except MalformedAction as error:
        arrived = text_format.MessageToString(reply, as_one_line=True)[:200]
        return _Failure(
            Termination.FORFEIT_ILLEGAL,
            pb.ERROR_CODE_MALFORMED,
            str(error),
            f"malformed answer to a {kind.value} request (the reason went to that seat only)",
            failure=Failure.MALFORMED,
            refused=Refused(
                Failure.MALFORMED,
                str(error),
                note=f"could not be decoded as a {kind.value}; the message was: {arrived}",
            ),
        )


def _timed_out(asked: _Asked, settings: RefereeSettings) -> _Failure:
    """The failure of a request not answered by its deadline; the seat's bank is spent."""
    clock = settings.clock
    asked.seat.bank_ms = 0.0
    text = timeout_text(
        asked.request_id, asked.kind, asked.seat.allowance_ms, clock.bank_ms, asked.bank_left_ms
    )
    text += f" (waited {asked.elapsed_ms:.0f} ms)"
    return _Failure(Termination.FORFEIT_TIMEOUT, pb.ERROR_CODE_TIMEOUT, text, text)


def timeout_text(
    request_id: int, kind: DecisionKind, allowance_ms: int, bank_ms: int, bank_left_ms: float
) -> str:
    """What a timed-out seat had: its allowance, and what was left of its bank when asked
    (the request's ``time_bank_left_ms``), not the bank it started the game with."""
    text = f"no answer to request {request_id} ({kind.value}) within {allowance_ms} ms"
    if bank_ms:
        text += f" plus the {int(bank_left_ms)} ms left of its {bank_ms} ms bank"
    return text


def _disconnected(error: SessionClosed) -> _Failure:
    text = str(error)  # names the bot and why the session ended: no cards in it
    return _Failure(
        Termination.FORFEIT_DISCONNECT,
        pb.ERROR_CODE_UNSPECIFIED,
        text,
        text,
        failure=Failure.DISCONNECT,
    )


def _expire(future: asyncio.Future[tuple[pb.Action, float]]) -> None:
    """Time a request out at its deadline, unless it was answered first.

    There is one clock (docs/protocol.md, "Time"): an answer counts when it is read by the
    deadline, allowance + bank left + grace.  A timer that runs late (the referee's loop was
    stalled) gives no extra time: ``_answer`` rules an answer read past the deadline a
    timeout too, so every accepted answer's recorded ``ms`` fits the clock ``verify``
    re-runs.  The grace is what absorbs the referee's own jitter.
    """
    if not future.done():
        future.set_exception(TimeoutError())


def _send_error(seat: _Seat, failure: _Failure, forfeits: bool) -> None:
    """Tell a seat its decision failed (TIMEOUT, ILLEGAL_ACTION, MALFORMED) and what it cost."""
    seat.session.post(
        pb.RefereeMessage(
            error=pb.Error(
                game_id=seat.game_id,
                request_id=seat.request.request_id,  # the seat's latest request
                code=failure.code,
                rule_id=failure.rule,
                message=failure.message,
                outcome=pb.ERROR_OUTCOME_FORFEIT if forfeits else pb.ERROR_OUTCOME_DEFAULT_ACTION,
            )
        )
    )


def _send_game_end(game: Game, seats: list[_Seat], outcome: Outcome, details: list[str]) -> None:
    board = board_to_pb(game.ruleset, game.tacocat, game.covered)
    past = [round_result_to_pb(r) for r in game.round_results]
    for seat in seats:
        if outcome.winner is None:
            result = pb.GAME_RESULT_DRAW
        else:
            result = pb.GAME_RESULT_WIN if outcome.winner == seat.seat else pb.GAME_RESULT_LOSS
        seat.session.end_game(seat.game_id)
        last_round = seat.encoder.events(build_view(game, seat.seat))
        seat.session.post(
            pb.RefereeMessage(
                game_end=pb.GameEnd(
                    game_id=seat.game_id,
                    result=result,
                    winner_seat=outcome.winner,
                    reason=TERMINATION_TO_PB[outcome.termination],
                    detail=details[seat.seat],
                    rounds=game.round,
                    board=board,
                    last_round_events=last_round,
                    past_rounds=past,
                    seat=seat.seat,
                )
            )
        )
