"""Scripted games: the engine's game, the bot in one seat, the check's policy in the other.

A scripted game is played like a refereed one (the bot is asked what the engine says is
pending, with the view and legal options the referee would send) but the check chooses the
position, the opponent's moves and when the game ends, and judges every answer with the
engine: an illegal answer fails the check with the rule the engine names.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from tacocat.v1 import arena_pb2 as pb
from tacocat_arena.check.link import CHECK_LOOK, Answer, BotGone, BotLink, Look, NoAnswer
from tacocat_arena.engine import (
    Action,
    ActionError,
    DecisionKind,
    Game,
    Seat,
    SeatView,
    build_view,
)
from tacocat_arena.protocol.wire import (
    KIND_TO_PB,
    TERMINATION_TO_PB,
    MalformedAction,
    ViewEncoder,
    action_from_pb,
    board_to_pb,
    describe,
    round_result_to_pb,
    ruleset_to_pb,
    write_legal,
)

#: How long past a request's allowance the check still waits for its answer.
GRACE_MS = 500
#: How long the check waits for an answer when the clock has no limit (a decision allowance
#: of 0, as ``ClockSettings`` says it): the check's own bound, so that a bot that never
#: answers fails its check instead of holding the gate; no decision is judged by its time.
NO_LIMIT_WAIT_S = 30.0


def answer_wait_s(allowance_ms: int) -> float:
    """How long the check waits for one answer: the allowance and the grace, or
    ``NO_LIMIT_WAIT_S`` under a clock with no limit."""
    return (allowance_ms + GRACE_MS) / 1000 if allowance_ms else NO_LIMIT_WAIT_S


def within(allowance_ms: int) -> str:
    """The wait of ``answer_wait_s`` in words, for a failure's "expected"."""
    if allowance_ms:
        return f"within {allowance_ms} ms"
    return f"within {NO_LIMIT_WAIT_S:g} s (no limit on the clock; the check's own bound)"


#: The opponent's move: its view and, in a simultaneous decision, the bot's answer (which
#: the check may use; a real referee never would, but the check plays no one's game).
Opponent = Callable[[SeatView, Action | None], Action]


#: A request ready to send: the message, its request id, and the future of its answer.
Prepared = tuple[pb.RefereeMessage, int, "asyncio.Future[Answer]"]


class CheckFailed(Exception):
    """A check's expectation was not met; ``expected`` and ``got`` say how."""

    def __init__(self, expected: str, got: str) -> None:
        super().__init__(f"expected {expected}; got {got}")
        self.expected = expected
        self.got = got


