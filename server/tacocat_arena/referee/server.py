"""The gRPC referee: a thin servicer over ``Referee``, and a server factory.

``Referee`` owns identities (name -> secret token) and live sessions; the tournament asks it
for a bot's session and to play games.  ``ArenaServicer`` only translates the stream: the
handshake, then every incoming Action goes to ``BotSession.deliver`` and every queued
outgoing message is written.  ``start_server`` binds a port (0 picks a free one, as tests do)
with health checking and server reflection on, so generic gRPC tools can talk to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any

import grpc
from google.protobuf.message import DecodeError
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from tacocat.v1 import arena_pb2 as pb
from tacocat.v1 import arena_pb2_grpc
from tacocat_arena.engine import Game, Ruleset, Termination
from tacocat_arena.referee.admission import Refusal, admit
from tacocat_arena.referee.connection import run_connection
from tacocat_arena.referee.heap import freeze_long_lived
from tacocat_arena.referee.match import GameReport, PendingListener, play_game
from tacocat_arena.referee.session import BotSession
from tacocat_arena.referee.settings import RefereeSettings
from tacocat_arena.referee.untrusted import printable

log = logging.getLogger(__name__)
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Arena"].full_name


class Referee:
    """Identities, sessions and games.  ``tokens`` maps bot name -> secret; ``None`` turns
    authentication off (any name may connect: for local experiments only)."""

    def __init__(
        self,
        tokens: Mapping[str, str] | None,
        settings: RefereeSettings,
        *,
        classify_disconnect: Callable[[str], Awaitable[Termination]] | None = None,
        check_peer: Callable[[str, str], str | None] | None = None,
        replace_sessions: bool = False,
    ) -> None:
        self.tokens = dict(tokens) if tokens is not None else None
        self.settings = settings
        self.classify_disconnect = classify_disconnect
        #: ``check_peer(name, peer)``: why the connection may not be ``name``'s (None: it
        #: may), for bots whose process the tournament started (``referee/peers.py``).
        self.check_peer = check_peer
        #: A new connection of a connected bot replaces its old session (a restarted bot)
        #: instead of being refused with ALREADY_EXISTS.
        self.replace_sessions = replace_sessions
        self.sessions: dict[str, BotSession] = {}
        self._changed = asyncio.Condition()
        #: Bots that are away: when each must be back by (``time.monotonic``), see
        #: ``wait_for_return``.
        self._return_by: dict[str, float] = {}
        #: Bots whose last stream stopped reading and is still open (``ArenaServicer.Play``).
        self.stalled: set[str] = set()

    def authenticate(self, name: str, token: str) -> bool:
        """True if ``token`` is ``name``'s secret (constant-time comparison)."""
        if self.tokens is None:
            return True
        expected = self.tokens.get(name)
        return expected is not None and hmac.compare_digest(expected.encode(), token.encode())

    def revoked(self, name: str, token: str) -> bool:
        """Whether ``token`` was ``name``'s own until it was revoked (an arena's players): such
        a bot is told PERMISSION_DENIED, not UNAUTHENTICATED.  A tournament revokes none."""
        return False

    def refused(self, name: str, peer: str, reason: str) -> None:
        """A connection was refused at the handshake (an arena shows these to its organizer)."""
        log.info("refused %s from %s: %s", printable(name) or "(no name)", peer, printable(reason))

    async def admit(self, hello: pb.Hello, peer: str, bearer: str = "") -> BotSession | Refusal:
        """A new session for ``hello``'s bot, or why not (see ``admission.admit``)."""
        return await admit(self, hello, peer, bearer)

    async def replace(self, old: BotSession) -> None:
        """End ``old`` because its bot connected again: its games in flight are forfeited."""
        old.post(
            pb.RefereeMessage(
                session_end=pb.SessionEnd(
                    reason=pb.SESSION_END_REASON_REMOVED,
                    message="a new connection with this bot's token replaced this session",
                )
            )
        )
        with contextlib.suppress(TimeoutError):  # a bot that stopped reading is not waited for
            await asyncio.wait_for(old.idle.wait(), min(2.0, self.settings.limits.write_deadline_s))
        old.close("a new connection with its token replaced this session")
        await self.unregister(old)

    async def register(self, session: BotSession) -> None:
        """Make ``session`` the live session of its bot."""
        async with self._changed:
            self.sessions[session.name] = session
            self._return_by.pop(session.name, None)
            self._changed.notify_all()

    async def unregister(self, session: BotSession) -> None:
        """Forget ``session`` (if it is still the live one) and fail its open requests."""
        session.close("its stream ended")
        async with self._changed:
            if self.sessions.get(session.name) is session:
                del self.sessions[session.name]
            self._changed.notify_all()

    def live_session(self, name: str) -> BotSession | None:
        """The bot's open session, if it is connected."""
        session = self.sessions.get(name)
        return session if session is not None and session.is_open else None

    async def wait_for_session(self, name: str, timeout: float) -> BotSession:
        """Wait until bot ``name`` is connected; TimeoutError after ``timeout`` seconds."""

        async def connected() -> BotSession:
            async with self._changed:
                while (session := self.live_session(name)) is None:
                    await self._changed.wait()
                return session

        return await asyncio.wait_for(connected(), timeout)

    async def wait_for_return(self, name: str, window: float) -> BotSession | None:
        """The bot's session, waiting for it to come back if it is away; None if it is gone.

        One reconnect window per bot, not per game: the first wait for an absent bot sets
        the time it must be back by, and every game waiting for it (or asking later) shares
        that deadline, so a bot that left for good costs ``window`` seconds once, after which
        its remaining games are forfeited at once.  Coming back clears the deadline.
        """
        if (session := self.live_session(name)) is not None:
            return session
        return_by = self._return_by.setdefault(name, time.monotonic() + window)
        try:
            return await self.wait_for_session(name, max(0.0, return_by - time.monotonic()))
        except TimeoutError:
            return None

    async def play(
        self,
        game_id: str,
        names: tuple[str, str],
        *,
        seed: int,
        ruleset: Ruleset,
        match_info: str = "",
        observe: Callable[[Game], None] | None = None,
        on_pending: PendingListener | None = None,
    ) -> GameReport:
        """Referee one game between two connected bots (see ``match.play_game``)."""
        sessions = []
        for name in names:
            session = self.live_session(name)
            if session is None:
                raise LookupError(f"bot {name!r} is not connected")
            sessions.append(session)
        async with contextlib.AsyncExitStack() as held:
            # Each seat takes one of its session's game slots (Welcome.max_concurrent_games);
            # taking them in name order means two games can never wait on each other.
            for session in sorted(set(sessions), key=lambda s: s.name):
                await held.enter_async_context(session.game_slots)
            return await play_game(
                game_id,
                (sessions[0], sessions[1]),
                seed=seed,
                ruleset=ruleset,
                settings=self.settings,
                match_info=match_info,
                classify_disconnect=self.classify_disconnect,
                observe=observe,
                on_pending=on_pending,
            )

    async def end_all_sessions(self, message: str) -> None:
        """Say SessionEnd to every bot and close their streams (status OK)."""
        for session in list(self.sessions.values()):
            session.post(
                pb.RefereeMessage(
                    session_end=pb.SessionEnd(
                        reason=pb.SESSION_END_REASON_TOURNAMENT_OVER, message=message
                    )
                )
            )
        # SessionEnd may be waiting behind a write in flight; a bot that stopped reading
        # cannot hold the shutdown up for longer than its write deadline.
        for session in list(self.sessions.values()):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(session.idle.wait(), self.settings.limits.write_deadline_s)
            session.close("the referee ended the session")


