"""Connecting a bot to a referee: the stream, the handshake and concurrent games, hidden.

``run`` opens one gRPC stream, says Hello, then answers every DecisionRequest by calling the
bot.  Decisions are made one at a time in arrival order, on the calling thread, so bot code
needs no locking even when the referee runs many games at once.  It accepts batches (several
referee messages in one, which the referee sends only under load) and answers a batch's
requests in one message, which saves most of the transport's per-message cost.  A thread
reads the stream meanwhile (``inbox.Inbox``), so that a request no answer can count for any
more (the bot fell behind its clock and the referee moved on) is skipped, not computed.
"""

from __future__ import annotations

import logging
import os
import queue
import random
import sys
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field

import grpc

from tacocat.v1 import arena_pb2 as pb
from tacocat.v1 import arena_pb2_grpc
from tacocat_arena.engine import Ruleset
from tacocat_arena.protocol.wire import (
    KIND_FROM_PB,
    PROTOCOL_VERSION,
    action_to_pb,
    default_action,
    ruleset_from_pb,
    view_from_pb,
)
from tacocat_bot.bot import Bot
from tacocat_bot.inbox import Inbox

log = logging.getLogger("tacocat_bot")
DEFAULT_ADDRESS = "127.0.0.1:50051"
_RESULTS = {pb.GAME_RESULT_WIN: "win", pb.GAME_RESULT_LOSS: "loss", pb.GAME_RESULT_DRAW: "draw"}


#: Set to 1 (or pass ``run(..., strict=True)``) to make an exception in a decision method
#: end the bot instead of being replaced by a default move: for debugging.
STRICT_ENV = "TACOCAT_BOT_STRICT"

#: Set to 0 (or pass ``run(..., reconnect=False)``) to make a bot end when ``serve`` shuts
#: down or its connection is lost, instead of reconnecting; 1 forces reconnecting.  Every
#: bot a tacocat-arena launcher starts (run, play, check, the arena's hosted bots) gets 0:
#: its launcher restarts it when it must.
RECONNECT_ENV = "TACOCAT_BOT_RECONNECT"
#: How long a bot keeps trying to reconnect after losing its session, in seconds.
RECONNECT_FOR_S = 600.0
#: The waits between attempts: doubling from the first to the last, each with up to 20%
#: added at random, so that a whole class does not knock at the same instant.
BACKOFF_S = (1.0, 30.0)


class SessionError(RuntimeError):
    """The referee refused or ended the session abnormally: ``status`` is the gRPC status
    name (e.g. ``UNAUTHENTICATED``) and ``details`` the referee's reason; ``str()`` is
    ``STATUS: details``, the line docs/protocol.md asks a bot to print."""

    def __init__(self, status: str, details: str, address: str) -> None:
        super().__init__(f"{status}: {details}")
        self.status = status
        self.details = details
        self.address = address


@dataclass
class SessionSummary:
    """What happened in one session, for the bot author's own logs."""

    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    errors: list[str] = field(default_factory=list)
    #: Decisions whose method raised and were replaced by a default move.
    bot_errors: int = 0
    #: Requests the bot was not asked about because no answer could count any more: the
    #: bot fell behind its clock and the referee had already moved on (see ``run``).
    skipped: int = 0
    #: Requests left unanswered because they matched no game of the session (no GameStart
    #: came for it, or its GameEnd had) or their view could not be read: the referee's
    #: mistake, not the bot's; the session goes on (the referee times them out).
    unmatched: int = 0
    #: The last session's id (Welcome.session_id) and how it ended: the SessionEnd reason
    #: in lower case (``tournament_over``, ``server_shutdown``, ``removed``), "" if lost.
    session_id: str = ""
    end_reason: str = ""
    #: How many sessions the bot had (more than one after reconnecting).
    sessions: int = 0


@dataclass(frozen=True)
class _GameInfo:
    """What a game's later requests are read with: its ruleset and the bot's seat."""

    ruleset: Ruleset
    seat: int


