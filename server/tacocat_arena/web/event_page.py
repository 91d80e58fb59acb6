"""An arena event's page (``/event/NAME``): a Swiss's rounds, standings and tiebreaks, or a
round robin's standings, from ``arena.events.event_view``."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tacocat_arena.arena.events import event_view
from tacocat_arena.web.access import Access, access
from tacocat_arena.web.rendering import arena_of, page


@access(Access.PUBLIC)  # an event's published games are everyone's to see
async def event_page(request: Request) -> Response:
    """The event named in the path, or the missing page (404)."""
    name = request.path_params["name"]
    view = event_view(arena_of(request), name)
    if view is None:
        return page(request, "missing.html", {"what": f"event {name!r}"}, 404)
    return page(request, "event.html", view)


ROUTES = [Route("/event/{name}", event_page)]
