"""``tacocat-arena submit``'s work: pack a package, upload it, follow its version.

Plain HTTP(S) with the standard library (``urllib``), so the command needs nothing the SDK
does not: a folder is packed (``launch.package.pack``), an archive is sent as it is, with the
player's token as a bearer token.  ``follow`` polls the version until it settles.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tacocat_arena.arena.store import ArenaError
from tacocat_arena.arena.submissions import SETTLED, Status
from tacocat_arena.launch.package import pack

#: Seconds between two looks at a version being checked.
POLL_S = 1.0


def web_url(arena_url: str) -> str:
    """``arena_url`` if it is a web address (http:// or https://); else ArenaError saying
    which address ``--arena`` wants: a bare HOST:PORT is most often the referee's gRPC
    address, which the bot connects to, not the page ``submit`` talks to."""
    if arena_url.startswith(("http://", "https://")):
        return arena_url
    raise ArenaError(
        f"--arena {arena_url}: give the arena's web address, http://HOST:PORT (the line "
        "'web: ...' that `tacocat-arena serve` prints), not the referee's gRPC address that "
        "bots connect to"
        + (
            f"; perhaps --arena http://{arena_url} if that is the web port"
            if ":" in arena_url
            else ""
        )
    )


def package_warnings(path: Path) -> list[str]:
    """What is likely wrong with the package folder ``path`` before it is packed: the arena
    builds and runs a package with the network off, so what it needs must be in it.  A
    Node package (package.json) without node_modules fails at its first ``require``."""
    if not path.is_dir():
        return []
    warnings = []
    if (path / "package.json").is_file() and not (path / "node_modules").is_dir():
        warnings.append(
            f"{path} has a package.json but no node_modules: the arena runs packages without "
            'network, so the bot would fail with "Cannot find module". Run `npm ci` (or '
            "`npm install`) in it first, then submit"
        )
    return warnings


def upload(path: Path, arena_url: str, token: str, timeout: float = 120.0) -> dict[str, Any]:
    """Send the package at ``path`` (a folder, packed here, or an archive) to the arena at
    ``arena_url``; the new version as the arena describes it (``status``, ``reason``...).
    ArenaError with the arena's message when it refuses the upload outright."""
    web_url(arena_url)
    data = pack(path) if path.is_dir() else path.read_bytes()
    request = urllib.request.Request(
        arena_url.rstrip("/") + "/api/submissions",
        data=data,
        method="POST",
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/octet-stream",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return dict(json.loads(response.read()))
    except urllib.error.HTTPError as error:
        answer = _json(error.read())
        if error.code == 422 and "status" in answer:
            return answer  # a version, rejected at once (not a valid package)
        raise ArenaError(f"the arena refused the upload ({error.code}): {_said(answer)}") from None
    except (urllib.error.URLError, OSError) as error:
        raise ArenaError(f"cannot reach the arena at {arena_url}: {error}") from None


def activate(arena_url: str, token: str, number: int, timeout: float = 30.0) -> dict[str, Any]:
    """Make version ``number`` of the token's player its active one (``submit --activate``:
    a roll-back); the version as the arena describes it, or ArenaError with its message."""
    request = urllib.request.Request(
        f"{arena_url.rstrip('/')}/api/me/versions/{number}/activate",
        data=b"",
        method="POST",
        headers={"Authorization": f"Bearer {token}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return dict(json.loads(response.read()))
    except urllib.error.HTTPError as error:
        answer = _json(error.read())
        raise ArenaError(f"the arena refused ({error.code}): {_said(answer)}") from None
    except (urllib.error.URLError, OSError) as error:
        raise ArenaError(f"cannot reach the arena at {arena_url}: {error}") from None


def follow(
    arena_url: str,
    version: dict[str, Any],
    *,
    token: str = "",
    timeout: float = 900.0,
    on_status: Callable[[dict[str, Any]], None] = lambda version: None,
) -> dict[str, Any]:
    """Poll ``version`` until its status settles (active, rejected, suspended...) or
    ``timeout`` seconds pass (ArenaError); ``on_status`` hears each new status.  With the
    player's ``token`` the arena answers the full reason and the gate's log (its owner's)."""
    url = (
        f"{web_url(arena_url).rstrip('/')}/api/submissions/{version['player']}/{version['version']}"
    )
    deadline = time.monotonic() + timeout
    seen = ""
    while True:
        if version["status"] != seen:
            seen = version["status"]
            on_status(version)
        if Status(version["status"]) in SETTLED:
            return version
        if time.monotonic() > deadline:
            raise ArenaError(f"version {version['version']} still {seen} after {timeout:g} s")
        time.sleep(POLL_S)
        request = urllib.request.Request(
            url, headers={"Authorization": f"Bearer {token}"} if token else {}
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                version = dict(json.loads(response.read()))
        except (urllib.error.URLError, OSError):
            continue  # the arena restarting: it checks the version again when back


def _json(body: bytes) -> dict[str, Any]:
    try:
        found = json.loads(body)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _said(answer: dict[str, Any]) -> str:
    return str(answer.get("error") or answer.get("reason") or "no reason given")