class ScriptedGame:
    """One game of the check over the bot's stream."""

    def __init__(
        self,
        link: BotLink,
        game_id: str,
        game: Game,
        bot_seat: Seat,
        opponent: Opponent,
        *,
        allowance_ms: int,
        failure_policy: pb.FailurePolicy = pb.FAILURE_POLICY_FORFEIT,
        look: Look = CHECK_LOOK,
        match_info: str | None = None,
    ) -> None:
        self.link = link
        self.game_id = game_id
        self.game = game
        self.seat = bot_seat
        self.opponent = opponent
        self.allowance_ms = allowance_ms
        self.failure_policy = failure_policy
        self.look = look
        self.match_info = match_info or f"tacocat-arena check: {game_id}"
        self.asked: list[DecisionKind] = []
        self.last_request_id = 0
        self.ended = False

    # -- messages -----------------------------------------------------------------------------
    def start_message(self) -> pb.RefereeMessage:
        """The GameStart of this game for the bot."""
        return pb.RefereeMessage(
            game_start=pb.GameStart(
                game_id=self.game_id,
                seat=self.seat,
                opponent_name=self.look.opponent_name,
                ruleset=ruleset_to_pb(self.game.ruleset),
                decision_timeout_ms=self.allowance_ms,
                time_bank_ms=self.look.bank_ms,
                failure_policy=self.failure_policy,
                match_info=self.match_info,
            )
        )

    def request_message(self) -> Prepared:
        """The bot's pending DecisionRequest (built as the referee builds it), its request
        id and the future its answer will resolve."""
        game, seat = self.game, self.seat
        kind = game.decision_for(seat)
        if kind is None:
            raise RuntimeError(f"{self.game_id}: the bot's seat has no pending decision")
        request_id, future = self.link.new_request(self.game_id)
        request = decision_request(
            game, seat, self.game_id, request_id, self.allowance_ms, self.look.bank_ms
        )
        self.asked.append(kind)
        self.last_request_id = request_id
        return pb.RefereeMessage(decision_request=request), request_id, future

    def end_message(
        self, reason: pb.EndReason, result: pb.GameResult, winner: Seat | None, detail: str
    ) -> pb.RefereeMessage:
        """A GameEnd for the bot, with the game's board and history as they stand."""
        game = self.game
        end = pb.GameEnd(
            game_id=self.game_id,
            result=result,
            reason=reason,
            detail=detail,
            rounds=game.round,
            board=board_to_pb(game.ruleset, game.tacocat, game.covered),
            last_round_events=ViewEncoder(self.seat).events(build_view(game, self.seat)),
            past_rounds=[round_result_to_pb(r) for r in game.round_results],
            seat=self.seat,
        )
        if winner is not None:
            end.winner_seat = winner
        return pb.RefereeMessage(game_end=end)

    # -- play ---------------------------------------------------------------------------------
    async def start(self) -> None:
        """Send the GameStart."""
        await self.link.send(self.start_message())

    async def send_end(self, message: pb.RefereeMessage) -> None:
        """Send this game's GameEnd (once) and close its open request, if any."""
        self.ended = True
        self.link.close_request(self.last_request_id)
        await self.link.send(message)

    async def ask(self, prepared: Prepared | None = None) -> Action:
        """Ask the bot its pending decision; return its answer, decoded but not applied.
        ``prepared`` is a request already sent (e.g. in a batch)."""
        if prepared is None:
            message, request_id, future = self.request_message()
            await self.link.send(message)
            self.link.mark_sent(request_id)
        else:
            _, request_id, future = prepared
        kind = self.asked[-1]
        try:
            answer = await self.link.answer(future, answer_wait_s(self.allowance_ms))
        except NoAnswer:
            self.link.close_request(request_id)
            strays = self.link.notes.stray.get(self.game_id, []) + self.link.notes.stray.get("", [])
            got = "no answer" + (f" (it sent: {'; '.join(strays[-3:])})" if strays else "")
            raise CheckFailed(
                f"an Action for request {request_id} ({kind.value} in game {self.game_id}) "
                + within(self.allowance_ms),
                got,
            ) from None
        if answer.action.HasField("fallback"):
            # Legal, but not the bot's decision: its code failed and its SDK covered for it.
            raise CheckFailed(
                f"the bot's own {kind.value} decision for request {request_id}",
                f"a fallback move, because its code failed: {answer.action.fallback[:200]}",
            )
        try:
            return action_from_pb(answer.action, kind)
        except MalformedAction as error:
            raise CheckFailed(
                f"a well-formed {kind.value} Action for request {request_id}",
                f"{describe(answer.action)}: {error}",
            ) from None

    def apply(self, action: Action) -> None:
        """Apply the bot's action: an illegal one fails the check with the engine's rule."""
        kind = self.asked[-1]
        try:
            self.game.apply(self.seat, action)
        except ActionError as error:
            raise CheckFailed(
                f"a legal {kind.value} (one of the request's LegalOptions)", f"{action}: {error}"
            ) from None

    async def step(self) -> None:
        """One decision point: the pending seat(s) answer and the answers are applied."""
        game, seat = self.game, self.seat
        pending = game.pending
        other = 1 - seat
        their_view = build_view(game, other) if other in pending else None
        ours: Action | None = None
        if seat in pending:
            ours = await self.ask()
            self.apply(ours)
        if their_view is not None:
            game.apply(other, self.opponent(their_view, ours))

    async def play_until(self, done: Callable[[ScriptedGame], bool], most: int = 500) -> None:
        """Step until ``done`` says so or the game ends."""
        for _ in range(most):
            if self.game.outcome is not None or done(self):
                return
            await self.step()

    async def play_out(self) -> None:
        """Play to the end and send the game's real GameEnd."""
        await self.play_until(lambda _: False, most=10_000)
        if self.game.outcome is None:
            raise RuntimeError(f"{self.game_id} did not end")
        await self.finish()

    async def finish(self) -> None:
        """Send the real GameEnd of a game that is over, or abort one that is not."""
        if self.game.outcome is None:
            await self.abort()
            return
        outcome = self.game.outcome
        if outcome.winner is None:
            result = pb.GAME_RESULT_DRAW
        else:
            result = pb.GAME_RESULT_WIN if outcome.winner == self.seat else pb.GAME_RESULT_LOSS
        await self.send_end(
            self.end_message(
                TERMINATION_TO_PB[outcome.termination], result, outcome.winner, outcome_text(self)
            )
        )

    async def abort(self, detail: str = "conformance check: position played; no contest") -> None:
        """End the game without a result (the check has seen what it wanted)."""
        await self.send_end(
            self.end_message(pb.END_REASON_ABORTED, pb.GAME_RESULT_NO_CONTEST, None, detail)
        )


def decision_request(
    game: Game, seat: Seat, game_id: str, request_id: int, allowance_ms: int, bank_ms: int = 0
) -> pb.DecisionRequest:
    """``seat``'s pending DecisionRequest in ``game``, built as the referee builds it (the one
    view builder, the one wire mapping, the legal options with their simultaneous and second
    flags), with ``allowance_ms`` and ``bank_ms`` as its clock."""
    view = build_view(game, seat)
    kind = view.kind
    if kind is None:
        raise ValueError(f"{game_id}: seat {seat} has no pending decision")
    simultaneous = len(game.pending) == 2
    second = kind is DecisionKind.REPLACE and not simultaneous and game.replace_cap is not None
    request = pb.DecisionRequest(
        game_id=game_id,
        request_id=request_id,
        kind=KIND_TO_PB[kind],
        time_left_ms=allowance_ms,
        time_bank_left_ms=bank_ms,
    )
    ViewEncoder(seat, request.view).update(view)
    write_legal(request.legal, view, simultaneous=simultaneous, second=second)
    return request


def outcome_text(scripted: ScriptedGame) -> str:
    """The GameEnd detail of a game played to its end."""
    outcome = scripted.game.outcome
    assert outcome is not None
    return f"{outcome.termination.value} after {scripted.game.round} rounds"


__all__ = ["BotGone", "CheckFailed", "Opponent", "ScriptedGame", "decision_request"]
