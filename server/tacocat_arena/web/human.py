"""A person's games in the arena (docs/human-seat.md, "In the arena"): a signed-in player
challenges a bot and plays it on a page of its own.

``POST /api/human/challenges`` (the player's token) starts the game (``human.challenges``)
and answers the page's address, ``/human/KEY/``: the key is the page's secret, given only
to the token's holder.  The page's own routes are those of ``play human`` (``human.page``'s
handlers), under that key; its writes are refused from any other origin than the arena's
own (``page.write_refusal``, the one check of ``play human``'s page too).
``GET /api/human/games`` lists the person's games, unrated and apart from the ladder, and
what may be challenged; ``/human/`` is the form that challenges.

An opponent is an example bot or an active hosted version (``hosted_opponent``): the
version's package as the hosted wing starts it (``Hosting.human_spec``: its sandbox, its
limits), holding one of the arena's referee slots (``Arena.reserve(local=True)``) until the
game ends, so a person's game never makes the arena referee more than its ``concurrency``.
``POST /api/human/versions/PLAYER/N`` (the owner's token) opts a version out of human
challenges or back in.  A challenge with ``"pair": true`` is a duplicate pair: the twin game
(the same deal, seats swapped) is offered on the page after the first, as ``play human
--pair`` offers it, and the table keeps both results and the pair's score.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tacocat_arena.arena.hosted import hosted_of
from tacocat_arena.arena.ladder import Arena
from tacocat_arena.arena.submissions import PLAYING, identity, parse_identity, parse_version_number
from tacocat_arena.human.challenges import Challenge, ChallengeError, Challenges, Opponent
from tacocat_arena.human.page import (
    action_response,
    asset_response,
    events_response,
    json_body,
    twin_response,
    write_refusal,
)
from tacocat_arena.web.access import Access, access, caller, error
from tacocat_arena.web.rendering import arena_of


def challenges_of(request: Request) -> Challenges:
    """The arena's person's games (``DIR/human/``), opened on first use."""
    found: Challenges | None = getattr(request.app.state, "challenges", None)
    if found is None:
        arena = arena_of(request)
        bot_s = arena.settings.referee.clock.decision_ms / 1000  # 0: no limit, as the arena's
        found = Challenges(
            arena.store.folder / "human", bot_move_timeout_s=bot_s, spawn=arena.spawn
        )
        request.app.state.challenges = found
    return found


def _existing(request: Request) -> Challenges | None:
    """The arena's person's games, or None (and nothing created) where nobody ever played
    one or opted a version out: what the player's page reads."""
    if getattr(request.app.state, "challenges", None) is None:
        if not (arena_of(request).store.folder / "human" / "games.sqlite").exists():
            return None
    return challenges_of(request)


def human_games_of(request: Request, player: str) -> list[dict[str, object]]:
    """``player``'s games against bots, newest first, for its page (``_existing``)."""
    found = _existing(request)
    return [] if found is None else found.history(player)


def hosted_versions(arena: Arena) -> list[str]:
    """The hosted versions on the ladder now (active or in probation), by name."""
    hosting = hosted_of(arena)
    return [] if hosting is None else [v.identity for v in hosting.with_status(*PLAYING)]


def hosted_opponent(arena: Arena, challenges: Challenges, player: str, name: str) -> Opponent:
    """Hosted version ``name`` as an opponent: refused unless it is on the ladder now, its
    owner did not opt it out, the player may start a game and the arena has a referee slot
    free; the slot is held (``Arena.reserve``) until ``Opponent.release``."""
    if name not in hosted_versions(arena):
        raise ChallengeError(f"{name[:60]!r} is no hosted version playing on this arena now")
    refused = challenges.refusal(player, name)
    if refused:
        raise ChallengeError(refused)
    if arena.concurrency_left() <= 0:
        raise ChallengeError("the arena's referee slots are all in use: try again soon")
    hosting = hosted_of(arena)
    assert hosting is not None  # hosted_versions named it
    spec = hosting.human_spec(name)
    if spec is None:
        raise ChallengeError(f"{name} left the ladder a moment ago")
    pairing = arena.reserve(f"person {player}", name, deals=0, games=0, local=True)
    released: list[bool] = []

    def release() -> None:
        if not released:
            released.append(True)
            arena.release(pairing)

    return Opponent(spec, release)


