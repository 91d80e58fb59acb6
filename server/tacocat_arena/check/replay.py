"""``tacocat-arena replay GAME --bot COMMAND``: a recorded game's decisions asked again of a bot.

The bot starts as ``run`` starts it (``check.launched``: the same launcher, folder rule,
sandbox and limits) and connects to the check's scripted referee (``check.link``); it is
sent the game's GameStart, then, for every decision its seat took in the record, the very
DecisionRequest the referee sent (``ScriptedGame.request_message``: the one view builder and
the one wire mapping, at the recorded position), and at the end the game's real GameEnd.
Each answer is judged by the engine at that position and compared with the record: the same
action, another legal one, a fallback (the bot's code raised and its SDK played a default),
an illegal or malformed answer, no answer in time, or a closed stream (its process died).
So a crash on the ladder is reproduced with one command, and a new build is tried on the
game its last one lost.  The game never leaves the record: the bot's answers are judged,
never played on, so every request is the recorded one.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tacocat.v1 import arena_pb2 as pb
from tacocat_arena.check.launched import LaunchError, launched_bot
from tacocat_arena.check.link import BotGone, BotLink, NoAnswer
from tacocat_arena.check.script import GRACE_MS, ScriptedGame
from tacocat_arena.engine import Action, ActionError, Replace
from tacocat_arena.engine.record import replay
from tacocat_arena.engine.types import Forfeit, Seat
from tacocat_arena.launch.sandbox import Limits, SandboxMode
from tacocat_arena.launch.spec import BotSpec
from tacocat_arena.play.decisions import Answered, Decision, seat_decisions
from tacocat_arena.protocol.wire import MalformedAction, action_from_pb, describe

#: The allowance per decision when neither the command line nor the record gives one.
DEFAULT_ALLOWANCE_MS = 2000


class Verdict(enum.Enum):
    """How the bot answered one recorded request."""

    SAME = "same"
    DIFFERENT = "different"
    FALLBACK = "fallback"
    ILLEGAL = "illegal"
    MALFORMED = "malformed"
    TIMEOUT = "timeout"
    GONE = "gone"
    NOT_ASKED = "not asked"

    @property
    def failed(self) -> bool:
        """The bot failed the request (what ``replay --bot`` exits 1 for)."""
        return self not in (Verdict.SAME, Verdict.DIFFERENT, Verdict.NOT_ASKED)


@dataclass(frozen=True)
class Replayed:
    """One recorded decision, asked again: what the record holds and what came back."""

    index: int
    round: int
    kind: str
    recorded: str
    answered: Answered
    verdict: Verdict
    answer: str = ""
    detail: str = ""
    ms: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The decision as JSON-ready values."""
        data = dataclasses.asdict(self)
        data["answered"] = self.answered.value
        data["verdict"] = self.verdict.value
        data["ms"] = None if self.ms is None else round(self.ms, 1)
        return data


@dataclass
class ReplayReport:
    """Every decision of one seat of one game, asked of one bot."""

    command: str
    game_id: str
    seat: Seat
    decisions: list[Replayed] = field(default_factory=list)
    allowance_ms: int = DEFAULT_ALLOWANCE_MS
    sandbox: SandboxMode = SandboxMode.NONE
    #: Why the bot never got a request (it did not start, connect or pass the handshake).
    not_connected: str = ""
    exit_code: int | None = None
    log_tail: str = ""
    notices: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """The bot failed a request, or never connected."""
        return bool(self.not_connected) or any(d.verdict.failed for d in self.decisions)

    def count(self, verdict: Verdict) -> int:
        """How many decisions came out as ``verdict``."""
        return sum(d.verdict is verdict for d in self.decisions)

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-ready values."""
        return {
            "command": self.command,
            "game": self.game_id,
            "seat": self.seat,
            "allowance_ms": self.allowance_ms,
            "sandbox": str(self.sandbox),
            "failed": self.failed,
            "not_connected": self.not_connected,
            "counts": {v.value: self.count(v) for v in Verdict},
            "decisions": [d.to_json() for d in self.decisions],
            "exit_code": self.exit_code,
            "log_tail": self.log_tail,
        }


def allowance_of(record: Mapping[str, Any], given_ms: int | None) -> int:
    """The allowance to give each request: the one asked for, or the record's clock."""
    if given_ms is not None:
        return given_ms
    referee = record.get("referee")
    if isinstance(referee, Mapping) and isinstance(referee.get("decision_ms"), int):
        return max(1, referee["decision_ms"])
    return DEFAULT_ALLOWANCE_MS


def recorded_text(decision: Decision) -> str:
    """The record's answer in words: the action, and how it came to be played."""
    played = decision.played
    if isinstance(played, Forfeit):
        return f"forfeit ({played.termination.value}: {decision.detail})"
    text = str(played)
    entry = decision.entry or {}
    if decision.answered is Answered.SUBSTITUTED:
        sent = (entry.get("refused") or {}).get("sent")
        said = f", the bot sent {sent}" if sent else ""
        return f"{text} (the referee's default after {entry.get('substituted')}{said})"
    if decision.answered is Answered.FALLBACK:
        return f"{text} (a fallback: {decision.detail})"
    return text


def is_same(answer: Action, decision: Decision) -> bool:
    """The answer is the action the record holds for the decision (a replace by its cards,
    in any order); a substituted or forfeited decision is matched by nothing but a fallback
    of the same action."""
    if decision.answered in (Answered.FORFEIT, Answered.SUBSTITUTED):
        return False
    played = decision.played
    if isinstance(answer, Replace) and isinstance(played, Replace):
        return sorted(answer.cards) == sorted(played.cards)
    return answer == played


