"""Submissions over HTTP: a player uploads its bot package; anyone lists the versions.

``POST /api/submissions`` takes the archive as the request's body, authenticated by the
player's own token (``Authorization: Bearer TOKEN``).  The body is written to a temporary
file as it arrives and refused once it passes the archive cap (a ``Content-Length`` over it
is refused before reading); an upload cut mid-way is removed and leaves no version.  Only a
whole body becomes the player's next version, which the gate then builds and checks.  The
body has ``UPLOAD_TIMEOUT_S`` to arrive.

A player makes one upload at a time and at most ``UploadQuota``'s uploads and bytes an hour:
over it, ``429`` with ``Retry-After`` before the body is read.  ``GET
/api/submissions/PLAYER/N`` shows the full reason and the gate's log only to the version's
owner (its token) and the organizer; anyone else reads its status and public reason.
"""

from __future__ import annotations

import asyncio

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tacocat_arena.arena.hosted import Hosting, hosted_of
from tacocat_arena.arena.submissions import Status, parse_version_number, receive_body
from tacocat_arena.web.access import Access, access, caller, error
from tacocat_arena.web.rendering import arena_of

#: Seconds an upload's body may take to arrive (a body trickled in never holds a connection
#: for ever; 64 MiB at 1 MiB/s fits).
UPLOAD_TIMEOUT_S = 120.0


def hosting_of(request: Request) -> Hosting | None:
    """The arena's hosting, or None where it takes no submissions."""
    return hosted_of(arena_of(request))


def _no_hosting() -> Response:
    return error("this arena takes no submissions", 404)


def _too_many(message: str, retry_after_s: int) -> Response:
    """429, saying when to try again."""
    return JSONResponse(
        {"error": message}, 429, headers={"Retry-After": str(max(1, retry_after_s))}
    )


@access(Access.PLAYER)
async def submit(request: Request) -> Response:
    """Receive a package archive as the player's next version (201, or 422 if refused)."""
    hosting = hosting_of(request)
    if hosting is None:
        return _no_hosting()
    player = caller(request).player
    assert player is not None  # Access.PLAYER
    cap = hosting.settings.caps.archive_bytes
    text = request.headers.get("content-length", "")
    length = int(text) if text.isdigit() and len(text) < 19 else None  # 400 digits: no length
    if length is None and text or length is not None and length > cap:
        return error(f"the upload is {text[:40]} bytes, over the cap of {cap} (archive_bytes)", 413)
    submissions = hosting.submissions
    if player in submissions.busy:
        return _too_many("another upload of yours is being received: one at a time", 5)
    over = submissions.over_quota(player, length or 0)
    if over is not None:
        return _too_many(over.message, over.retry_after_s)
    submissions.busy.add(player)
    try:
        return await _receive(request, hosting, player, cap)
    finally:
        submissions.busy.discard(player)


async def _receive(request: Request, hosting: Hosting, player: str, cap: int) -> Response:
    """The body, then the version it makes (the player's one upload at a time)."""
    body = hosting.submissions.receiving()
    try:
        async with asyncio.timeout(UPLOAD_TIMEOUT_S):
            size = await receive_body(request.stream(), body, cap)
    except ClientDisconnect:
        return error("the upload was cut off: no version was made", 400)
    except TimeoutError:
        return error(f"the upload took over {UPLOAD_TIMEOUT_S:g} s: no version was made", 408)
    over = hosting.submissions.over_quota(player, size)  # a body sent with no length
    if over is not None:
        body.unlink(missing_ok=True)
        return _too_many(over.message, over.retry_after_s)
    version = await hosting.submit(player, body)
    detail = hosting.detail(version.player, version.version, private=True)
    assert detail is not None
    # What happened to the player's earlier versions that it may not know yet.
    detail["suspended"] = [
        {"version": v.version, "reason": v.reason}
        for v in hosting.submissions.versions(player)
        if v.status is Status.SUSPENDED
    ]
    return JSONResponse(detail, 422 if version.status is Status.REJECTED else 201)


@access(Access.PUBLIC)
async def listing(request: Request) -> Response:
    """Every version: player, version, sha256, status, games, reason."""
    hosting = hosting_of(request)
    return JSONResponse([] if hosting is None else hosting.summaries())


@access(Access.PUBLIC)
async def version(request: Request) -> Response:
    """One version: with the full reason and its gate's log for its owner (its player's
    token) and the organizer; its status and public reason for anyone else."""
    hosting = hosting_of(request)
    if hosting is None:
        return _no_hosting()
    player = request.path_params["player"]
    number = parse_version_number(request.path_params["version"])
    if number is None:
        return error("no such version (a version is 1, 2, ...)", 404)
    found = hosting.detail(player, number, private=caller(request).may_read(player))
    if found is None:
        return error("no such version", 404)
    return JSONResponse(found)


ROUTES = [
    Route("/api/submissions", submit, methods=["POST"]),
    Route("/api/submissions", listing),
    Route("/api/submissions/{player}/{version}", version),
]
