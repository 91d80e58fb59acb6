"""The arena's read-only JSON API: what the pages show, for scripts (``bench arena`` too)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tacocat_arena.web import views
from tacocat_arena.web.access import Access, access, error
from tacocat_arena.web.pages import bot_data
from tacocat_arena.web.rendering import arena_of

#: Most games one ``/api/games`` answer lists.
GAMES_LIMIT = 1000


@access(Access.PUBLIC)
async def leaderboard(request: Request) -> Response:
    """The leaderboard's rows."""
    return JSONResponse(views.leaderboard(arena_of(request)))


@access(Access.PUBLIC)
async def status(request: Request) -> Response:
    """The arena in numbers."""
    return JSONResponse(views.status(arena_of(request)))


@access(Access.PUBLIC)
async def connections(request: Request) -> Response:
    """Who is connected, the refused connections."""
    return JSONResponse(views.connections(arena_of(request)))


@access(Access.PUBLIC)
async def games(request: Request) -> Response:
    """Games in flight then finished ones, newest first (``?bot=``, ``?event=``, ``?limit=``)."""
    arena = arena_of(request)
    bot = request.query_params.get("bot")
    event = request.query_params.get("event")
    try:
        limit = min(GAMES_LIMIT, max(1, int(request.query_params.get("limit", "50"))))
    except ValueError:
        return error("limit must be an integer", 400)
    live = [
        views.live_summary(g)
        for g in arena.live.values()
        if (bot is None or bot in views.live_seats(g)) and (event is None or g.event == event)
    ]
    stored = arena.finished_games(bot=bot, event=event, limit=limit)
    return JSONResponse(live + [views.game_summary(g) for g in stored])


@access(Access.PUBLIC)
async def game(request: Request) -> Response:
    """A live game's spectator state, or a finished game with its record."""
    arena = arena_of(request)
    game_id = request.path_params["game_id"]
    live = arena.live.get(game_id)
    if live is not None:
        return JSONResponse(views.spectator_state(live))
    found = arena.finished_game(game_id)
    if found is None:
        why = views.held_reason(arena, game_id) or f"no game {game_id!r}"
        return error(why, 404)
    stored, record = found
    deal = arena.deal_of(stored)
    return JSONResponse({**views.game_summary(stored), "record": record, "deal": deal})


@access(Access.PUBLIC)
async def bot(request: Request) -> Response:
    """What the bot page shows, without its chart."""
    data = await bot_data(arena_of(request), request.path_params["name"])
    if data is None:
        return error("no such bot", 404)
    data.pop("chart")
    return JSONResponse(data)


ROUTES = [
    Route("/api/leaderboard", leaderboard),
    Route("/api/connections", connections),
    Route("/api/status", status),
    Route("/api/games", games),
    Route("/api/games/{game_id}", game),
    Route("/api/bots/{name}", bot),
]