def run(
    bot: Bot,
    address: str | None = None,
    token: str | None = None,
    name: str | None = None,
    *,
    max_concurrent_games: int = 0,
    strict: bool | None = None,
    exit_on_error: bool = True,
    reconnect: bool | None = None,
) -> SessionSummary:
    """Connect ``bot`` to a referee and play until the session ends.

    Address, token and name default to TACOCAT_ARENA_ADDRESS, TACOCAT_ARENA_TOKEN and
    TACOCAT_ARENA_BOT (then to 127.0.0.1:50051, no token and ``bot.name``).  An address is
    ``HOST:PORT`` or, as in the arena's sandbox, a Unix socket ``unix:/PATH`` (gRPC's own
    address syntax, passed through as it is).

    An exception in a decision method is reported on stderr (the first of each game with
    its traceback) and the SDK plays a default legal action instead, so one bug does not
    lose every game.  ``strict`` (default: TACOCAT_BOT_STRICT=1 in the environment) lets
    the exception end ``run`` instead, for debugging.

    A bot that falls behind its clock (a decision took longer than its time, so the referee
    timed it out and went on) is not asked about requests whose answer can no longer count:
    one the referee has timed out, one whose game has a newer request or is over, one whose
    ``time_left_ms`` and time bank have run out since it was read.  The first such skip is
    told on stderr, the others counted (``SessionSummary.skipped``): one slow move costs
    its own timeouts, not a run of them.

    When the referee refuses or breaks the session, ``run`` prints ``STATUS: message`` to
    stderr and exits with status 1, as docs/protocol.md asks of every bot; with
    ``exit_on_error=False`` it raises ``SessionError`` instead.

    It says on stderr when it connects (address, name, session id), when the session ends
    (the reason) and when the connection is lost.  With ``reconnect`` (default:
    ``reconnects_by_default``: on for a ``serve`` arena's TCP address, off for bots that
    tacocat-arena starts) it reconnects, waiting 1 s, 2 s, 4 s... up to 30 s between
    attempts, after SERVER_SHUTDOWN or a lost stream, for up to RECONNECT_FOR_S: an arena
    restart needs nobody to restart their bot.  The summary counts every session's games.
    """
    if strict is None:
        strict = os.environ.get(STRICT_ENV, "") not in ("", "0")
    address = address or os.environ.get("TACOCAT_ARENA_ADDRESS") or DEFAULT_ADDRESS
    if reconnect is None:
        reconnect = reconnects_by_default(address)
    summary = SessionSummary()
    lost_at: float | None = None
    attempt = 0
    while True:
        try:
            _play(bot, address, token, name, max_concurrent_games, strict, summary)
            if not (reconnect and summary.end_reason == "server_shutdown"):
                return summary
            why = "the server is shutting down"
        except SessionError as error:
            if not (reconnect and summary.sessions and error.status == "UNAVAILABLE"):
                if not exit_on_error:
                    raise
                print(error, file=sys.stderr)
                raise SystemExit(1) from None
            why = f"lost the connection to {address} ({error})"
            if lost_at is not None and time.monotonic() - lost_at > RECONNECT_FOR_S:
                print(
                    f"tacocat_bot: gave up reconnecting to {address} after "
                    f"{RECONNECT_FOR_S:g} s: {error}",
                    file=sys.stderr,
                    flush=True,
                )
                if not exit_on_error:
                    raise
                raise SystemExit(1) from None
        attempt = 0 if summary.session_id else attempt + 1  # a new session resets the backoff
        if summary.session_id:
            lost_at = time.monotonic()
        summary.session_id = ""
        wait = min(BACKOFF_S[0] * 2**attempt, BACKOFF_S[1]) * (1 + random.random() / 5)
        print(
            f"tacocat_bot: {why}; reconnecting in {wait:.1f} s "
            f"(set {RECONNECT_ENV}=0 to stop instead)",
            file=sys.stderr,
            flush=True,
        )
        time.sleep(wait)


def reconnects_by_default(address: str) -> bool:
    """Whether a bot reconnects after losing its session: yes for a TCP address (a
    ``serve`` arena: a student's bot outlives the arena's restart), no for a ``unix:``
    socket (a sandbox: its launcher restarts it); RECONNECT_ENV (0/1) decides first."""
    setting = os.environ.get(RECONNECT_ENV, "")
    if setting:
        return setting not in ("0", "false", "no")
    return not address.startswith("unix:")


