"""The arena's web page and JSON API (Starlette, Jinja2 templates, server-sent events).

The routes live in modules named for what they serve: ``pages`` (HTML and its event
streams), ``api`` (read-only JSON), ``organizer`` (actions that need the organizer's token),
``uploads`` (bot submissions, with the player's token), ``desk`` (the organizer's page),
``players`` (a player's page and its versions), ``event_page`` (an event's rounds and
standings), ``failures`` (a player's own failures and
output, for its token and the organizer's), ``analyses`` (analysis of its games on request).
Handlers are thin: they read the request, call a function of ``views`` and render a template
file or JSON.  Each declares whose token its route needs (``access``: one place reads the
bearer token and refuses), and an ``ArenaError`` a handler lets through is answered with the
status its class carries (``access.arena_error``, the app's one handler of it).
The app runs on the arena's own asyncio loop (``serve_web``), so it reads the
arena's state directly, without locks: nothing changes between two awaits.
"""

from __future__ import annotations

import socket

import uvicorn
from starlette.applications import Starlette

from tacocat_arena.arena.ladder import Arena
from tacocat_arena.arena.store import ArenaError
from tacocat_arena.human.page import EmbeddedServer, start_embedded
from tacocat_arena.web import (
    analyses,
    api,
    desk,
    event_page,
    failures,
    human,
    organizer,
    pages,
    players,
    uploads,
)
from tacocat_arena.web.access import arena_error
from tacocat_arena.web.health import GameClock
from tacocat_arena.web.limits import StreamLimits, WebLimits, limited_protocol


def create_app(arena: Arena) -> Starlette:
    """The web application of ``arena`` (handlers find it on ``app.state.arena``)."""
    routes = [
        *pages.ROUTES,
        *players.ROUTES,
        *api.ROUTES,
        *organizer.ROUTES,
        *uploads.ROUTES,
        *desk.ROUTES,
        *failures.ROUTES,
        *event_page.ROUTES,
        *analyses.ROUTES,
        *human.ROUTES,  # a person's games (web/human.py)
    ]
    app = Starlette(routes=routes, exception_handlers={ArenaError: arena_error})
    app.state.arena = arena
    app.state.game_clock = GameClock(arena)
    return app


async def serve_web(
    arena: Arena, host: str, port: int, limits: WebLimits | None = None
) -> tuple[EmbeddedServer, int]:
    """Start the page on ``host:port`` (0 = a free port) on this loop, within ``limits``
    (``web/limits.py``); return the server and its port once it listens
    (``server.should_exit = True`` then stops it: ``human.page.start_embedded``, the one
    start-up of an embedded uvicorn).  OSError if the address cannot be used."""
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
    limits = limits or WebLimits()
    config = uvicorn.Config(
        StreamLimits(create_app(arena), limits),
        http=limited_protocol(limits),
        timeout_keep_alive=limits.keep_alive_s,
        backlog=limits.accept_batch,
        log_level="warning",
        lifespan="off",
        access_log=False,
        timeout_graceful_shutdown=2,
    )
    return await start_embedded(config, sock, "the web page"), bound
