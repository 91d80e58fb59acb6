"""A player's page (``/players/NAME``): its connected bot's standing and its hosted versions,
each with its status and public reason (the gate's log is its owner's alone: ``uploads``),
its games and its rating over time; and the form that uploads a new version with the
player's own token (the upload itself is ``uploads.py``'s ``POST /api/submissions``)."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tacocat_arena.arena.ladder import Arena
from tacocat_arena.arena.submissions import Version, version_summary
from tacocat_arena.web import views
from tacocat_arena.web.access import Access, access
from tacocat_arena.web.charts import rating_chart
from tacocat_arena.web.human import human_games_of, opted_out_of
from tacocat_arena.web.rendering import arena_of, page

#: Versions' colours on the page, in turn.
COLOURS = ("#2b6cb0", "#c05621", "#2f855a", "#6b46c1", "#b83280")


@access(Access.PUBLIC)
async def player_page(request: Request) -> Response:
    """One player: 404 unless registered or with versions."""
    name = request.path_params["name"]
    data = await player_data(arena_of(request), name)
    if data is None:
        return page(request, "missing.html", {"what": f"player {name!r}"}, 404)
    data["human_games"] = human_games_of(request, name)  # unrated: web/human.py
    data["opted_out"] = opted_out_of(request)  # of human challenges: web/human.py
    return page(request, "player.html", data)


async def player_data(arena: Arena, name: str) -> dict[str, Any] | None:
    """What the page shows of ``name``; None if no such player."""
    registered = {p.name: p for p in arena.store.players()}.get(name)
    versions = arena.hosting.versions(name)
    if registered is None and not versions:
        return None
    rows = {row["bot"]: row for row in views.leaderboard(arena)}
    shown = await asyncio.gather(
        *(_version(arena, v, rows.get(v.identity), COLOURS[i % len(COLOURS)])
          for i, v in enumerate(reversed(versions)))
    )  # fmt: skip
    return {
        "player": name,
        "registered": registered,
        "status": views.player_status(arena, name),
        "row": rows.get(name),
        "versions": list(shown),
        "hosting": arena.hosting.enabled,
    }


async def _version(
    arena: Arena, version: Version, row: dict[str, Any] | None, colour: str
) -> dict[str, Any]:
    history = await arena.rating_history(version.identity) if row else []
    games = arena.games_played[version.identity]
    return {
        **version_summary(version, games),
        "row": row,
        "colour": colour,
        "chart": rating_chart(history, x_title=f"games played by {version.identity}"),
    }


ROUTES = [Route("/players/{name}", player_page)]