def _play(
    bot: Bot,
    address: str,
    token: str | None,
    name: str | None,
    max_concurrent_games: int,
    strict: bool,
    summary: SessionSummary,
) -> None:
    """One session, until it ends (``summary.end_reason`` says how); SessionError if the
    referee refuses it or the stream breaks."""
    token = token if token is not None else os.environ.get("TACOCAT_ARENA_TOKEN", "")
    name = name or os.environ.get("TACOCAT_ARENA_BOT") or bot.name
    outbox: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()
    outbox.put(
        pb.BotMessage(
            hello=pb.Hello(
                protocol_version=PROTOCOL_VERSION,
                bot_name=name,
                token=token,
                client_info=f"tacocat_bot (python {sys.version.split()[0]})",
                max_concurrent_games=max_concurrent_games,
                accept_batches=True,
            )
        )
    )

    def requests() -> Iterator[pb.BotMessage]:
        while (message := outbox.get()) is not None:
            yield message

    summary.end_reason = ""
    games: dict[str, _GameInfo] = {}
    policy = _BotErrors(type(bot).__name__, strict, summary)
    skips = _Skips(summary)
    with _channel(address) as channel:
        _wait_for_referee(channel, address)
        stream = arena_pb2_grpc.ArenaStub(channel).Play(requests(), wait_for_ready=True)
        inbox = Inbox(stream)
        try:
            answers: list[pb.Action] = []
            while (arrival := inbox.next()) is not None:
                item = arrival.message
                if item.HasField("decision_request"):
                    request = item.decision_request
                    why = inbox.lapsed(request, arrival.read_at)
                    if why:
                        skips.skipped(request, why)
                    elif (answer := _decide(bot, request, games, policy, summary)) is not None:
                        answers.append(answer)
                ended = _handle(bot, item, games, summary, policy)
                if item.HasField("welcome"):
                    summary.sessions += 1
                    _say(f"connected to {address} as {name}, session {summary.session_id}")
                elif item.HasField("session_end"):
                    end = item.session_end
                    _say(
                        f"session {summary.session_id} ended: {summary.end_reason}"
                        + (f" ({end.message})" if end.message else "")
                    )
                # The answers to one message of the stream (a batch, sent because the Hello
                # accepts them) go back together in one message.
                if arrival.closes_batch or ended:
                    if len(answers) == 1:
                        outbox.put(pb.BotMessage(action=answers[0]))
                    elif answers:
                        outbox.put(pb.BotMessage(actions=pb.ActionBatch(actions=answers)))
                    answers = []
                if ended:
                    break
        except grpc.RpcError as error:
            status = error.code() if hasattr(error, "code") else None
            details = error.details() if hasattr(error, "details") else str(error)
            if status is grpc.StatusCode.CANCELLED and summary.session_id:
                return
            if summary.session_id:
                _say(f"lost the connection to {address}, session {summary.session_id}")
            raise SessionError(str(getattr(status, "name", status)), details, address) from None
        finally:
            outbox.put(None)
            skips.session_over(summary.session_id)
    inbox.close()
    if not summary.session_id:
        # Never a silent exit 0: a stream that ends before its Welcome is no session at all
        # (a launcher would see a bot that "exited with code 0 before connecting").
        raise SessionError(
            "UNAVAILABLE",
            f"the stream to {address} ended before the referee's Welcome (no session)",
            address,
        )


def _say(text: str) -> None:
    """One line of what the session does, on stderr (the bot's log, under a launcher)."""
    print(f"tacocat_bot: {text}", file=sys.stderr, flush=True)


#: How long ``run`` waits for a referee to listen at its address before it gives up; the
#: first seconds silently (a referee started at the same time), then saying what it waits for.
CONNECT_TIMEOUT_S = 30.0
_QUIET_WAIT_S = 3.0


