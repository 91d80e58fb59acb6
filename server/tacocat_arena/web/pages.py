"""The arena's HTML pages: the index (leaderboard, connections, games), a bot, a game.

Each handler reads the request, asks ``views`` for plain data and renders a template; the
index and a live game also have an event stream that re-sends what changed.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from tacocat_arena.arena.ladder import Arena
from tacocat_arena.arena.names import public_record
from tacocat_arena.play.narrate import narrate
from tacocat_arena.report import FrameError, end_update, live_update, render_live, render_replay
from tacocat_arena.web import views
from tacocat_arena.web.access import Access, access
from tacocat_arena.web.analyses import page_analysis
from tacocat_arena.web.charts import rating_chart
from tacocat_arena.web.rendering import TEMPLATES, arena_of, page
from tacocat_arena.web.streams import LIVE_POLL_S, SharedRender, event_stream

#: Where a game's page links back to, and what it calls it.
BACK = ("/", "the arena's leaderboard")
#: The index's parts, each a template ``_NAME.html`` and a section ``id="NAME"``.
INDEX_SECTIONS = ("leaderboard", "connections", "games")


def index_context(arena: Arena) -> dict[str, Any]:
    """What the index page and its stream's sections show."""
    rows = views.leaderboard(arena)
    return {
        "rows": rows,
        "counts": views.leaderboard_counts(arena, rows),
        "connections": views.connections(arena),
        "live": [views.live_summary(g) for g in arena.live.values()],
        "recent": [views.game_summary(g) for g in list(arena.recent)[:20]],
    }


@access(Access.PUBLIC)
async def index(request: Request) -> Response:
    """The leaderboard, who is connected and the latest games."""
    return page(request, "index.html", index_context(arena_of(request)))


@access(Access.PUBLIC)
async def index_events(request: Request) -> Response:
    """The index page's stream: its sections re-rendered whenever one changes (one render
    per change for all the open pages)."""
    arena = arena_of(request)
    shared = _INDEX_SECTIONS.get(arena)
    if shared is None:

        def sections() -> dict[str, str]:
            context = index_context(arena)
            return {
                name: TEMPLATES.get_template(f"_{name}.html").render(context)
                for name in INDEX_SECTIONS
            }

        shared = _INDEX_SECTIONS[arena] = SharedRender(arena, sections)
    return event_stream(arena, shared)


#: The index's sections of each arena, shared by its streams.
_INDEX_SECTIONS: weakref.WeakKeyDictionary[Arena, SharedRender] = weakref.WeakKeyDictionary()


@access(Access.PUBLIC)
async def bot_page(request: Request) -> Response:
    """One bot: its standing, rating over time, games and refused connections."""
    name = request.path_params["name"]
    data = await bot_data(arena_of(request), name)
    if data is None:
        return page(request, "missing.html", {"what": f"bot {name!r}"}, 404)
    return page(request, "bot.html", data)


@access(Access.PUBLIC)
async def game_page(request: Request) -> Response:
    """A live game's spectator page, or a finished game's replay (or plain account)."""
    arena = arena_of(request)
    game_id = request.path_params["game_id"]
    live = arena.live.get(game_id)
    if live is not None:
        if live.game is None:
            return page(request, "live.html", {"game": views.live_summary(live)})
        html = render_live(
            views.live_frames(live),
            views.live_seats(live),
            live.game.ruleset,
            game_id=game_id,
            stream=f"/games/{game_id}/events",
            back=BACK,
            pending=views.pending_decisions(live),
        )
        return HTMLResponse(html)
    found = arena.finished_game(game_id)
    if found is None:
        why = views.held_reason(arena, game_id)
        return page(request, "missing.html", {"what": f"game {game_id!r}", "why": why}, 404)
    stored, record = found
    summary = views.game_summary(stored)
    seats = summary["seats"]
    record = public_record(record, seats)
    if not record.get("unplayed") and "account" not in request.query_params:
        # The replay viewer of the report pages (one self-contained page), built off the
        # loop: it costs as much as many requests.
        try:
            html = await asyncio.to_thread(
                render_replay, record, seats, game_id=game_id, back_href=BACK[0],
                back_text=BACK[1], analysis=page_analysis(request, game_id),
            )  # fmt: skip
            return HTMLResponse(html)
        except FrameError:
            pass  # shown as a plain account below
    account = list(narrate(record, seats))
    context = {"game": summary, "account": account}
    return page(request, "game.html", context)


@access(Access.PUBLIC)
async def game_events(request: Request) -> Response:
    """A live game's stream: its spectator state and frames on every change, then ``end``
    with the finished game's frames (its record is public once it is stored)."""
    arena = arena_of(request)
    game_id = request.path_params["game_id"]

    def state() -> dict[str, str]:
        live = arena.live.get(game_id)
        if live is None:
            held = views.held_reason(arena, game_id)
            if held is not None:  # over, but its record waits for its duplicate twin
                return {"held": json.dumps({"id": game_id, "outcome": held})}
            found = arena.finished_game(game_id)
            names = ("seat 0", "seat 1") if found is None else views.game_summary(found[0])["seats"]
            record = None if found is None else public_record(found[1], names)
            try:
                ending = end_update(record, names)
            except FrameError:
                ending = end_update(None, names)
            return {"end": json.dumps({"id": game_id, **ending})}
        shown = {k: v for k, v in views.spectator_state(live).items() if k != "events"}
        return {"state": json.dumps({**shown, **live_update(views.live_frames(live))})}

    return event_stream(arena, state, until="end", poll_s=LIVE_POLL_S, interval_s=LIVE_POLL_S)


async def bot_data(arena: Arena, name: str) -> dict[str, Any] | None:
    """What the bot page and ``/api/bots/NAME`` show of ``name``; None if it has no row."""
    rows = [row for row in views.leaderboard(arena) if row["bot"] == name]
    if not rows:
        return None
    history = await arena.rating_history(name)
    return {
        "bot": name,
        "row": rows[0],
        "games": [views.game_summary(g) for g in arena.finished_games(bot=name, limit=50)],
        "live": [views.live_summary(g) for g in arena.live.values() if name in views.live_seats(g)],
        "failures": [views.failure_dict(f) for f in reversed(arena.failures) if f.name == name][
            :20
        ],
        "history": [
            {"games": g, "rating": round(r, 1), "rating_err": round(e, 1) if e < 1e9 else None}
            for g, r, e in history
        ],
        "chart": rating_chart(history, x_title=f"games played by {name}"),
    }


ROUTES = [
    Route("/", index),
    Route("/events", index_events),
    Route("/bots/{name}", bot_page),
    Route("/games/{game_id}", game_page),
    Route("/games/{game_id}/events", game_events),
]