class ArenaServicer(arena_pb2_grpc.ArenaServicer):
    """Translates one bot stream to and from a ``BotSession``."""

    def __init__(self, referee: Referee) -> None:
        self.referee = referee

    async def Play(  # noqa: N802 (the gRPC method name)
        self, request_iterator: AsyncIterator[pb.BotMessage], context: grpc.aio.ServicerContext
    ) -> None:
        """A bot session: the Hello, admission (``Referee.admit``), then the connection
        (``connection.run_connection``); a refusal or an abnormal end becomes the status.

        It uses the call's read/write API (not the iterators): the task that has a message
        to send writes it, so a decision request costs no hand-over between tasks.
        """
        hello = await _read_hello(context, self.referee.settings.handshake_timeout_s)
        if hello is None:
            return
        admitted = await self.referee.admit(hello, context.peer() or "", _bearer_token(context))
        if isinstance(admitted, Refusal):
            await context.abort(admitted.code, admitted.message)
            return
        session = admitted
        session.start_writing(context.write)
        await self.referee.register(session)
        log.info(
            "bot %s connected (session %s, %s)",
            session.name,
            session.session_id,
            printable(hello.client_info, 200),
        )
        ending = await run_connection(self.referee, session, context.read)
        if ending is not None:
            await context.abort(ending.code, ending.message)


