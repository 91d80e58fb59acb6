"""``GET /api/players/NAME/failures``: a player's own failed decisions (with the request each
was answering) and its hosted versions' output, for that player's token and the organizer's
alone (``arena/failures.py`` gathers it).  Without a token: 401; with any other token, or for
no such player: 404, the same answer, so a stranger learns nothing, not even who exists."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tacocat_arena.arena.failures import owner_report
from tacocat_arena.web.access import Access, access, error
from tacocat_arena.web.rendering import arena_of


@access(Access.OWNER_UNSEEN, owner="name")
async def failures(request: Request) -> Response:
    """The owner's report (404 for no such player, as for a stranger)."""
    report = owner_report(arena_of(request), request.path_params["name"])
    if report is None:
        return error("no such player, or not yours", 404)
    return JSONResponse(report)


ROUTES = [Route("/api/players/{name}/failures", failures)]
