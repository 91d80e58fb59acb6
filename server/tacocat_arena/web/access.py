"""Who a request speaks for and what each route lets it do: the one place where the web reads
a bearer token and refuses a request for want of the right one.

A request's ``Authorization: Bearer TOKEN`` makes its ``Caller``: the organizer (the token of
``DIR/organizer.token``), a registered player (its own token), or nobody.  Every handler
declares its route's ``Access`` with ``@access(...)``, which refuses before the handler runs:

- ``PUBLIC``: anyone (the handler may show more to a caller who ``may_read`` it);
- ``ORGANIZER``: the organizer's token, else 401 saying where that token is;
- ``PLAYER``: a registered player's token (the request acts for that player), else 401;
- ``OWNER``: the token of the player the URL names, or the organizer's; no valid token 401,
  another player's token 403 (it names whose it is);
- ``OWNER_UNSEEN``: the same, but any other token, garbled or another player's, is told 404,
  as for no such player, so that a stranger learns nothing, not even who exists.

tests/test_web_access.py enumerates the app's routes: a route whose handler declares no
access fails it, and each protected one is sent no token, a garbled token and another
player's, over real HTTP.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from tacocat_arena.arena.players import player_for_token, token_matches
from tacocat_arena.arena.store import ArenaError
from tacocat_arena.web.rendering import arena_of

Handler = Callable[[Request], Awaitable[Response]]


class Access(enum.Enum):
    """Whose token a route needs (see the module docstring)."""

    PUBLIC = "public"
    ORGANIZER = "organizer"
    PLAYER = "player"
    OWNER = "owner"
    OWNER_UNSEEN = "owner, unseen by others"


@dataclass(frozen=True)
class Caller:
    """Whom a request's bearer token names: ``player`` (None: no player's token) and whether
    it is the organizer's; ``token`` is False when the request sent none at all."""

    token: bool
    player: str | None
    organizer: bool

    def may_read(self, player: str) -> bool:
        """Whether this caller may see ``player``'s private data (its own, or the organizer)."""
        return self.organizer or (self.player is not None and self.player == player)


def bearer(request: Request) -> str:
    """The bearer token ``request`` carries ('' without one)."""
    header = request.headers.get("authorization", "")
    return header.removeprefix("Bearer ") if header.startswith("Bearer ") else ""


def caller(request: Request) -> Caller:
    """Whom ``request`` speaks for (looked up once per request)."""
    found: Caller | None = getattr(request.state, "caller", None)
    if found is None:
        token = bearer(request)
        store = arena_of(request).store
        organizer = store.meta("organizer_token_hash")
        found = Caller(
            token=bool(token),
            player=player_for_token(store, token) if token else None,
            organizer=bool(token) and token_matches(token, organizer),
        )
        request.state.caller = found
    return found


#: The 401 of an organizer's route.
ORGANIZER_ONLY = "organizer only: send 'Authorization: Bearer <DIR/organizer.token>'"
#: The 401 of a player's route.
PLAYERS_TOKEN = "send your player's token: 'Authorization: Bearer <token>'"


def refusal(request: Request, needs: Access, owner_param: str) -> Response | None:
    """The answer refusing ``request`` a route that ``needs`` that access, or None if allowed;
    ``owner_param`` is the path parameter naming the owner (``OWNER`` kinds)."""
    if needs is Access.PUBLIC:
        return None
    who = caller(request)
    if needs is Access.ORGANIZER:
        return None if who.organizer else error(ORGANIZER_ONLY, 401)
    if needs is Access.PLAYER:
        return None if who.player is not None else error(PLAYERS_TOKEN, 401)
    owner = request.path_params[owner_param]
    if who.may_read(owner):
        return None
    if needs is Access.OWNER_UNSEEN:
        return (
            error("no such player, or not yours", 404) if who.token else error(PLAYERS_TOKEN, 401)
        )
    if who.player is None:
        return error(PLAYERS_TOKEN, 401)
    return error(f"this token is {who.player}'s, not {owner}'s", 403)


def access(needs: Access, *, owner: str = "player") -> Callable[[Handler], Handler]:
    """Declare the access a handler's route needs (``owner``: the path parameter naming the
    owner, for ``OWNER`` kinds); the request is refused before the handler runs."""

    def declare(handler: Handler) -> Handler:
        @functools.wraps(handler)
        async def guarded(request: Request) -> Response:
            refused = refusal(request, needs, owner)
            return refused if refused is not None else await handler(request)

        _DECLARED[guarded] = needs
        return guarded

    return declare


_DECLARED: dict[Callable[..., object], Access] = {}


def access_of(endpoint: Callable[..., object]) -> Access | None:
    """What ``endpoint`` declared with ``@access`` (None: it declared nothing)."""
    return _DECLARED.get(endpoint)


def error(message: str, status: int) -> Response:
    """Every refusal's shape: ``{"error": message}`` with ``status``."""
    return JSONResponse({"error": message}, status)


async def arena_error(request: Request, exc: Exception) -> Response:
    """The answer to an ``ArenaError`` a handler let through: the status its class carries
    (``ArenaError.http_status``: 409, ``NotFound`` 404, ``TooLarge`` 413), its message.  The
    app installs it as its one handler of that exception."""
    assert isinstance(exc, ArenaError)
    return error(str(exc), exc.http_status)
