"""Every route of the arena's web page declares whose token it needs, and every protected one
refuses a request without it (issue 40: one place reads the bearer token, web/access.py).

The routes are enumerated from the application itself, so a route added later cannot skip
the check: one that declares no access fails the first test, and each protected one is sent
no token, garbled ones, a revoked player's and another player's, over real HTTP to a real
``tacocat-arena serve``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import types
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from arena_support import ArenaProcess, add_players, start_arena
from starlette.routing import BaseRoute, Mount, Route

from tacocat_arena.arena.moderation import NoSuchVersion, NotAllowed
from tacocat_arena.arena.store import ArenaError, NotFound, TooLarge
from tacocat_arena.web.access import Access, access_of
from tacocat_arena.web.app import create_app

#: What each kind of access answers to a request without the right token: no token, a garbled
#: one, a revoked player's, another player's (empty: that player may use the route).  Where the
#: owner's data is unseen by others, a header that holds no token at all is a 401, any token
#: that is not the owner's a 404 (as for no such player).
REFUSED: dict[Access, tuple[set[int], set[int], set[int], set[int]]] = {
    Access.ORGANIZER: ({401}, {401}, {401}, {401}),
    Access.PLAYER: ({401}, {401}, {401}, set()),
    Access.OWNER: ({401}, {401}, {401}, {403}),
    Access.OWNER_UNSEEN: ({401}, {401, 404}, {404}, {404}),
}
#: Authorization headers that carry no valid token (``{t}``: a real player's token).
GARBLED = (
    "Bearer tca_not-a-token",
    "Bearer ",
    "Bearer {t}x",
    "bearer {t}",  # the scheme is case-sensitive here: no token
    "{t}",
    "Basic {t}",
    "Bearer  {t}",
    "Bearer " + "A" * 4000,
)


def _endpoints(routes: list[BaseRoute], prefix: str = "") -> list[tuple[str, set[str], Any]]:
    """Every route of ``routes`` as (path, methods, endpoint), through mounts."""
    found = []
    for route in routes:
        if isinstance(route, Mount):
            found += _endpoints(list(route.routes), prefix + route.path)
        elif isinstance(route, Route):
            found.append((prefix + route.path, set(route.methods or {"GET"}) - {"HEAD"},
                          route.endpoint))  # fmt: skip
        else:
            found.append((prefix + getattr(route, "path", repr(route)), set(), None))
    return found


def app_routes() -> list[tuple[str, set[str], Any]]:
    """The routes of the arena's real application (its arena is only kept, never read)."""
    arena = types.SimpleNamespace(on_game=[])
    return _endpoints(create_app(arena).routes)  # type: ignore[arg-type]


def test_every_route_declares_its_access() -> None:
    routes = app_routes()
    assert len(routes) >= 20, routes  # the enumeration finds the app's routes
    undeclared = [path for path, _, endpoint in routes if access_of(endpoint) is None]
    assert not undeclared, f"declare these routes' access with @access(...): {undeclared}"
    kinds = {access_of(endpoint) for _, _, endpoint in routes}
    assert {Access.PUBLIC, Access.ORGANIZER, Access.PLAYER, Access.OWNER} <= kinds


def test_arena_errors_carry_one_status_each() -> None:
    assert ArenaError("x").http_status == 409
    assert NotAllowed("x").http_status == 409
    assert NotFound("x").http_status == NoSuchVersion("x").http_status == 404
    assert TooLarge("x").http_status == 413


def _filled(path: str) -> str:
    """``path`` with its parameters: a player's are alice, a version 1, anything else x."""
    values = {"player": "alice", "name": "alice", "version": "1"}
    return re.sub(r"\{(\w+)(:\w+)?\}", lambda m: values.get(m.group(1), "x"), path)


def _ask(web: str, method: str, path: str, authorization: str | None) -> tuple[int, str]:
    headers = {"Content-Type": "application/json"}
    if authorization is not None:
        headers["Authorization"] = authorization
    body = b"{}" if method != "GET" else None
    request = urllib.request.Request(web + path, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read(200_000).decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read(200_000).decode(errors="replace")


@pytest.mark.slow
def test_every_protected_route_refuses_a_missing_garbled_revoked_or_other_players_token(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "alice", "bob", "cat")
    done = subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", "players", "revoke", "cat", "--dir",
         str(folder)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    arena: ArenaProcess = start_arena(folder)
    try:
        organizer = (folder / "organizer.token").read_text().strip()
        protected = [
            (path, methods, access_of(endpoint))
            for path, methods, endpoint in app_routes()
            if access_of(endpoint) is not Access.PUBLIC
        ]
        assert len(protected) >= 10, protected
        wrong = []
        for path, methods, needs in protected:
            assert needs in REFUSED, f"{path}: no expectation for {needs}"
            none, garbled, revoked, other = REFUSED[needs]
            url = _filled(path)
            for method in sorted(methods):
                tries: list[tuple[str | None, set[int]]] = [(None, none)]
                tries += [(g.format(t=tokens["alice"]), garbled) for g in GARBLED]
                tries += [(f"Bearer {tokens['cat']}", revoked), (f"Bearer {tokens['bob']}", other)]
                if needs is Access.ORGANIZER:
                    tries.append((f"Bearer {tokens['alice']}", {401}))  # a player's, no more
                for authorization, expected in tries:
                    if not expected:
                        continue
                    status, body = _ask(arena.web, method, url, authorization)
                    if status not in expected or not json.loads(body).get("error"):
                        wrong.append(f"{method} {url} with {str(authorization)[:40]!r}: "
                                     f"{status} {body[:120]} (expected {expected})")  # fmt: skip
        assert not wrong, "\n".join(wrong)
        # Nothing they asked for happened: not paused, nobody added or revoked, no version.
        assert arena.json("/api/status")["paused"] is False
        assert arena.json("/api/submissions") == []
        admin = f"Bearer {organizer}"
        status, body = _ask(arena.web, "GET", "/api/admin", admin)
        players = {p["name"]: p["revoked_at"] is None for p in json.loads(body)["players"]}
        assert status == 200 and players == {"alice": True, "bob": True, "cat": False}, body
        # And the right token passes each protected GET (the control: the refusals are not
        # every answer): the organizer's everywhere, alice's on her own.
        for path, methods, needs in protected:
            if "GET" not in methods:
                continue
            allowed = [admin] + ([f"Bearer {tokens['alice']}"] if needs is not Access.ORGANIZER
                                 else [])  # fmt: skip
            for authorization in allowed:
                status, body = _ask(arena.web, "GET", _filled(path), authorization)
                assert status == 200, (path, authorization[:12], status, body[:200])
    finally:
        arena.stop()
