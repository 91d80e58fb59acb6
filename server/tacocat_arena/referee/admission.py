"""Admitting a bot: its Hello checked against the referee's rules, and a session or a refusal.

Plain functions of the referee and the Hello, with no stream: ``ArenaServicer.Play`` reads the
Hello and turns a ``Refusal`` into the call's status, so every rule of admission can be tested
without a connection (tests/test_referee_scripted.py).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

import grpc

from tacocat.v1 import arena_pb2 as pb
from tacocat_arena import __version__
from tacocat_arena.protocol.wire import PROTOCOL_VERSION
from tacocat_arena.referee.match import FAILURE_POLICY_PB
from tacocat_arena.referee.session import BotSession

if TYPE_CHECKING:
    from tacocat_arena.referee.server import Referee


@dataclass(frozen=True)
class Refusal:
    """Why a connection is not admitted: the gRPC status and the message the bot reads."""

    code: grpc.StatusCode
    message: str


async def admit(
    referee: Referee, hello: pb.Hello, peer: str, bearer: str = ""
) -> BotSession | Refusal:
    """Check ``hello`` (from ``peer``; ``bearer`` is a token sent as call metadata) and
    return the bot's new session, its Welcome posted, or the refusal.

    The rules, in order: the protocol version, the name, the token (a revoked player's own
    is told so), a stalled last stream,
    the peer check (the process started for this identity), an existing session (replaced
    for an arena's restarted bot, else refused).  Refusals the organizer should see are
    recorded through ``referee.refused``.
    """
    name = hello.bot_name.strip()
    if hello.protocol_version != PROTOCOL_VERSION:
        reason = f"protocol_version {hello.protocol_version}, not {PROTOCOL_VERSION}"
        referee.refused(name[:64], peer, reason)
        return Refusal(
            grpc.StatusCode.FAILED_PRECONDITION,
            f"protocol_version {hello.protocol_version} is not supported; this referee "
            f"speaks version {PROTOCOL_VERSION}",
        )
    if not name or len(name) > 64 or not name.isprintable():
        return Refusal(
            grpc.StatusCode.INVALID_ARGUMENT, "bot_name must be 1-64 printable characters"
        )
    token = hello.token or bearer
    if not referee.authenticate(name, token):
        if referee.revoked(name, token):
            referee.refused(name, peer, "revoked by the organizer")
            return Refusal(
                grpc.StatusCode.PERMISSION_DENIED, f"player {name!r} was revoked by the organizer"
            )
        referee.refused(name, peer, "unknown bot or wrong token")
        return Refusal(
            grpc.StatusCode.UNAUTHENTICATED,
            f"unknown bot {name!r} or wrong token: check TACOCAT_ARENA_BOT and TACOCAT_ARENA_TOKEN",
        )
    if name in referee.stalled:
        referee.refused(name, peer, "its last stream stopped reading and is still open")
        return Refusal(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            f"bot {name!r}: its last stream stopped reading and is still open; close it "
            "(or its connection) before connecting again",
        )
    # Off the referee's loop: the check reads /proc, which under load takes long enough to
    # hold up every other stream's Hello and moves (a handshake queued behind it timed out).
    if referee.check_peer is not None and (
        refused := await asyncio.to_thread(referee.check_peer, name, peer)
    ):
        return Refusal(grpc.StatusCode.PERMISSION_DENIED, refused)
    old = referee.live_session(name)
    if old is not None and referee.replace_sessions:
        await referee.replace(old)
    elif old is not None:
        referee.refused(name, peer, "already connected")
        return Refusal(
            grpc.StatusCode.ALREADY_EXISTS,
            f"bot {name!r} already has a live session; close it first",
        )
    return _welcomed(referee, hello, name)


def _welcomed(referee: Referee, hello: pb.Hello, name: str) -> BotSession:
    """The admitted bot's session, with its Welcome waiting to be written."""
    settings = referee.settings
    limit = settings.max_concurrent_games
    if hello.max_concurrent_games:
        limit = min(limit, hello.max_concurrent_games)
    session = BotSession(
        name=name, max_concurrent_games=limit, limits=settings.limits, batches=hello.accept_batches
    )
    welcome = pb.Welcome(
        protocol_version=PROTOCOL_VERSION,
        session_id=session.session_id,
        server_info=f"tacocat-arena/{__version__}",
        decision_timeout_ms=settings.clock.decision_ms,
        time_bank_ms=settings.clock.bank_ms,
        max_concurrent_games=limit,
        bot_name=name,
        failure_policy=FAILURE_POLICY_PB[settings.failure_policy],
        batches=hello.accept_batches,
    )
    session.post(pb.RefereeMessage(welcome=welcome))
    return session