def _wait_for_referee(channel: grpc.Channel, address: str) -> None:
    """Return once ``channel`` is connected; SessionError(UNAVAILABLE) when no referee
    answers within CONNECT_TIMEOUT_S.  Without it, a bot started by hand with no referee
    running would wait for ever, printing nothing."""
    ready = grpc.channel_ready_future(channel)
    try:
        ready.result(timeout=_QUIET_WAIT_S)
        return
    except grpc.FutureTimeoutError:
        print(
            f"tacocat_bot: waiting for a referee at {address} (TACOCAT_ARENA_ADDRESS): start "
            "one with `tacocat-arena serve`, or let `tacocat-arena run`/`play` start this bot",
            file=sys.stderr,
            flush=True,
        )
    try:
        ready.result(timeout=CONNECT_TIMEOUT_S - _QUIET_WAIT_S)
    except grpc.FutureTimeoutError:
        ready.cancel()
        raise SessionError(
            "UNAVAILABLE",
            f"no referee answered at {address} within {CONNECT_TIMEOUT_S:g} s",
            address,
        ) from None


def _channel(address: str) -> grpc.Channel:
    """A channel to the referee: TLS when TACOCAT_ARENA_TLS_CA names the server's certificate
    (or its CA) as a PEM file, or TACOCAT_ARENA_TLS=1 trusts the system's roots; else plain."""
    ca_file = os.environ.get("TACOCAT_ARENA_TLS_CA")
    if ca_file:
        with open(ca_file, "rb") as handle:
            credentials = grpc.ssl_channel_credentials(root_certificates=handle.read())
        return grpc.secure_channel(address, credentials)
    if os.environ.get("TACOCAT_ARENA_TLS", "") in ("1", "true", "yes"):
        return grpc.secure_channel(address, grpc.ssl_channel_credentials())
    return grpc.insecure_channel(address)


def _handle(
    bot: Bot,
    message: pb.RefereeMessage,
    games: dict[str, _GameInfo],
    summary: SessionSummary,
    policy: _BotErrors,
) -> bool:
    """Act on one referee message other than a DecisionRequest (``_play`` decides those);
    True when the session ends."""
    case = message.WhichOneof("message")
    if case == "game_start":
        start = message.game_start
        games[start.game_id] = _GameInfo(ruleset_from_pb(start.ruleset), start.seat)
        bot.on_game_start(start.game_id, start.seat, start.opponent_name)
    elif case == "game_end":
        _end_game(bot, message.game_end, games, summary)
        policy.game_over(message.game_end.game_id)
    elif case == "error":
        error = message.error
        text = (
            f"referee error ({pb.ErrorCode.Name(error.code)}) in game "
            f"{error.game_id or '-'}: {error.message}"
        )
        summary.errors.append(text)
        log.warning("%s", text)
    elif case == "welcome":
        summary.session_id = message.welcome.session_id
    elif case == "session_end":
        reason = pb.SessionEndReason.Name(message.session_end.reason)
        summary.end_reason = reason.removeprefix("SESSION_END_REASON_").lower()
        return True
    return False


class _Skips:
    """Requests skipped because no answer could count (``Inbox.lapsed``): the first is told
    on stderr with what it means, the others counted, and the count told when the session
    ends, so a bot that falls behind says so once instead of once a request."""

    def __init__(self, summary: SessionSummary) -> None:
        self.summary = summary
        self.count = 0

    def skipped(self, request: pb.DecisionRequest, why: str) -> None:
        self.summary.skipped += 1
        self.count += 1
        if self.count > 1:
            return
        _say(
            f"skipped request {request.request_id} of game {request.game_id}: {why}, so no "
            "answer could count. The bot is behind its clock (a decision took longer than its "
            "time); requests that can no longer count are skipped, so that it catches up, and "
            "counted, not shown"
        )

    def session_over(self, session_id: str) -> None:
        """Say how many requests this session skipped, if any."""
        if self.count:
            _say(
                f"session {session_id or '-'}: skipped {self.count} requests that could no "
                "longer count (the bot was behind its clock)"
            )