async def _read_hello(context: grpc.aio.ServicerContext, timeout_s: float) -> pb.Hello | None:
    """The stream's first message, which must be a Hello (None if the bot left first)."""
    try:
        message = await asyncio.wait_for(context.read(), timeout_s)
    except TimeoutError:
        await context.abort(
            grpc.StatusCode.DEADLINE_EXCEEDED,
            f"no Hello within {timeout_s:g} s of opening the stream",
        )
    except DecodeError:
        await context.abort(
            grpc.StatusCode.INVALID_ARGUMENT, "the first message is not a valid BotMessage"
        )
    if message is grpc.aio.EOF:
        return None
    if message.WhichOneof("message") != "hello":
        await context.abort(
            grpc.StatusCode.INVALID_ARGUMENT, "the first message must be BotMessage.hello"
        )
    hello: pb.Hello = message.hello
    return hello


class ListenError(OSError):
    """The referee cannot listen where it was asked to; the message names the address."""


def bind_port(
    server: grpc.aio.Server, host: str, port: int, *, tls: tuple[bytes, bytes] | None = None
) -> int:
    """Bind ``server`` to ``host:port`` and return the port bound (0 picks a free one).

    grpc reports a failure as a bare ``RuntimeError`` ("Failed to bind") or a 0 port; this
    turns both into a ``ListenError`` that says what to do, for the CLI to show as it is.
    """
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        if tls is None:
            bound = server.add_insecure_port(address)
        else:
            bound = server.add_secure_port(address, grpc.ssl_server_credentials([tls]))
    except RuntimeError:
        bound = 0
    if bound == 0:
        raise ListenError(
            f"cannot listen on {address}: the port is already in use (another referee?) or "
            f"{host} is not an address of this machine; choose another --port (0 picks a "
            "free one) or stop the program that holds it"
        )
    return bound


def _arena_handler(servicer: ArenaServicer) -> grpc.GenericRpcHandler:
    """The Arena service with Play's responses left as bytes: sessions serialise each message
    when it is posted (``BotSession.post``), so the write sends them as they are."""
    play = grpc.stream_stream_rpc_method_handler(
        servicer.Play, request_deserializer=pb.BotMessage.FromString
    )
    return grpc.method_handlers_generic_handler(SERVICE_NAME, {"Play": play})


def _bearer_token(context: grpc.aio.ServicerContext) -> str:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
            return value[len("Bearer ") :]
    return ""


