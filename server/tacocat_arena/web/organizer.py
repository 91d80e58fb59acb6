"""The organizer's actions (pause, resume, add or revoke a player): the organizer's token,
sent as a bearer token, or a 401 that says where that token is."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tacocat_arena.arena.ladder import Arena
from tacocat_arena.arena.players import add_player, check_name, token_matches
from tacocat_arena.arena.store import ArenaError
from tacocat_arena.web.rendering import arena_of


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
    """Revoke a player: its token stops working and its session ends."""
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


ROUTES = [
    Route("/api/pause", pause, methods=["POST"]),
    Route("/api/resume", pause, methods=["POST"]),
    Route("/api/players", add, methods=["POST"]),
    Route("/api/players/{name}/revoke", revoke, methods=["POST"]),
]
