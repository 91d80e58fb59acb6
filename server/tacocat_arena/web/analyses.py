"""Analysis on request (``arena/analyses.py`` runs it): ``POST /api/players/NAME/analyses``
with ``{"game": ID, "seat": S, "reference": SPEC}`` (seat and reference optional) asks for
one of NAME's finished games to be analysed; ``GET`` on the same address lists NAME's
requests with their state, progress and result.  Both for NAME's token and the organizer's
alone: no token 401, any other 404 as for no such player.  A finished analysis is shown on
the game's public page (``/games/ID``: its marks; ``?analysis=S`` picks the seat), as
anyone's ``analyze`` of the public record would show it."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tacocat_arena.arena.analyses import (
    ANALYSIS_DIR,
    Analyses,
    AnalysisRefused,
    parse_reference,
)
from tacocat_arena.arena.failures import bots_of
from tacocat_arena.arena.ladder import Arena
from tacocat_arena.web.access import Access, access
from tacocat_arena.web.access import error as error_answer
from tacocat_arena.web.rendering import arena_of

#: The most bytes of a request's body.
BODY_BYTES = 4096


def analyses_of(request: Request) -> Analyses:
    """The app's analyses, in the arena's folder (made at their first use)."""
    state = request.app.state
    found: Analyses | None = getattr(state, "analyses", None)
    if found is None:
        found = state.analyses = Analyses(arena_of(request).store.folder / ANALYSIS_DIR)
    return found


@access(Access.OWNER_UNSEEN, owner="name")
async def analyses(request: Request) -> Response:
    """GET: NAME's requests; POST: a new one (202, or 200 from the cache)."""
    arena = arena_of(request)
    name = request.path_params["name"]
    queue = analyses_of(request)
    if request.method == "GET":
        return JSONResponse({"analyses": [queue.status(j) for j in queue.of_player(name)]})
    try:
        body = await _body(request)
        game_id = str(body["game"])
        seat = body.get("seat")
        reference = parse_reference(body.get("reference"))
        record, seat = own_seat(arena, name, game_id, seat)
        job = queue.request(name, game_id, seat, reference, record)
    except AnalysisRefused as error:
        return error_answer(str(error), error.status)
    except (KeyError, TypeError, ValueError, RecursionError):  # RecursionError: a deep body
        return error_answer(
            'send {"game": "ID", "seat": 0 or 1 (optional), "reference": SPEC (optional)}', 400
        )
    shown = queue.status(job)
    return JSONResponse(shown, 200 if shown["state"] == "done" else 202)


async def _body(request: Request) -> dict[str, Any]:
    data = b""
    async for chunk in request.stream():
        data += chunk
        if len(data) > BODY_BYTES:
            raise AnalysisRefused(f"the request's body is over {BODY_BYTES} bytes", 413)
    found = json.loads(data or b"{}")
    if not isinstance(found, dict):
        raise ValueError("not an object")
    return found


def own_seat(arena: Arena, player: str, game_id: str, seat: Any) -> tuple[dict[str, Any], int]:
    """The record of published game ``game_id`` and the seat of it that ``player``'s bots
    played (``seat`` if given; it must be theirs); 404 for a game that is not theirs, as for
    one that does not exist."""
    found = arena.finished_game(game_id)
    mine = set(bots_of(arena, player))
    seats = [] if found is None else [s for s, n in enumerate(found[0].result.seats) if n in mine]
    if seat is not None:
        if seat not in (0, 1) or isinstance(seat, bool):
            raise AnalysisRefused(f"seat {seat!r}: a seat is 0 or 1", 400)
        seats = [s for s in seats if s == seat]
    if found is None or not seats:
        raise AnalysisRefused(f"no finished game {game_id[:40]!r} of {player}'s", 404)
    stored, record = found
    if record.get("unplayed"):
        raise AnalysisRefused(f"game {game_id} was never played: nothing to analyse", 409)
    return record, seats[0]


def page_analysis(request: Request, game_id: str) -> dict[str, Any] | None:
    """The analysis a finished game's page shows: the seat ``?analysis=S`` asks for, else
    the first cached (default reference first); None if there is none."""
    found = analyses_of(request).results_of(game_id)
    wanted = request.query_params.get("analysis")
    if wanted in ("0", "1"):
        found = [r for r in found if r.get("seat") == int(wanted)]
    return found[0] if found else None


ROUTES = [Route("/api/players/{name}/analyses", analyses, methods=["GET", "POST"])]
