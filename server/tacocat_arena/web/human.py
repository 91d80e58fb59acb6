"""A person's games in the arena (docs/human-seat.md, "In the arena"): a signed-in player
challenges a bot and plays it on a page of its own.

``POST /api/human/challenges`` (the player's token) starts the game (``human.challenges``)
and answers the page's address, ``/human/KEY/``: the key is the page's secret, given only
to the token's holder.  The page's own routes are those of ``play human`` (``human.page``'s
handlers), under that key.  ``GET /api/human/games`` lists the person's games, unrated and
apart from the ladder; ``/human/`` is the form that challenges.
"""

from __future__ import annotations

import json

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tacocat_arena.human.challenges import Challenge, ChallengeError, Challenges
from tacocat_arena.human.page import (
    MAX_BODY_BYTES,
    action_response,
    asset_response,
    events_response,
    twin_response,
)
from tacocat_arena.web.access import Access, access, caller, error
from tacocat_arena.web.rendering import arena_of


def challenges_of(request: Request) -> Challenges:
    """The arena's person's games (``DIR/human/``), opened on first use."""
    found: Challenges | None = getattr(request.app.state, "challenges", None)
    if found is None:
        arena = arena_of(request)
        bot_s = arena.settings.referee.clock.decision_ms / 1000 or 1.0
        found = Challenges(
            arena.store.folder / "human", bot_move_timeout_s=bot_s, spawn=arena.spawn
        )
        request.app.state.challenges = found
    return found


def human_games_of(request: Request, player: str) -> list[dict[str, object]]:
    """``player``'s games against bots, newest first, for its page: none (and nothing
    created) where nobody ever played one."""
    if getattr(request.app.state, "challenges", None) is None:
        if not (arena_of(request).store.folder / "human" / "games.sqlite").exists():
            return []
    return challenges_of(request).history(player)


@access(Access.PLAYER)
async def challenge(request: Request) -> Response:
    """Start the player's game against the bot the body names: 201 with the page's address."""
    player = caller(request).player
    assert player is not None  # Access.PLAYER
    body = await request.body()
    try:
        asked = json.loads(body) if len(body) <= MAX_BODY_BYTES else None
    except ValueError:
        asked = None
    if not isinstance(asked, dict):
        return error('send a JSON object: {"opponent": "greedy"}', 400)
    try:
        started = challenges_of(request).start(player, asked.get("opponent"))
    except ChallengeError as refusal:
        return error(str(refusal), 409)
    return JSONResponse(
        {"url": f"/human/{started.key}/", "game": started.number, "opponent": started.opponent},
        201,
    )


@access(Access.PUBLIC)
async def games(request: Request) -> Response:
    """The person's games (``?player=NAME``: one player's), newest first: not rated."""
    player = request.query_params.get("player")
    found = challenges_of(request)
    return JSONResponse({"games": found.history(player), "opponents": found.opponents()})


@access(Access.PUBLIC)
async def form(request: Request) -> Response:
    """The page that challenges (its script asks for the player's token)."""
    name = request.path_params.get("asset", "challenge.html")
    if name not in ("challenge.html", "challenge.js", "human.css"):
        return error("no such page", 404)
    return asset_response(name)


def _challenge(request: Request) -> Challenge | None:
    return challenges_of(request).get(request.path_params["key"])


@access(Access.PUBLIC)
async def seat_asset(request: Request) -> Response:
    """The person's page (``/human/KEY/``) and its script and style: the key is the secret."""
    if _challenge(request) is None:
        return error("no such game", 404)
    return asset_response(request.path_params.get("asset", ""))


@access(Access.PUBLIC)
async def seat_events(request: Request) -> Response:
    """The seat's states as server-sent events."""
    found = _challenge(request)
    return error("no such game", 404) if found is None else events_response(found.relay)


@access(Access.PUBLIC)
async def seat_action(request: Request) -> Response:
    """The page's answer to its open request."""
    found = _challenge(request)
    return (
        error("no such game", 404) if found is None else await action_response(found.relay, request)
    )


@access(Access.PUBLIC)
async def seat_twin(request: Request) -> Response:
    """No twin game is offered in the arena; refused like any answer to no offer."""
    found = _challenge(request)
    return (
        error("no such game", 404) if found is None else await twin_response(found.relay, request)
    )


ROUTES = [
    Route("/api/human/challenges", challenge, methods=["POST"]),
    Route("/api/human/games", games),
    Route("/human/", form),
    Route("/human/{asset:str}", form),
    Route("/human/{key:str}/", seat_asset),
    Route("/human/{key:str}/events", seat_events),
    Route("/human/{key:str}/action", seat_action, methods=["POST"]),
    Route("/human/{key:str}/twin", seat_twin, methods=["POST"]),
    Route("/human/{key:str}/{asset:str}", seat_asset),
]
