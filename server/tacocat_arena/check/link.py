"""The check's end of one bot's stream: a scripted referee, not the tournament's.

The tournament's referee (``tacocat_arena.referee``) decides what to ask from the game; the
check decides from its script, so it can put a bot into situations a random game reaches
rarely (a two-arrow replace, a tied duel, a jumbo defence) and send it every message kind on
purpose.  What it asks is still built by the one view builder and the one wire mapping, and
every answer is judged by the engine, so nothing here is a second copy of a rule.
"""

from __future__ import annotations

import asyncio
import hmac
import time
from dataclasses import dataclass, field
from typing import Any

import grpc

from tacocat.v1 import arena_pb2 as pb
from tacocat.v1 import arena_pb2_grpc
from tacocat_arena.protocol.wire import PROTOCOL_VERSION, ignored_error


class BotGone(Exception):
    """The bot's stream ended (it closed its side, or its process died)."""


class NoAnswer(Exception):
    """No answer came within the time the check waits."""


@dataclass(frozen=True)
class Answer:
    """A bot's Action for an open request, and how long after the request it arrived."""

    action: pb.Action
    elapsed_ms: float


@dataclass
class _Open:
    game_id: str
    future: asyncio.Future[Answer]
    sent: float


@dataclass
class StreamNotes:
    """What the bot sent that answered nothing the check asked, per game_id ("" = none)."""

    stray: dict[str, list[str]] = field(default_factory=dict)
    late: list[int] = field(default_factory=list)

    def note(self, game_id: str, text: str) -> None:
        self.stray.setdefault(game_id, []).append(text)