async def start_server(
    referee: Referee,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    unix_sockets: Sequence[str] = (),
    tls: tuple[bytes, bytes] | None = None,
) -> tuple[grpc.aio.Server, int]:
    """Start a referee server on ``host:port`` (0 = any free port) and on the Unix socket
    paths ``unix_sockets``; return it and its port.

    ``tls`` is (private key, certificate chain), both PEM, for bots on other machines.
    """
    max_bytes = referee.settings.max_message_bytes
    server = grpc_server(
        [
            ("grpc.max_receive_message_length", max_bytes),
            ("grpc.keepalive_time_ms", 20_000),
            ("grpc.keepalive_timeout_ms", 10_000),
            ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
            ("grpc.keepalive_permit_without_calls", 1),
            # Without this, a second referee on the same port would bind too and take half
            # of the connections instead of failing.
            ("grpc.so_reuseport", 0),
        ]
    )
    server.add_generic_rpc_handlers((_arena_handler(ArenaServicer(referee)),))
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    bound = bind_port(server, host, port, tls=tls)
    for path in unix_sockets:
        try:
            if server.add_insecure_port(f"unix:{path}") == 0:
                raise RuntimeError
        except RuntimeError:
            raise ListenError(f"cannot listen on the Unix socket {path}") from None
    await server.start()
    for service in ("", SERVICE_NAME):
        await health_servicer.set(service, health_pb2.HealthCheckResponse.SERVING)
    freeze_long_lived()  # a server lives long: see referee/heap.py
    return server, bound


#: How long ``stop_server`` waits for the handlers of a stopped server's calls to end, then
#: again for the ones it had to cancel (a bound for a handler that ignores its cancellation).
_HANDLERS_END_S = 5.0


class _Calls(grpc.aio.ServerInterceptor):  # type: ignore[misc]  # grpc.aio is untyped
    """The handler task of every call in progress on one server (grpc.aio runs its
    interceptors inside the call's own handler task), for ``stop_server``."""

    def __init__(self) -> None:
        self.handlers: set[asyncio.Task[Any]] = set()

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        task = asyncio.current_task()
        if task is not None:
            self.handlers.add(task)
            task.add_done_callback(self.handlers.discard)
        return await continuation(handler_call_details)


_calls: weakref.WeakKeyDictionary[grpc.aio.Server, _Calls] = weakref.WeakKeyDictionary()


def grpc_server(options: Sequence[tuple[str, Any]] = ()) -> grpc.aio.Server:
    """A grpc.aio server whose calls ``stop_server`` can wait for: every server of ours is
    made here and stopped there."""
    calls = _Calls()
    server = grpc.aio.server(interceptors=[calls], options=list(options))
    _calls[server] = calls
    return server


async def stop_server(server: grpc.aio.Server, grace: float | None) -> None:
    """Stop ``server`` (``grace`` as ``grpc.aio.Server.stop``'s) and return only once every
    task of its calls has ended, so that nothing of gRPC's is left for a loop's end to cancel.

    grpc.aio runs each call as two tasks: the handler, and grpc's ``_schedule_rpc_coro``,
    which waits for it and prints a bare ``CancelledError`` traceback to stderr when it is
    cancelled while it waits.  ``server.stop`` returns when gRPC's core is done with the
    calls, not when those tasks are: a handler cancelled by the stop may still be running its
    ``finally``, or have just ended with grpc's task not yet woken.  Whatever cancels the
    tasks left when the program ends (``asyncio.run``, ``stopping.run_until_signalled``) then
    made grpc print it after the arena's last line (a swiss's crasher reconnecting every
    game while the arena stopped).  So: wait for the handlers still running (gRPC cancelled
    those whose client is still there), cancel any that outlive that, and yield once more:
    grpc's task of a call is woken by its handler's end before this coroutine is (its
    callback was added first), so by then it has ended too.
    """
    await server.stop(grace)
    calls = _calls.get(server)
    running = set(calls.handlers) if calls is not None else set()
    if running:
        _, left = await asyncio.wait(running, timeout=_HANDLERS_END_S)
        for handler in left:
            handler.cancel()
        if left:
            await asyncio.wait(left, timeout=_HANDLERS_END_S)
    await asyncio.sleep(0)  # the grpc tasks of calls whose handler had ended already end now