async def replay_bot(
    record: Mapping[str, Any],
    command: str,
    *,
    seat: Seat,
    game_id: str = "replay",
    names: tuple[str, str] = ("seat 0", "seat 1"),
    allowance_ms: int | None = None,
    sandbox: SandboxMode = SandboxMode.NONE,
    limits: Limits | None = None,
    cwd: Path | None = None,
    log_path: Path | None = None,
    connect_timeout_s: float = 20.0,
    env: tuple[tuple[str, str], ...] = (),
    progress: Callable[[Replayed], None] | None = None,
) -> ReplayReport:
    """Start ``command`` and ask it every decision ``seat`` took in ``record``
    (RecordError if the record does not re-verify, LaunchError if the bot cannot start)."""
    decisions = seat_decisions(record, seat)
    final = replay(record)
    report = ReplayReport(command, game_id, seat, allowance_ms=allowance_of(record, allowance_ms))
    spec = dataclasses.replace(BotSpec.checked("replay", command), env=env)

    def placed(mode: SandboxMode, _limits: Limits, _log: Path) -> None:
        report.sandbox = mode

    def add(replayed: Replayed) -> None:
        report.decisions.append(replayed)
        if progress is not None:
            progress(replayed)

    async with launched_bot(
        spec,
        cwd=cwd,
        sandbox=sandbox,
        limits=limits,
        log_path=log_path,
        notices=report.notices.append,
        on_placed=placed,
    ) as launched:
        connection = await launched.connection(connect_timeout_s)
        if isinstance(connection, str):
            report.not_connected = connection
        elif connection[1] is None:
            report.not_connected = f"the handshake failed: {connection[0].problem}"
        else:
            link = connection[1]
            scripted = ScriptedGame(
                link, game_id, final, seat, _no_opponent, allowance_ms=report.allowance_ms
            )
            await _ask_all(scripted, link, decisions, names, add)
            launched.servicer.finish()
            await launched.bot.ended(2.0)  # its last output copied into the log
        report.exit_code = launched.process.returncode
    report.log_tail = launched.final_tail
    return report


async def _ask_all(
    scripted: ScriptedGame,
    link: BotLink,
    decisions: list[Decision],
    names: tuple[str, str],
    add: Callable[[Replayed], None],
) -> None:
    """GameStart, each decision's request in turn, then the game's GameEnd; after the stream
    closes, the decisions left are not asked."""
    final, seat = scripted.game, scripted.seat
    start = scripted.start_message()
    start.game_start.opponent_name = names[1 - seat]
    start.game_start.match_info = f"tacocat-arena replay --bot: game {scripted.game_id}"
    try:
        await link.send(start)
    except BotGone:
        pass
    for decision in decisions:
        if link.gone.is_set():
            add(_replayed(decision, Verdict.NOT_ASKED, detail="the bot's stream had closed"))
            continue
        add(await _ask_one(scripted, link, decision))
    if not link.gone.is_set():
        scripted.game = final
        try:
            await scripted.finish()
            await link.send(
                pb.RefereeMessage(
                    session_end=pb.SessionEnd(
                        reason=pb.SESSION_END_REASON_TOURNAMENT_OVER,
                        message="tacocat-arena replay --bot is done",
                    )
                )
            )
        except BotGone:
            pass


async def _ask_one(scripted: ScriptedGame, link: BotLink, decision: Decision) -> Replayed:
    scripted.game = decision.game
    message, request_id, future = scripted.request_message()
    try:
        await link.send(message)
        link.mark_sent(request_id)
        answer = await link.answer(future, (scripted.allowance_ms + GRACE_MS) / 1000)
    except NoAnswer:
        link.close_request(request_id)
        return _replayed(
            decision,
            Verdict.TIMEOUT,
            detail=f"no answer within {scripted.allowance_ms} ms (+{GRACE_MS} ms grace)",
        )
    except BotGone:
        return _replayed(decision, Verdict.GONE, detail="the bot's stream closed on this request")
    try:
        action = action_from_pb(answer.action, decision.kind)
    except MalformedAction as error:
        return _replayed(
            decision,
            Verdict.MALFORMED,
            answer=describe(answer.action),
            detail=str(error),
            ms=answer.elapsed_ms,
        )
    if answer.action.HasField("fallback"):  # its code raised; its SDK covered for it
        return _replayed(
            decision,
            Verdict.FALLBACK,
            answer=str(action),
            detail=answer.action.fallback[:500],
            ms=answer.elapsed_ms,
        )
    try:
        decision.game.copy().apply(decision.seat, action)
    except ActionError as error:
        return _replayed(
            decision, Verdict.ILLEGAL, answer=str(action), detail=str(error), ms=answer.elapsed_ms
        )
    verdict = Verdict.SAME if is_same(action, decision) else Verdict.DIFFERENT
    return _replayed(decision, verdict, answer=str(action), ms=answer.elapsed_ms)


def _replayed(
    decision: Decision,
    verdict: Verdict,
    *,
    answer: str = "",
    detail: str = "",
    ms: float | None = None,
) -> Replayed:
    return Replayed(
        index=decision.index,
        round=decision.round,
        kind=decision.kind.value,
        recorded=recorded_text(decision),
        answered=decision.answered,
        verdict=verdict,
        answer=answer,
        detail=detail,
        ms=ms,
    )


def _no_opponent(*_: object) -> Action:
    raise RuntimeError("replay --bot plays no opponent: the record holds its moves")


__all__ = [
    "DEFAULT_ALLOWANCE_MS",
    "LaunchError",
    "ReplayReport",
    "Replayed",
    "Verdict",
    "allowance_of",
    "replay_bot",
]