class _BotErrors:
    """What an exception in a decision method does: in strict mode it ends the bot; else it
    is reported on stderr, with its traceback the first time in a game and counted after
    that (a bug that fires every move would otherwise bury the log), and the game goes on
    with a default move."""

    def __init__(self, bot_class: str, strict: bool, summary: SessionSummary) -> None:
        self.bot_class = bot_class
        self.strict = strict
        self.summary = summary
        self.by_game: dict[str, int] = {}

    def replaced(self, game_id: str, kind: str, action: object) -> None:
        """Report a decision that raised (call from the ``except`` block) and was replaced."""
        self.summary.bot_errors += 1
        count = self.by_game[game_id] = self.by_game.get(game_id, 0) + 1
        if count > 1:
            return
        traceback.print_exc()
        print(
            f"tacocat_bot: {self.bot_class}.{kind}() raised in game {game_id}; played "
            f"{action} instead. Further errors in this game are counted, not shown; set "
            f"{STRICT_ENV}=1 (or run(bot, strict=True)) to stop at the first one.",
            file=sys.stderr,
            flush=True,
        )

    def game_over(self, game_id: str) -> None:
        """Say how many decisions of the finished game were replaced, if more than one."""
        count = self.by_game.pop(game_id, 0)
        if count > 1:
            print(
                f"tacocat_bot: game {game_id}: {count} decisions raised and were replaced by "
                "default moves",
                file=sys.stderr,
                flush=True,
            )


def _decide(
    bot: Bot,
    request: pb.DecisionRequest,
    games: dict[str, _GameInfo],
    policy: _BotErrors,
    summary: SessionSummary,
) -> pb.Action | None:
    """The bot's answer to ``request``; None (and a line on stderr) for a request that
    matches no game of this session or whose view cannot be read.  Such a request is the
    referee's mistake (a conformance check that played on after it ended a game, issue 37),
    and the bot's session must outlive it: raising here ended the bot, and the bot got the
    blame."""
    info = games.get(request.game_id)
    kind = KIND_FROM_PB.get(request.kind)
    if info is None or kind is None:
        why = "no GameStart of that game in this session, or its GameEnd came already"
        _unmatched(request, summary, why if info is None else "an unknown kind")
        return None
    max_replace = request.legal.replace.max_discard if request.legal.HasField("replace") else 0
    try:
        view = view_from_pb(request.view, info.ruleset, kind, max_replace)
    except Exception as error:  # a view the rules cannot hold: not the bot's to answer
        _unmatched(request, summary, f"its view cannot be read ({error})")
        return None
    if policy.strict:
        return action_to_pb(request.game_id, request.request_id, bot.act(view))
    try:
        action = bot.act(view)
    except Exception as error:
        action = default_action(view)
        policy.replaced(request.game_id, kind.value, action)
        # The referee is told, so the standings show a bot whose code fails (arena.proto).
        reason = fallback_reason(kind.value, error)
        return action_to_pb(request.game_id, request.request_id, action, reason)
    return action_to_pb(request.game_id, request.request_id, action)


def _unmatched(request: pb.DecisionRequest, summary: SessionSummary, why: str) -> None:
    """Leave ``request`` unanswered, say why (the first few times) and count it."""
    summary.unmatched += 1
    if summary.unmatched <= _UNMATCHED_SHOWN:
        _say(
            f"left request {request.request_id} of game {request.game_id or '-'} unanswered: "
            f"{why}. The referee sent it in error; the session goes on"
        )
    return None


#: How many unanswerable requests are told on stderr (all are counted).
_UNMATCHED_SHOWN = 3


#: The longest fallback reason sent (the referee keeps 200 characters).
MAX_FALLBACK_CHARS = 200


def fallback_reason(method: str, error: BaseException) -> str:
    """The one line ``Action.fallback`` carries: which method raised what, e.g.
    ``attack() raised IndexError: tuple index out of range``."""
    text = " ".join(f"{method}() raised {type(error).__name__}: {error}".split())
    return text[:MAX_FALLBACK_CHARS]


def _end_game(
    bot: Bot, end: pb.GameEnd, games: dict[str, _GameInfo], summary: SessionSummary
) -> None:
    games.pop(end.game_id, None)
    result = _RESULTS.get(end.result, "no contest")
    summary.games += 1
    if result == "win":
        summary.wins += 1
    elif result == "loss":
        summary.losses += 1
    elif result == "draw":
        summary.draws += 1
    reason = pb.EndReason.Name(end.reason).removeprefix("END_REASON_").lower()
    bot.on_game_end(end.game_id, result, reason)
