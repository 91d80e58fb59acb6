"""The organizer's desk (``/admin``): players, submissions, refused connections, pause and
resume, and the arena's health, for the holder of the organizer's token.

The page itself holds no data: its script asks ``/admin/sections`` (HTML rendered from the
desk's templates) and ``/api/admin`` (the same as JSON) with the token as a bearer token,
as every organizer action does (``access.py``), and keeps the token in the tab's
``sessionStorage`` only.  No cookie means no request another site can make in the
organizer's name.
"""

from __future__ import annotations

import time
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from tacocat_arena.arena.ladder import Arena
from tacocat_arena.web import views
from tacocat_arena.web.access import Access, access
from tacocat_arena.web.health import GameClock
from tacocat_arena.web.rendering import TEMPLATES, arena_of, page

#: Refused connections the desk lists (the store keeps up to ``store.REFUSALS_KEPT``).
DESK_REFUSALS = 100


def desk_data(arena: Arena, clock: GameClock) -> dict[str, Any]:
    """Everything the desk shows, as plain data."""
    rows = {row["bot"]: row for row in views.leaderboard(arena)}
    games: dict[str, int] = {}
    for row in rows.values():  # a player's games: its connected bot's and its versions'
        games[row["player"]] = games.get(row["player"], 0) + row["games"]
    players = [
        {
            "name": p.name,
            "added_at": p.added_at,
            "revoked_at": p.revoked_at,
            "status": views.player_status(arena, p.name)["status"],
            "games": games.get(p.name, 0),
        }
        for p in arena.store.players()
    ]
    failures = [views.failure_dict(f) for f in reversed(arena.failures)]
    hosting = arena.hosting
    return {
        "players": players,
        "bots": bots_data(arena),
        "versions": [hosting.summary(v, private=True) for v in hosting.versions()],
        "submissions": views.waiting_submissions(arena),
        "failures": failures[:DESK_REFUSALS],
        "failures_total": len(arena.failures),
        "paused": arena.paused,
        "health": {
            "games_per_s": round(clock.rate(), 2),
            "games": arena.tally.games,
            "live": len(arena.live),
            "concurrency": arena.settings.concurrency,
            "connected": sum(1 for s in arena.referee.sessions.values() if s.is_open),
            "uptime_s": round(time.time() - arena.started_at),
            **views.workers(arena),
            "refused": len(arena.failures),
            "forfeits": sum(row["forfeits"] for row in rows.values()),
        },
    }


def bots_data(arena: Arena) -> list[dict[str, Any]]:
    """Games per ladder name (issue 35: a fair ladder shows its spread): every bot that has
    played or plays now, its player, whether hosted, its status, games and pairs in flight;
    most games first."""
    hosting = arena.hosting
    names = {name for name, games in arena.games_played.items() if games} | {
        name for name, playing in arena.in_flight.items() if playing
    }
    rows = []
    for name in names:
        hosted = hosting.is_hosted(name)
        rows.append(
            {
                "bot": name,
                **views.player_status(arena, name),
                "kind": "hosted" if hosted else "connected",
                "games": arena.games_played[name],
                "playing": arena.in_flight[name],
            }
        )
    return sorted(rows, key=lambda row: (-row["games"], row["bot"]))


def _clock(request: Request) -> GameClock:
    clock: GameClock = request.app.state.game_clock
    return clock


@access(Access.PUBLIC)  # the page holds no data: its script asks with the token
async def desk(request: Request) -> Response:
    """The desk's page: a sign-in form until the token is given, then the sections."""
    return page(request, "admin.html", {})


@access(Access.ORGANIZER)
async def sections(request: Request) -> Response:
    """The desk's sections as HTML."""
    context = desk_data(arena_of(request), _clock(request))
    return HTMLResponse(TEMPLATES.get_template("_desk.html").render(context))


@access(Access.ORGANIZER)
async def api_desk(request: Request) -> Response:
    """The desk's data as JSON."""
    return JSONResponse(desk_data(arena_of(request), _clock(request)))


ROUTES = [
    Route("/admin", desk),
    Route("/admin/sections", sections),
    Route("/api/admin", api_desk),
]
