"""The person's page: one HTML page, its state as server-sent events, answers as POSTs.

Starlette, like the arena's page (``web/``), and for the same reason SSE + POST rather than a
WebSocket: the page only needs a stream of states one way and an occasional answer the
other, both plain HTTP that any proxy and any test client speaks.  Every route is under a
random key (``/KEY/``) printed with the URL, so another local user who finds the port cannot
play (or watch) the person's seat.  What is sent is ``Relay.state()`` alone: the seat's own
view and the public facts (tests/test_human_seat.py scans every byte of it).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import socket
from collections.abc import AsyncIterator, Iterator, MutableSequence
from importlib import resources
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tacocat_arena.human.relay import Refusal, Relay

#: Seconds between keep-alive comments of an idle event stream.
KEEPALIVE_S = 10.0
#: The largest answer body read (an answer is a few dozen bytes).
MAX_BODY_BYTES = 4096
_STATIC = {
    "": ("human.html", "text/html; charset=utf-8"),
    "human.js": ("human.js", "text/javascript; charset=utf-8"),
    "human.css": ("human.css", "text/css; charset=utf-8"),
    # The arena's form that challenges a bot (web/human.py).
    "challenge.html": ("challenge.html", "text/html; charset=utf-8"),
    "challenge.js": ("challenge.js", "text/javascript; charset=utf-8"),
}
_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


@functools.cache
def _load(file: str) -> bytes:
    """A static file of the package, read once (``_STATIC``'s files only)."""
    return resources.files("tacocat_arena.human").joinpath("static", file).read_bytes()


def asset_response(name: str) -> Response:
    """The page (``""``), its script or its style sheet; 404 for any other name."""
    if name not in _STATIC:
        return Response("no such page", status_code=404, media_type="text/plain")
    file, media = _STATIC[name]
    return Response(_load(file), media_type=media, headers=_HEADERS)


def events_response(relay: Relay) -> StreamingResponse:
    """The relay's states as server-sent events, each change once, until the match ends."""

    async def stream() -> AsyncIterator[str]:
        yield "retry: 1000\n\n"
        seen = -1
        while True:
            if relay.seq != seen:
                seen = relay.seq
                state = relay.state()
                yield f"event: state\ndata: {json.dumps(state, separators=(',', ':'))}\n\n"
                if state["finished"]:
                    return
            else:
                yield ": keep-alive\n\n"
            await relay.wait_change(seen, KEEPALIVE_S)

    return StreamingResponse(
        stream(), media_type="text/event-stream", headers={**_HEADERS, "X-Accel-Buffering": "no"}
    )


async def action_response(relay: Relay, request: Request) -> JSONResponse:
    """The page's answer to its open request: 200 with what was played, or 409 saying why not
    (``Relay.answer``); 400/413 for a body that is no small JSON object."""
    body = await json_body(request)
    if isinstance(body, JSONResponse):
        return body
    try:
        played = relay.answer(body.get("request_id"), body.get("action"))
    except Refusal as refusal:
        return JSONResponse({"error": str(refusal)}, status_code=409, headers=_HEADERS)
    return JSONResponse({"played": str(played)}, headers=_HEADERS)


async def twin_response(relay: Relay, request: Request) -> JSONResponse:
    """The person's answer to the twin game's offer."""
    body = await json_body(request)
    if isinstance(body, JSONResponse):
        return body
    try:
        relay.choose_twin(body.get("accept"))
    except Refusal as refusal:
        return JSONResponse({"error": str(refusal)}, status_code=409, headers=_HEADERS)
    return JSONResponse({"ok": True}, headers=_HEADERS)


def create_page(relay: Relay, key: str) -> Starlette:
    """The page app of ``relay``'s seat, every route under ``/key/`` (``play human``'s; the
    arena serves the same handlers under ``/human/KEY/``, ``web/human.py``)."""

    async def page(request: Request) -> Response:
        return asset_response("")

    async def asset(request: Request) -> Response:
        return asset_response(request.path_params["asset"])

    async def events(request: Request) -> StreamingResponse:
        return events_response(relay)

    async def action(request: Request) -> JSONResponse:
        return await action_response(relay, request)

    async def twin(request: Request) -> JSONResponse:
        return await twin_response(relay, request)

    return Starlette(
        routes=[
            Route(f"/{key}/", page),
            Route(f"/{key}/events", events),
            Route(f"/{key}/action", action, methods=["POST"]),
            Route(f"/{key}/twin", twin, methods=["POST"]),
            Route(f"/{key}/{{asset:str}}", asset),  # last: it would match "events" too
        ]
    )


async def json_body(request: Request) -> dict[str, Any] | JSONResponse:
    """The request's JSON object, or the 400/413 response that says what is wrong with it.
    Read as it streams in and refused at ``MAX_BODY_BYTES``, never read whole first: a
    stranger's body could be as large as it likes (the arena's challenge and opt-out routes,
    web/human.py, read theirs by it too)."""
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return JSONResponse(
                {"error": f"the body is over {MAX_BODY_BYTES} bytes"}, status_code=413
            )
        chunks.append(chunk)
    try:
        body = json.loads(b"".join(chunks))
    except (ValueError, RecursionError):  # a few KiB of "[" is past the parser's depth
        return JSONResponse({"error": "the body is not JSON"}, status_code=400)
    if not isinstance(body, dict):
        return JSONResponse({"error": "the body must be a JSON object"}, status_code=400)
    return body


class Tap:
    """ASGI middleware that keeps a copy of every body byte the app sends (the tests' view
    of what reached the browser)."""

    def __init__(self, app: Any, sent: MutableSequence[bytes]) -> None:
        self.app = app
        self.sent = sent

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def tapped(message: Any) -> None:
            if message.get("type") == "http.response.body":
                self.sent.append(bytes(message.get("body", b"")))
            await send(message)

        await self.app(scope, receive, tapped)


class SameOrigin:
    """ASGI middleware of the page on loopback: it answers only to its own address as the
    Host (a DNS-rebound name reaching 127.0.0.1 is refused), and takes a write (any method
    but GET and HEAD) only from its own origin: a page of another site that POSTs to
    127.0.0.1 (a form or a fetch needs no preflight for text/plain) cannot answer for the
    person.  A request with no Origin and no Sec-Fetch-Site is no browser's cross-site
    request (a script's, which needs the key anyway)."""

    def __init__(self, app: Any, hosts: tuple[str, ...]) -> None:
        self.app = app
        self.hosts = frozenset(host.lower() for host in hosts)
        self.origins = frozenset(f"http://{host}" for host in self.hosts)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            refusal = self.refusal(scope)
            if refusal:
                response = JSONResponse({"error": refusal}, status_code=403, headers=_HEADERS)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def refusal(self, scope: Any) -> str:
        """Why this request is refused ("" if it is not)."""
        host = _headers(scope).get("host", "").lower()
        if host not in self.hosts:
            return f"this page answers only to the host {min(self.hosts)}, not {host[:100]!r}"
        return write_refusal(scope, self.origins)


def _headers(scope: Any) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


def write_refusal(scope: Any, origins: frozenset[str] | None = None) -> str:
    """Why a write to a person's seat is refused as another site's ("" if it is not): any
    method but GET and HEAD whose Origin is not one of ``origins`` (None: the request's own
    Host's, over http or https, as the arena's page behind whatever name it is served by)
    or whose Sec-Fetch-Site says another site sent it.  ``play human``'s page
    (``SameOrigin``) and the arena's ``/human/KEY/`` (web/human.py) both refuse by it."""
    if scope["method"] in ("GET", "HEAD"):
        return ""
    headers = _headers(scope)
    if origins is None:
        host = headers.get("host", "").lower()
        origins = frozenset({f"http://{host}", f"https://{host}"})
    origin = headers.get("origin")
    if origin is not None and origin.lower() not in origins:
        return f"an answer from another origin ({origin[:100]!r}) is refused"
    site = headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return f"an answer from another origin (Sec-Fetch-Site: {site[:40]}) is refused"
    return ""


class EmbeddedServer(uvicorn.Server):
    """uvicorn on a loop it does not own: the command (``play human``, ``serve``) handles
    SIGINT/SIGTERM itself.  ``task`` is its ``serve`` once ``start_embedded`` returns."""

    task: asyncio.Future[None]

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def start_embedded(config: uvicorn.Config, sock: socket.socket, what: str) -> EmbeddedServer:
    """Serve ``config``'s app on the listening ``sock`` on this loop; return the server once
    it listens (``should_exit = True`` stops it; await its ``task``).  The one start-up of
    the person's page and of the arena's (``web/app.serve_web``); OSError naming ``what``
    if uvicorn stops before it listens."""
    server = EmbeddedServer(config)
    server.task = asyncio.ensure_future(server.serve(sockets=[sock]))
    while not server.started:
        if server.task.done():
            server.task.result()
            host, port = sock.getsockname()[:2]
            raise OSError(f"{what} could not start on {host}:{port}")
        await asyncio.sleep(0.01)
    return server


async def serve_page(
    app: Any, host: str = "127.0.0.1", port: int = 0
) -> tuple[EmbeddedServer, int]:
    """Serve ``app`` on ``host:port`` (0: a free port) on this loop, to its own origin only
    (``SameOrigin``); return the server (``start_embedded``) and the port."""
    sock = socket.create_server((host, port), reuse_port=False)
    bound = sock.getsockname()[1]
    config = uvicorn.Config(
        SameOrigin(app, (f"{host}:{bound}", f"localhost:{bound}")),
        log_level="warning",
        lifespan="off",
        access_log=False,
        timeout_graceful_shutdown=1,
    )
    return await start_embedded(config, sock, "the page"), bound
