"""Submissions over HTTP: a player uploads its bot package; anyone lists the versions.

``POST /api/submissions`` takes the archive as the request's body, authenticated by the
player's own token (``Authorization: Bearer TOKEN``).  The body is written to a temporary
file as it arrives and refused once it passes the archive cap (a ``Content-Length`` over it
is refused before reading); an upload cut mid-way is removed and leaves no version.  Only a
whole body becomes the player's next version, which the gate then builds and checks.  The
body has ``UPLOAD_TIMEOUT_S`` to arrive.
"""

from __future__ import annotations

import asyncio

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tacocat_arena.arena.hosted import Hosting
from tacocat_arena.arena.store import ArenaError
from tacocat_arena.arena.submissions import Status, player_for_token, receive_body
from tacocat_arena.web.rendering import arena_of

#: Seconds an upload's body may take to arrive (a body trickled in never holds a connection
#: for ever; 64 MiB at 1 MiB/s fits).
UPLOAD_TIMEOUT_S = 120.0


def hosting_of(request: Request) -> Hosting | None:
    """The arena's hosting, or None where it takes no submissions."""
    return arena_of(request).hosting


def _no_hosting() -> Response:
    return JSONResponse({"error": "this arena takes no submissions"}, 404)


async def submit(request: Request) -> Response:
    """Receive a package archive as the player's next version (201, or 422 if refused)."""
    hosting = hosting_of(request)
    if hosting is None:
        return _no_hosting()
    header = request.headers.get("authorization", "")
    token = header.removeprefix("Bearer ") if header.startswith("Bearer ") else ""
    player = player_for_token(hosting.arena.store, token) if token else None
    if player is None:
        return JSONResponse(
            {"error": "send your player's token: 'Authorization: Bearer <token>'"}, 401
        )
    cap = hosting.settings.caps.archive_bytes
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > cap:
        return JSONResponse(
            {"error": f"the upload is {length} bytes, over the cap of {cap} (archive_bytes)"},
            413,
        )
    body = hosting.submissions.receiving()
    try:
        async with asyncio.timeout(UPLOAD_TIMEOUT_S):
            await receive_body(request.stream(), body, cap)
    except ArenaError as error:
        return JSONResponse({"error": str(error)}, 413)
    except ClientDisconnect:
        return JSONResponse({"error": "the upload was cut off: no version was made"}, 400)
    except TimeoutError:
        message = f"the upload took over {UPLOAD_TIMEOUT_S:g} s: no version was made"
        return JSONResponse({"error": message}, 408)
    version = await hosting.submit(player, body)
    detail = hosting.detail(version.player, version.version)
    assert detail is not None
    # What happened to the player's earlier versions that it may not know yet.
    detail["suspended"] = [
        {"version": v.version, "reason": v.reason}
        for v in hosting.submissions.versions(player)
        if v.status is Status.SUSPENDED
    ]
    return JSONResponse(detail, 422 if version.status is Status.REJECTED else 201)


async def listing(request: Request) -> Response:
    """Every version: player, version, sha256, status, games, reason."""
    hosting = hosting_of(request)
    return JSONResponse([] if hosting is None else hosting.summaries())


async def version(request: Request) -> Response:
    """One version with its gate's log."""
    hosting = hosting_of(request)
    if hosting is None:
        return _no_hosting()
    try:
        number = int(request.path_params["version"].removeprefix("v"))
    except ValueError:
        return JSONResponse({"error": "a version is a number: /api/submissions/alice/2"}, 400)
    found = hosting.detail(request.path_params["player"], number)
    if found is None:
        return JSONResponse({"error": "no such version"}, 404)
    return JSONResponse(found)


ROUTES = [
    Route("/api/submissions", submit, methods=["POST"]),
    Route("/api/submissions", listing),
    Route("/api/submissions/{player}/{version}", version),
]
