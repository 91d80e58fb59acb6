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


def upload(path: Path, arena_url: str, token: str, timeout: float = 120.0) -> dict[str, Any]:
    """Send the package at ``path`` (a folder, packed here, or an archive) to the arena at
    ``arena_url``; the new version as the arena describes it (``status``, ``reason``...).
    ArenaError with the arena's message when it refuses the upload outright."""
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
    url = f"{arena_url.rstrip('/')}/api/submissions/{version['player']}/{version['version']}"
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
