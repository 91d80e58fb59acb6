"""The arena's web page and JSON API (Starlette, Jinja2 templates, server-sent events).

Handlers are thin: they read the request, call a function of ``views`` and render a template
file or JSON.  The app runs on the arena's own asyncio loop (``serve_web``), so it reads the
arena's state directly, without locks: nothing changes between two awaits.  Organizer
actions (pause, resume, add or revoke a player) need the organizer's token as a bearer token.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from tacocat_arena.arena.ladder import Arena
from tacocat_arena.arena.players import add_player, check_name, token_matches
from tacocat_arena.arena.store import ArenaError
from tacocat_arena.play.narrate import narrate
from tacocat_arena.report import FrameError, render_replay
from tacocat_arena.web import views

TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
TEMPLATES.env.auto_reload = False  # no stat() of every template on every page
#: Seconds between keep-alive comments on an idle event stream.
KEEPALIVE_S = 15.0
#: Seconds between two looks at a live game for its page's stream.
LIVE_POLL_S = 0.2


def create_app(arena: Arena) -> Starlette:
    """The web application of ``arena``."""

    def page(request: Request, name: str, context: dict[str, Any], status: int = 200) -> Response:
        return TEMPLATES.TemplateResponse(request, name, context, status_code=status)

    def index_context() -> dict[str, Any]:
        return {
            "rows": views.leaderboard(arena),
            "connections": views.connections(arena),
            "live": [views.live_summary(g) for g in arena.live.values()],
            "recent": [views.game_summary(g) for g in list(arena.recent)[:20]],
            "total": len(arena.results),
        }

    async def index(request: Request) -> Response:
        return page(request, "index.html", index_context())

    async def events(request: Request) -> Response:
        """The index page's stream: its sections re-rendered whenever one changes."""

        def sections() -> dict[str, str]:
            context = index_context()
            return {
                name: TEMPLATES.get_template(f"_{name}.html").render(context)
                for name in ("leaderboard", "connections", "games")
            }

        return _event_stream(arena, sections)

    async def bot_page(request: Request) -> Response:
        name = request.path_params["name"]
        data = await _bot(arena, name)
        if data is None:
            return page(request, "missing.html", {"what": f"bot {name!r}"}, 404)
        return page(request, "bot.html", data)

    async def game_page(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        live = arena.live.get(game_id)
        if live is not None:
            return page(request, "live.html", {"game": views.spectator_state(live)})
        found = arena.store.game(game_id)
        if found is None:
            return page(request, "missing.html", {"what": f"game {game_id!r}"}, 404)
        stored, record = found
        if not record.get("unplayed") and "account" not in request.query_params:
            # The replay viewer of the report pages (one self-contained page), built off the
            # loop: it costs as much as many requests.
            try:
                html = await asyncio.to_thread(
                    render_replay, record, stored.result.seats, game_id=game_id, back_href="/"
                )
                return HTMLResponse(html)
            except FrameError:
                pass  # shown as a plain account below
        account = list(narrate(record, stored.result.seats))
        context = {"game": views.game_summary(stored), "account": account}
        return page(request, "game.html", context)

    async def game_events(request: Request) -> Response:
        """A live game's stream: its spectator state on every change, then ``end``."""
        game_id = request.path_params["game_id"]

        def state() -> dict[str, str]:
            live = arena.live.get(game_id)
            if live is None:
                return {"end": json.dumps({"id": game_id})}
            return {"state": json.dumps(views.spectator_state(live))}

        return _event_stream(arena, state, until="end", poll_s=LIVE_POLL_S)

    async def api_leaderboard(request: Request) -> Response:
        return JSONResponse(views.leaderboard(arena))

    async def api_status(request: Request) -> Response:
        return JSONResponse(views.status(arena))

    async def api_connections(request: Request) -> Response:
        return JSONResponse(views.connections(arena))

    async def api_games(request: Request) -> Response:
        bot = request.query_params.get("bot")
        event = request.query_params.get("event")
        try:
            limit = min(1000, max(1, int(request.query_params.get("limit", "50"))))
        except ValueError:
            return JSONResponse({"error": "limit must be an integer"}, 400)
        live = [
            views.live_summary(g)
            for g in arena.live.values()
            if (bot is None or bot in g.seats) and (event is None or g.event == event)
        ]
        stored = arena.store.games(bot=bot, event=event, limit=limit)
        return JSONResponse(live + [views.game_summary(g) for g in stored])

    async def api_game(request: Request) -> Response:
        game_id = request.path_params["game_id"]
        live = arena.live.get(game_id)
        if live is not None:
            return JSONResponse(views.spectator_state(live))
        found = arena.store.game(game_id)
        if found is None:
            return JSONResponse({"error": f"no game {game_id!r}"}, 404)
        stored, record = found
        return JSONResponse({**views.game_summary(stored), "record": record})

    async def api_bot(request: Request) -> Response:
        data = await _bot(arena, request.path_params["name"])
        if data is None:
            return JSONResponse({"error": "no such bot"}, 404)
        data.pop("chart")
        return JSONResponse(data)

    async def api_pause(request: Request) -> Response:
        if (refusal := _organizer_only(arena, request)) is not None:
            return refusal
        arena.paused = request.url.path.endswith("/pause")
        arena.wake()
        return JSONResponse({"paused": arena.paused})

    async def api_add_player(request: Request) -> Response:
        if (refusal := _organizer_only(arena, request)) is not None:
            return refusal
        try:
            body = await request.json()
            name = check_name(str(body["name"]))
            token = add_player(arena.store, name)
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": 'send {"name": "..."}'}, 400)
        except ArenaError as error:
            return JSONResponse({"error": str(error)}, 409)
        arena.active_players(refresh=True)
        arena.wake()
        return JSONResponse({"name": name, "token": token}, 201)

    async def api_revoke_player(request: Request) -> Response:
        if (refusal := _organizer_only(arena, request)) is not None:
            return refusal
        try:
            arena.store.revoke_player(request.path_params["name"])
        except ArenaError as error:
            return JSONResponse({"error": str(error)}, 404)
        arena.active_players(refresh=True)
        arena.wake()
        return JSONResponse({"revoked": request.path_params["name"]})

    return Starlette(
        routes=[
            Route("/", index),
            Route("/events", events),
            Route("/bots/{name}", bot_page),
            Route("/games/{game_id}", game_page),
            Route("/games/{game_id}/events", game_events),
            Route("/api/leaderboard", api_leaderboard),
            Route("/api/connections", api_connections),
            Route("/api/status", api_status),
            Route("/api/games", api_games),
            Route("/api/games/{game_id}", api_game),
            Route("/api/bots/{name}", api_bot),
            Route("/api/pause", api_pause, methods=["POST"]),
            Route("/api/resume", api_pause, methods=["POST"]),
            Route("/api/players", api_add_player, methods=["POST"]),
            Route("/api/players/{name}/revoke", api_revoke_player, methods=["POST"]),
        ]
    )


async def _bot(arena: Arena, name: str) -> dict[str, Any] | None:
    rows = [row for row in views.leaderboard(arena) if row["bot"] == name]
    if not rows:
        return None
    history = await arena.rating_history(name)
    return {
        "bot": name,
        "row": rows[0],
        "games": [views.game_summary(g) for g in arena.store.games(bot=name, limit=50)],
        "live": [views.live_summary(g) for g in arena.live.values() if name in g.seats],
        "failures": [views.failure_dict(f) for f in reversed(arena.failures) if f.name == name][
            :20
        ],
        "history": [
            {"games": g, "rating": round(r, 1), "rating_err": round(e, 1) if e < 1e9 else None}
            for g, r, e in history
        ],
        "chart": views.rating_points(history),
    }


def _organizer_only(arena: Arena, request: Request) -> Response | None:
    header = request.headers.get("authorization", "")
    token = header.removeprefix("Bearer ") if header.startswith("Bearer ") else ""
    if token_matches(token, arena.store.meta("organizer_token_hash")):
        return None
    return JSONResponse(
        {"error": "organizer only: send 'Authorization: Bearer <DIR/organizer.token>'"}, 401
    )


def _event_stream(
    arena: Arena, render: Any, *, until: str | None = None, poll_s: float | None = None
) -> StreamingResponse:
    """Server-sent events: ``render()`` (event name -> data) is sent when it differs from
    what was last sent, checked at each change of the arena (and every ``poll_s`` seconds:
    a live game's moves are not arena changes)."""

    async def stream() -> AsyncIterator[str]:
        last: dict[str, str] = {}
        yield "retry: 2000\n\n"
        quiet_since = time.monotonic()
        while not arena.closing:
            for name, data in render().items():
                if last.get(name) != data:
                    last[name] = data
                    quiet_since = time.monotonic()
                    yield "".join(_sse_lines(name, data))
                if name == until:
                    return
            await arena.changes.wait(poll_s or KEEPALIVE_S)
            if time.monotonic() - quiet_since >= KEEPALIVE_S:
                quiet_since = time.monotonic()
                yield ": keep-alive\n\n"

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


def _sse_lines(name: str, data: str) -> Iterator[str]:
    yield f"event: {name}\n"
    for line in data.splitlines() or [""]:
        yield f"data: {line}\n"
    yield "\n"


class _EmbeddedServer(uvicorn.Server):
    """uvicorn on a loop it does not own: the arena handles SIGINT/SIGTERM itself."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve_web(arena: Arena, host: str, port: int) -> tuple[_EmbeddedServer, int]:
    """Start the page on ``host:port`` (0 = a free port) on this loop; return the server and
    its port once it listens (``server.should_exit = True`` then stops it).  OSError if the
    address cannot be used."""
    try:
        sock = socket.create_server((host, port), reuse_port=False)
    except OSError as error:
        raise OSError(
            f"cannot listen on {host}:{port} for the web page: {error.strerror}; choose "
            "another --web HOST:PORT (port 0 picks a free one)"
        ) from None
    # Accepted connections inherit it: without it a keep-alive response written in two parts
    # waits for the client's delayed ACK (about 40 ms on Linux) before its second part.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    bound = sock.getsockname()[1]
    config = uvicorn.Config(
        create_app(arena),
        log_level="warning",
        lifespan="off",
        access_log=False,
        timeout_graceful_shutdown=2,
    )
    server = _EmbeddedServer(config)
    task = asyncio.ensure_future(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            task.result()
            raise OSError(f"the web page could not start on {host}:{bound}")
        await asyncio.sleep(0.01)
    server.task = task  # type: ignore[attr-defined]
    return server, bound
