"""``GET /api/players/NAME/failures``: a player's own failed decisions (with the request each
was answering) and its hosted versions' output, for that player's token and the organizer's
alone (``arena/failures.py`` gathers it).  Without a token: 401; with any other token, or for
no such player: 404, the same answer, so a stranger learns nothing, not even who exists."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tacocat_arena.arena.failures import owner_report
from tacocat_arena.arena.submissions import player_for_token
from tacocat_arena.web.organizer import is_organizer
from tacocat_arena.web.rendering import arena_of


async def failures(request: Request) -> Response:
    """The owner's report, or 401/404."""
    arena = arena_of(request)
    name = request.path_params["name"]
    header = request.headers.get("authorization", "")
    token = header.removeprefix("Bearer ") if header.startswith("Bearer ") else ""
    if not token:
        return JSONResponse(
            {"error": "send the player's token: 'Authorization: Bearer <token>'"}, 401
        )
    allowed = player_for_token(arena.store, token) == name or is_organizer(arena, request)
    report = owner_report(arena, name) if allowed else None
    if report is None:
        return JSONResponse({"error": "no such player, or not yours"}, 404)
    return JSONResponse(report)


ROUTES = [Route("/api/players/{name}/failures", failures)]
