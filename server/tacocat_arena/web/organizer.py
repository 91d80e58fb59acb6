"""The organizer's actions (pause, resume, add or revoke a player, suspend or reinstate a
hosted version), for the organizer's token (``access.Access.ORGANIZER``).  A version's
activation (a roll-back) is the player's own action, with its token (or the organizer's).
The rules are ``arena/moderation.py``'s; an ``ArenaError`` they raise is answered with the
status its class carries (``access.arena_error``)."""

from __future__ import annotations

import json
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tacocat_arena.arena.hosted import Hosting, hosted_of
from tacocat_arena.arena.players import add_player, check_name
from tacocat_arena.arena.submissions import Version
from tacocat_arena.web.access import Access, access, caller, error
from tacocat_arena.web.rendering import arena_of

#: Most digits a version number in a URL may have (a longer one names no version: 404).
VERSION_DIGITS = 9
#: Largest body a moderation action reads (a reason of a few lines).
BODY_BYTES = 4096


@access(Access.ORGANIZER)
async def pause(request: Request) -> Response:
    """``/api/pause`` stops new games (those in flight finish); ``/api/resume`` undoes it."""
    arena = arena_of(request)
    arena.paused = request.url.path.endswith("/pause")
    arena.wake()
    return JSONResponse({"paused": arena.paused})


@access(Access.ORGANIZER)
async def add(request: Request) -> Response:
    """Register a player (``{"name": ...}``); the answer holds its token, shown only once."""
    arena = arena_of(request)
    try:
        body = await request.json()
        name = check_name(str(body["name"]))
    except (ValueError, KeyError, TypeError):
        return error('send {"name": "..."}', 400)
    token = add_player(arena.store, name)
    arena.check_players(reread=True)
    arena.wake()
    return JSONResponse({"name": name, "token": token}, 201)


@access(Access.ORGANIZER)
async def revoke(request: Request) -> Response:
    """Revoke a player: its token stops working, its session ends and its hosted versions
    stop playing (``revoked``), at once."""
    arena = arena_of(request)
    arena.store.revoke_player(request.path_params["name"])
    arena.check_players(reread=True)
    arena.wake()
    return JSONResponse({"revoked": request.path_params["name"]})


def _version_of(request: Request) -> tuple[Hosting, str, int] | Response:
    """The arena's hosting and the version the URL names, or the answer saying why not."""
    hosting = hosted_of(arena_of(request))
    if hosting is None:
        return error("this arena takes no submissions", 404)
    text = request.path_params["version"].removeprefix("v")
    if not text.isdigit() or len(text) > VERSION_DIGITS:
        return error(f"no version {text[:20]!r}: a version is a number", 404)
    # ``/api/me/...``: the player whose token the request carries (``submit --activate``).
    player = request.path_params.get("player") or caller(request).player or ""
    return hosting, player, int(text)


async def _reason(request: Request) -> str | Response:
    """The optional ``{"reason": "..."}`` of a suspension."""
    body = await request.body()
    if len(body) > BODY_BYTES:
        return error(f"the body is over {BODY_BYTES} bytes", 413)
    if not body.strip():
        return ""
    try:
        found = json.loads(body)
        return str(found.get("reason", "")) if isinstance(found, dict) else ""
    except ValueError:
        return error('send {"reason": "..."} (JSON) or nothing', 400)


def _answer(hosting: Hosting, act: Callable[[], Version]) -> Response:
    """What ``act`` made of the version, as its owner or the organizer sees it."""
    return JSONResponse(hosting.summary(act(), private=True))


@access(Access.ORGANIZER)
async def suspend(request: Request) -> Response:
    """Suspend a hosted version (``{"reason": "..."}``, shown to its player)."""
    found = _version_of(request)
    if isinstance(found, Response):
        return found
    reason = await _reason(request)
    if isinstance(reason, Response):
        return reason
    hosting, player, number = found
    return _answer(hosting, lambda: hosting.suspend(player, number, reason))


@access(Access.ORGANIZER)
async def reinstate(request: Request) -> Response:
    """Give a suspended version back (active, or retired if its player has an active one)."""
    found = _version_of(request)
    if isinstance(found, Response):
        return found
    hosting, player, number = found
    return _answer(hosting, lambda: hosting.reinstate(player, number))


async def _activate(request: Request) -> Response:
    """Make the version the URL names its player's active one (a roll-back)."""
    found = _version_of(request)
    if isinstance(found, Response):
        return found
    hosting, player, number = found
    return _answer(hosting, lambda: hosting.choose(player, number))


#: A player's roll-back: its own token, or the organizer's (another player's: 403).
activate = access(Access.OWNER)(_activate)
#: ``submit --activate``: the version of the player whose token the request carries.
activate_mine = access(Access.PLAYER)(_activate)


ROUTES = [
    Route("/api/pause", pause, methods=["POST"]),
    Route("/api/resume", pause, methods=["POST"]),
    Route("/api/players", add, methods=["POST"]),
    Route("/api/players/{name}/revoke", revoke, methods=["POST"]),
    Route("/api/submissions/{player}/{version}/suspend", suspend, methods=["POST"]),
    Route("/api/submissions/{player}/{version}/reinstate", reinstate, methods=["POST"]),
    Route("/api/submissions/{player}/{version}/activate", activate, methods=["POST"]),
    Route("/api/me/versions/{version}/activate", activate_mine, methods=["POST"]),
]
