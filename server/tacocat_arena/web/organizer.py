"""The organizer's actions (pause, resume, add or revoke a player, suspend or reinstate a
hosted version): the organizer's token, sent as a bearer token, or a 401 that says where
that token is.  A version's activation (a roll-back) is the player's own action, with its
token (or the organizer's).  The rules are ``arena/moderation.py``'s."""

from __future__ import annotations

import json
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tacocat_arena.arena.hosted import Hosting
from tacocat_arena.arena.ladder import Arena
from tacocat_arena.arena.moderation import NoSuchVersion, NotAllowed
from tacocat_arena.arena.players import add_player, check_name, token_matches
from tacocat_arena.arena.store import ArenaError
from tacocat_arena.arena.submissions import Version, player_for_token
from tacocat_arena.web.rendering import arena_of

#: Most digits a version number in a URL may have (a longer one names no version: 404).
VERSION_DIGITS = 9
#: Largest body a moderation action reads (a reason of a few lines).
BODY_BYTES = 4096


def is_organizer(arena: Arena, request: Request) -> bool:
    """Whether ``request`` carries the organizer's token as a bearer token."""
    header = request.headers.get("authorization", "")
    token = header.removeprefix("Bearer ") if header.startswith("Bearer ") else ""
    return token_matches(token, arena.store.meta("organizer_token_hash"))


def refusal() -> Response:
    """The answer to an organizer action without the organizer's token."""
    return JSONResponse(
        {"error": "organizer only: send 'Authorization: Bearer <DIR/organizer.token>'"}, 401
    )


async def pause(request: Request) -> Response:
    """``/api/pause`` stops new games (those in flight finish); ``/api/resume`` undoes it."""
    arena = arena_of(request)
    if not is_organizer(arena, request):
        return refusal()
    arena.paused = request.url.path.endswith("/pause")
    arena.wake()
    return JSONResponse({"paused": arena.paused})


async def add(request: Request) -> Response:
    """Register a player (``{"name": ...}``); the answer holds its token, shown only once."""
    arena = arena_of(request)
    if not is_organizer(arena, request):
        return refusal()
    try:
        body = await request.json()
        name = check_name(str(body["name"]))
        token = add_player(arena.store, name)
    except (ValueError, KeyError, TypeError):
        return JSONResponse({"error": 'send {"name": "..."}'}, 400)
    except ArenaError as error:
        return JSONResponse({"error": str(error)}, 409)
    arena.check_players(reread=True)
    arena.wake()
    return JSONResponse({"name": name, "token": token}, 201)


async def revoke(request: Request) -> Response:
    """Revoke a player: its token stops working, its session ends and its hosted versions
    stop playing (``revoked``), at once."""
    arena = arena_of(request)
    if not is_organizer(arena, request):
        return refusal()
    try:
        arena.store.revoke_player(request.path_params["name"])
    except ArenaError as error:
        return JSONResponse({"error": str(error)}, 404)
    arena.check_players(reread=True)
    arena.wake()
    return JSONResponse({"revoked": request.path_params["name"]})


def _bearer(request: Request) -> str:
    header = request.headers.get("authorization", "")
    return header.removeprefix("Bearer ") if header.startswith("Bearer ") else ""


def _version_of(request: Request) -> tuple[Hosting, str, int] | Response:
    """The arena's hosting and the version the URL names, or the answer saying why not."""
    hosting = arena_of(request).hosting
    if hosting is None:
        return JSONResponse({"error": "this arena takes no submissions"}, 404)
    text = request.path_params["version"].removeprefix("v")
    if not text.isdigit() or len(text) > VERSION_DIGITS:
        return JSONResponse({"error": f"no version {text[:20]!r}: a version is a number"}, 404)
    # ``/api/me/...``: the player whose token the request carries (``submit --activate``).
    player = request.path_params.get("player")
    if player is None:
        token = _bearer(request)
        player = (player_for_token(hosting.arena.store, token) if token else None) or ""
    return hosting, player, int(text)


async def _reason(request: Request) -> str | Response:
    """The optional ``{"reason": "..."}`` of a suspension."""
    body = await request.body()
    if len(body) > BODY_BYTES:
        return JSONResponse({"error": f"the body is over {BODY_BYTES} bytes"}, 413)
    if not body.strip():
        return ""
    try:
        found = json.loads(body)
        return str(found.get("reason", "")) if isinstance(found, dict) else ""
    except ValueError:
        return JSONResponse({"error": 'send {"reason": "..."} (JSON) or nothing'}, 400)


def _answer(hosting: Hosting, act: Callable[[], Version]) -> Response:
    try:
        version = act()
    except NoSuchVersion as error:
        return JSONResponse({"error": str(error)}, 404)
    except NotAllowed as error:
        return JSONResponse({"error": str(error)}, 409)
    return JSONResponse(hosting.summary(version, private=True))  # its owner or the organizer


async def suspend(request: Request) -> Response:
    """Suspend a hosted version (``{"reason": "..."}``, shown to its player)."""
    arena = arena_of(request)
    if not is_organizer(arena, request):
        return refusal()
    found = _version_of(request)
    if isinstance(found, Response):
        return found
    reason = await _reason(request)
    if isinstance(reason, Response):
        return reason
    hosting, player, number = found
    return _answer(hosting, lambda: hosting.suspend(player, number, reason))


async def reinstate(request: Request) -> Response:
    """Give a suspended version back (active, or retired if its player has an active one)."""
    arena = arena_of(request)
    if not is_organizer(arena, request):
        return refusal()
    found = _version_of(request)
    if isinstance(found, Response):
        return found
    hosting, player, number = found
    return _answer(hosting, lambda: hosting.reinstate(player, number))


async def activate(request: Request) -> Response:
    """Make a version its player's active one (a roll-back): the player's token or the
    organizer's."""
    arena = arena_of(request)
    found = _version_of(request)
    if isinstance(found, Response):
        return found
    hosting, player, number = found
    token = _bearer(request)
    owner = player_for_token(arena.store, token) if token else None
    if not player and owner is None:
        return JSONResponse(
            {"error": "send your player's token: 'Authorization: Bearer <token>'"}, 401
        )
    if owner is None and not is_organizer(arena, request):
        return JSONResponse(
            {"error": "send your player's token: 'Authorization: Bearer <token>'"}, 401
        )
    if owner is not None and owner != player:
        return JSONResponse({"error": f"this token is {owner}'s, not {player}'s"}, 403)
    return _answer(hosting, lambda: hosting.choose(player, number))


ROUTES = [
    Route("/api/pause", pause, methods=["POST"]),
    Route("/api/resume", pause, methods=["POST"]),
    Route("/api/players", add, methods=["POST"]),
    Route("/api/players/{name}/revoke", revoke, methods=["POST"]),
    Route("/api/submissions/{player}/{version}/suspend", suspend, methods=["POST"]),
    Route("/api/submissions/{player}/{version}/reinstate", reinstate, methods=["POST"]),
    Route("/api/submissions/{player}/{version}/activate", activate, methods=["POST"]),
    Route("/api/me/versions/{version}/activate", activate, methods=["POST"]),
]