@access(Access.PLAYER)
async def challenge(request: Request) -> Response:
    """Start the player's game against the bot the body names: 201 with the page's address."""
    player = caller(request).player
    assert player is not None  # Access.PLAYER
    asked = await _json_object(request, '{"opponent": "greedy"}')
    if isinstance(asked, Response):
        return asked
    pair = asked.get("pair", False)
    if not isinstance(pair, bool):
        return error('"pair" is true (the twin game offered after the first) or false', 400)
    found = challenges_of(request)
    opponent = asked.get("opponent")
    try:
        if isinstance(opponent, str) and parse_identity(opponent) is not None:
            opponent = hosted_opponent(arena_of(request), found, player, opponent)
        started = found.start(player, opponent, pair=pair)
    except ChallengeError as refusal:
        return error(str(refusal), 409)
    return JSONResponse(
        {
            "url": f"/human/{started.key}/",
            "game": started.number,
            "opponent": started.opponent,
            "pair": pair,
        },
        201,
    )


async def _json_object(request: Request, hint: str) -> dict[str, object] | Response:
    """The request's body as a JSON object (``page.json_body``: read as it comes, 413 past
    ``MAX_BODY_BYTES``), else the 400 that shows ``hint``, the body this route takes."""
    asked = await json_body(request)
    if isinstance(asked, Response) and asked.status_code != 413:
        return error(f"send a JSON object: {hint}", 400)
    return asked


@access(Access.PUBLIC)
async def games(request: Request) -> Response:
    """The person's games (``?player=NAME``: one player's), newest first: not rated; and
    what may be challenged (the example bots, the hosted versions not opted out)."""
    player = request.query_params.get("player")
    found = challenges_of(request)
    out = found.opted_out()
    hosted = [name for name in hosted_versions(arena_of(request)) if name not in out]
    return JSONResponse({"games": found.history(player), "opponents": found.opponents() + hosted})


@access(Access.OWNER)
async def opt_out(request: Request) -> Response:
    """Opt the owner's version out of human challenges (``{"challenges": false}``) or back
    in (``true``); a game in play against it plays on."""
    player = request.path_params["player"]
    number = parse_version_number(request.path_params["number"])
    hosting = hosted_of(arena_of(request))
    if number is None or hosting is None or hosting.version(player, number) is None:
        return error(f"{player} has no version {request.path_params['number'][:20]!r}", 404)
    asked = await _json_object(request, '{"challenges": false} (or true)')
    if isinstance(asked, Response):
        return asked
    wanted = asked.get("challenges")
    if not isinstance(wanted, bool):
        return error('send a JSON object: {"challenges": false} (or true)', 400)
    name = identity(player, number)
    challenges_of(request).set_opted_out(name, not wanted)
    return JSONResponse({"bot": name, "challenges": wanted})


def opted_out_of(request: Request) -> set[str]:
    """The versions opted out of human challenges, for the player's page (``_existing``)."""
    found = _existing(request)
    return set() if found is None else found.opted_out()


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
    if found is None:
        return error("no such game", 404)
    refused = write_refusal(request.scope)
    return error(refused, 403) if refused else await action_response(found.relay, request)


@access(Access.PUBLIC)
async def seat_twin(request: Request) -> Response:
    """The person's answer to the twin game's offer (a challenge of a pair); refused like
    any answer to no offer otherwise."""
    found = _challenge(request)
    if found is None:
        return error("no such game", 404)
    refused = write_refusal(request.scope)
    return error(refused, 403) if refused else await twin_response(found.relay, request)


ROUTES = [
    Route("/api/human/challenges", challenge, methods=["POST"]),
    Route("/api/human/games", games),
    Route("/api/human/versions/{player:str}/{number:str}", opt_out, methods=["POST"]),
    Route("/human/", form),
    Route("/human/{asset:str}", form),
    Route("/human/{key:str}/", seat_asset),
    Route("/human/{key:str}/events", seat_events),
    Route("/human/{key:str}/action", seat_action, methods=["POST"]),
    Route("/human/{key:str}/twin", seat_twin, methods=["POST"]),
    Route("/human/{key:str}/{asset:str}", seat_asset),
]