class BotLink:
    """Sends a bot scripted messages and matches its Actions to the requests they answer.

    A reader task hands every Action to the open request it names; an Action naming no open
    request is answered with the Error a referee would send (UNKNOWN_REQUEST, STALE_REPLY,
    DUPLICATE_REPLY) and noted, so a check that then waits in vain can say why.
    """

    def __init__(self, context: grpc.aio.ServicerContext, hello: pb.Hello) -> None:
        self._context = context
        self.hello = hello
        self.batches = hello.accept_batches
        #: How many games the check may play at once (the Welcome says so).
        self.max_games = games_at_once(hello)
        self.notes = StreamNotes()
        self.decision_ms: list[float] = []
        self.gone = asyncio.Event()
        self._open: dict[int, _Open] = {}
        self._answered: set[int] = set()
        self._closed: set[int] = set()
        self._next_request_id = 1
        self._write_lock = asyncio.Lock()

    # -- writing ------------------------------------------------------------------------------
    async def send(self, *messages: pb.RefereeMessage, batch: bool = False) -> None:
        """Write messages, one by one, or as one RefereeBatch when ``batch`` (only to a bot
        whose Hello accepts batches)."""
        if self.gone.is_set():
            raise BotGone("the bot's stream is closed")
        async with self._write_lock:
            try:
                if batch and len(messages) > 1:
                    await self._context.write(
                        pb.RefereeMessage(batch=pb.RefereeBatch(messages=messages))
                    )
                else:
                    for message in messages:
                        await self._context.write(message)
            except Exception as error:  # the stream broke under the write
                self.gone.set()
                raise BotGone(f"writing to the bot failed: {error}") from None

    def new_request(self, game_id: str) -> tuple[int, asyncio.Future[Answer]]:
        """Open a request (its clock starts at ``sent``, when the message goes out)."""
        request_id = self._next_request_id
        self._next_request_id += 1
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._open[request_id] = _Open(game_id, future, time.monotonic())
        return request_id, future

    def mark_sent(self, request_id: int) -> None:
        """Start the request's clock now (after its message was written)."""
        if request_id in self._open:
            self._open[request_id].sent = time.monotonic()

    def close_request(self, request_id: int) -> None:
        """Stop waiting for a request (timed out, or its game ended); a later answer is stale."""
        opened = self._open.pop(request_id, None)
        if opened is not None:
            self._closed.add(request_id)
            if not opened.future.done():
                opened.future.cancel()

    async def answer(self, future: asyncio.Future[Answer], within_s: float) -> Answer:
        """The answer to an open request; NoAnswer or BotGone if none comes."""
        gone: asyncio.Future[Any] = asyncio.ensure_future(self.gone.wait())
        waiting: asyncio.Future[Any] = future
        try:
            done, _ = await asyncio.wait(
                {waiting, gone}, timeout=within_s, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            gone.cancel()
        if future in done and not future.cancelled():
            return future.result()
        if self.gone.is_set():
            raise BotGone("the bot's stream closed while a request was open")
        raise NoAnswer()

    # -- reading ------------------------------------------------------------------------------
    async def read_loop(self) -> None:
        """Read the bot's messages until its stream ends."""
        try:
            while True:
                message = await self._context.read()
                if message is grpc.aio.EOF:
                    break
                await self._handle(message)
        except Exception:  # a broken stream ends the session like a closed one
            pass
        finally:
            self.gone.set()
            for opened in self._open.values():
                if not opened.future.done():
                    opened.future.cancel()

    async def _handle(self, message: pb.BotMessage) -> None:
        case = message.WhichOneof("message")
        if case == "action":
            await self._deliver(message.action)
        elif case == "actions":
            for action in message.actions.actions:
                await self._deliver(action)
        elif case == "hello":
            self.notes.note("", "sent a second Hello")
            await self._error("", 0, pb.ERROR_CODE_UNEXPECTED_MESSAGE, "a second Hello")
        else:
            self.notes.note("", "sent a BotMessage with no case set")
            await self._error("", 0, pb.ERROR_CODE_MALFORMED, "a BotMessage with no case set")

    async def _deliver(self, action: pb.Action) -> None:
        request_id, game_id = action.request_id, action.game_id
        opened = self._open.get(request_id)
        if opened is not None and opened.game_id == game_id and not opened.future.done():
            elapsed_ms = (time.monotonic() - opened.sent) * 1000
            del self._open[request_id]
            self._answered.add(request_id)
            self.decision_ms.append(elapsed_ms)
            opened.future.set_result(Answer(action, elapsed_ms))
            return
        if request_id in self._answered:
            code, text = pb.ERROR_CODE_DUPLICATE_REPLY, f"request {request_id} was answered already"
        elif request_id in self._closed:
            code, text = pb.ERROR_CODE_STALE_REPLY, f"request {request_id} is no longer open"
            self.notes.late.append(request_id)
        else:
            code = pb.ERROR_CODE_UNKNOWN_REQUEST
            text = f"request_id {request_id} with game_id {game_id!r} was never sent"
            if opened is not None:
                text = f"request {request_id} belongs to game {opened.game_id!r}, not {game_id!r}"
        self.notes.note(game_id, text)
        await self._error(game_id, request_id, code, text)

    async def _error(self, game_id: str, request_id: int, code: pb.ErrorCode, text: str) -> None:
        try:
            await self.send(ignored_error(game_id, request_id, code, text))
        except BotGone:
            pass


@dataclass
class Handshake:
    """What the bot said first, and what was wrong with it (empty when nothing)."""

    hello: pb.Hello | None
    problem: str = ""


@dataclass(frozen=True)
class Look:
    """What the check's referee shows a bot of itself and of its games: ``check``'s own
    labels by default.  The arena's gate passes the ladder's (``Look.ladder``): the server's
    name, a session id, game ids, an opponent's name, a deal and the clock (move timeout
    and time bank) of a ladder game, so that none of them tells a bot it is in the gate.
    (Its positions still can: the check puts the bot in scripted situations.)"""

    server_info: str = "tacocat-arena check"
    session_id: str = "check"
    #: A game's id and match_info: formatted with ``n``, the game's number.
    game_ids: str = "check-{n}"
    match_info: str = "tacocat-arena check: {game_id}"
    #: The number of the check's first game.
    first_game: int = 1
    opponent_name: str = "check"
    #: The time bank announced (and left, unspent: the check judges the allowance alone).
    bank_ms: int = 0
    #: The move timeout the Welcome announces (the check's own: 0, "per game").
    welcome_decision_ms: int = 0
    #: The games at once the Welcome allows, as a referee would (0: the check's own count).
    max_concurrent_games: int = 0

    @classmethod
    def ladder(
        cls,
        *,
        server_info: str,
        session_id: str,
        decision_ms: int,
        bank_ms: int,
        opponent_name: str,
        pair: int,
        max_concurrent_games: int,
    ) -> Look:
        """A ladder game's labels: ``serve``'s server name, a session id of its referee's,
        its clock, an opponent's name, and game ids from pair ``pair`` on, as a batch names
        its games (``L000042a``)."""
        return cls(
            server_info=server_info,
            session_id=session_id,
            game_ids="L{n:06d}a",  # a version's first instance plays the pairs' 'a' games
            match_info="deal {n}",
            first_game=pair,
            opponent_name=opponent_name,
            bank_ms=bank_ms,
            welcome_decision_ms=decision_ms,
            max_concurrent_games=max_concurrent_games,
        )

    def games_at_once(self, hello: pb.Hello) -> int:
        """The Welcome's max_concurrent_games as a referee with this limit says it (the
        smaller of its own and the Hello's), or 0 for the check's own count."""
        if not self.max_concurrent_games:
            return 0
        return min(self.max_concurrent_games, hello.max_concurrent_games or 2**31)

    def game_id(self, index: int) -> str:
        """The id of the check's ``index``-th game (from 1)."""
        return self.game_ids.format(n=self.first_game + index - 1)

    def match(self, index: int) -> str:
        """The match_info of the check's ``index``-th game."""
        n = self.first_game + index - 1
        return self.match_info.format(game_id=self.game_ids.format(n=n), n=n)


#: ``check``'s own labels (the default ``Look``).
CHECK_LOOK = Look()


class CheckServicer(arena_pb2_grpc.ArenaServicer):
    """Arena.Play for one bot: the handshake, then whatever the script sends.

    ``connected`` resolves with the handshake; the stream stays open until ``finish`` is
    called, then ends with status OK, as after a tournament's SessionEnd.
    """

    def __init__(
        self, token: str, handshake_timeout_s: float = 10.0, look: Look = CHECK_LOOK
    ) -> None:
        self._token = token
        self.look = look
        self._handshake_timeout_s = handshake_timeout_s
        self.connected: asyncio.Future[tuple[Handshake, BotLink | None]] = (
            asyncio.get_running_loop().create_future()
        )
        self._finished = asyncio.Event()

    def finish(self) -> None:
        """End the stream (with status OK) once the script is done."""
        self._finished.set()

    async def Play(self, request_iterator: Any, context: Any) -> None:  # noqa: N802
        if self.connected.done():
            await context.abort(grpc.StatusCode.ALREADY_EXISTS, "the check takes one session")
        try:
            first = await asyncio.wait_for(context.read(), self._handshake_timeout_s)
        except TimeoutError:
            self._resolve(Handshake(None, "no Hello within the handshake timeout"), None)
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "no Hello within the timeout")
        if first is grpc.aio.EOF or first.WhichOneof("message") != "hello":
            self._resolve(Handshake(None, "the first message was not a Hello"), None)
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message must be Hello")
        hello = first.hello
        problem, status = self._judge(hello, context)
        if problem:
            self._resolve(Handshake(hello, problem), None)
            await context.abort(status, problem)
        link = BotLink(context, hello)
        await context.write(
            pb.RefereeMessage(
                welcome=pb.Welcome(
                    protocol_version=PROTOCOL_VERSION,
                    session_id=self.look.session_id,
                    server_info=self.look.server_info,
                    decision_timeout_ms=self.look.welcome_decision_ms,
                    time_bank_ms=self.look.bank_ms,
                    max_concurrent_games=self.look.games_at_once(hello) or link.max_games,
                    bot_name=hello.bot_name,
                    failure_policy=pb.FAILURE_POLICY_FORFEIT,
                    batches=hello.accept_batches,
                )
            )
        )
        reader = asyncio.ensure_future(link.read_loop())
        self._resolve(Handshake(hello), link)
        finished = asyncio.ensure_future(self._finished.wait())
        await asyncio.wait({reader, finished}, return_when=asyncio.FIRST_COMPLETED)
        finished.cancel()
        if not reader.done():
            reader.cancel()

    def _judge(
        self, hello: pb.Hello, context: grpc.aio.ServicerContext
    ) -> tuple[str, grpc.StatusCode]:
        if hello.protocol_version != PROTOCOL_VERSION:
            return (
                f"Hello.protocol_version is {hello.protocol_version}, expected {PROTOCOL_VERSION}",
                grpc.StatusCode.FAILED_PRECONDITION,
            )
        if not hello.bot_name.strip():
            return "Hello.bot_name is empty", grpc.StatusCode.INVALID_ARGUMENT
        token = hello.token
        if not token:
            metadata = dict(context.invocation_metadata() or ())
            token = str(metadata.get("authorization", "")).removeprefix("Bearer ")
        if not hmac.compare_digest(token.encode(), self._token.encode()):
            return (
                "the token is missing or wrong (send TACOCAT_ARENA_TOKEN in Hello.token)",
                grpc.StatusCode.UNAUTHENTICATED,
            )
        return "", grpc.StatusCode.OK

    def _resolve(self, handshake: Handshake, link: BotLink | None) -> None:
        if not self.connected.done():
            self.connected.set_result((handshake, link))


#: The most games the check plays at once (the bot's Hello may ask for fewer).
MOST_GAMES_AT_ONCE = 3


def games_at_once(hello: pb.Hello) -> int:
    """Games at once for this bot: the check's most, or fewer if its Hello asks."""
    wanted = hello.max_concurrent_games
    return min(MOST_GAMES_AT_ONCE, wanted) if wanted else MOST_GAMES_AT_ONCE
