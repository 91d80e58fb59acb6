"""Told when it ends: ``run --notify URL`` POSTs a JSON summary of the finished event.

An organizer running a 200-bot Swiss overnight wants a message, not a terminal to watch.
The summary (``summary``) names the event, its format, how many games it played of how many,
its standings (the Swiss's, the knockout's or the finals' too), and where its results are.
The POST is tried ``ATTEMPTS`` times with a growing pause, each bounded by ``TIMEOUT_S``; a failing
endpoint is reported and never fails the event (its results are written before).
Only http and https URLs are accepted (``check_url``: a ``file:`` or other scheme is refused
before the event starts), and no redirect is followed, so the POST goes where it was told.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tacocat_arena.launch.spec import ConfigError

ATTEMPTS = 3
TIMEOUT_S = 10.0
#: Seconds before the second attempt; doubled before each next one.
FIRST_PAUSE_S = 1.0


def check_url(url: str) -> str:
    """``url`` if it is an http(s) URL with a host (and a port in range, and no space or
    control character, which the POST would refuse only at the event's end); ConfigError
    naming it otherwise (an unclosed ``[`` of an IPv6 host was a traceback)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (it raises ValueError for a port out of range)
    except ValueError as error:
        raise ConfigError(f"--notify {url!r}: {error}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"--notify {url!r}: must be an http:// or https:// URL with a host")
    if any(char.isspace() or not char.isprintable() for char in url):
        raise ConfigError(f"--notify {url!r}: a URL has no space nor control character")
    return url


def summary(
    metadata: Mapping[str, Any],
    standings: Sequence[Mapping[str, Any]],
    sections: Mapping[str, Any],
    out: Path,
) -> dict[str, Any]:
    """The JSON the endpoint gets: from results.json's metadata, standings and sections."""
    body: dict[str, Any] = {
        "event": metadata.get("name"),
        "format": metadata.get("format", "round_robin"),
        "complete": bool(metadata.get("complete")),
        "games_played": metadata.get("games_played"),
        "games_planned": metadata.get("games_planned"),
        "standings": [
            {key: row.get(key) for key in ("rank", "bot", "games", "score", "elo")}
            for row in standings
        ],
        "results": str((out / "results.json").resolve()),
        "report": str((out / "report.html").resolve()),
    }
    if "swiss" in sections:
        body["swiss_standings"] = sections["swiss"]["standings"]
    if "knockout" in sections:
        body["champion"] = sections["knockout"]["champion"]
    if "finals" in sections:
        finals = sections["finals"]
        body["finals"] = {key: finals[key] for key in ("order", "decided", "ended")}
    return body


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a 3xx is then an HTTPError: reported, not followed


def post(
    url: str,
    body: Mapping[str, Any],
    *,
    say: Callable[[str], None] = lambda text: None,
    sleep: Callable[[float], None] = time.sleep,
) -> bool:
    """POST ``body`` as JSON to ``url``, up to ``ATTEMPTS`` times; True once a 2xx answers.
    Never raises: each failure is said (``say``) with the endpoint's answer or error."""
    data = json.dumps(body).encode()
    opener = urllib.request.build_opener(_NoRedirect)
    pause = FIRST_PAUSE_S
    for attempt in range(1, ATTEMPTS + 1):
        request = urllib.request.Request(
            url, data=data, method="POST", headers={"Content-Type": "application/json"}
        )
        try:
            with opener.open(request, timeout=TIMEOUT_S) as answer:
                if 200 <= answer.status < 300:
                    return True
                why = f"HTTP {answer.status}"
        except urllib.error.HTTPError as error:
            why = f"HTTP {error.code}"
        except (OSError, ValueError) as error:  # refused, timed out, DNS, a bad URL
            why = str(getattr(error, "reason", error))
        say(f"--notify {url}: attempt {attempt} of {ATTEMPTS} failed ({why})")
        if attempt < ATTEMPTS:
            sleep(pause)
            pause *= 2
    say(f"--notify {url}: gave up; the results are written all the same")
    return False


async def post_off_loop(
    url: str, body: Mapping[str, Any], *, say: Callable[[str], None] = lambda text: None
) -> bool:
    """``post`` from a loop (``serve``'s events): in a daemon thread of its own, awaited, so
    a stop (this task cancelled) ends the process then.  ``asyncio.to_thread``'s executor is
    joined when the loop ends: a stop waited for every attempt of an endpoint that takes the
    connection and never answers (3 x ``TIMEOUT_S``), and for ever for one that trickles."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[bool] = loop.create_future()

    def settle(ok: bool) -> None:
        if not done.done():
            done.set_result(ok)

    def work() -> None:
        ok = post(url, body, say=say)
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(settle, ok)

    threading.Thread(target=work, name="notify", daemon=True).start()
    try:
        return await done
    except asyncio.CancelledError:
        say(f"--notify {url}: stopped before the endpoint answered; the results are written")
        raise


def grades_summary(
    grades: Sequence[Mapping[str, Any]], results: Path, report: Path
) -> dict[str, Any]:
    """The JSON ``grade --notify`` sends: each student's points, and where the grades are."""
    rubrics = sorted({str(grade.get("rubric")) for grade in grades})
    return {
        "event": f"grade: {', '.join(rubrics)}",
        "format": "grade",
        "complete": True,
        "students": [
            {key: grade.get(key) for key in ("student", "points", "max_points")} for grade in grades
        ],
        "results": str(results.resolve()),
        "report": str(report.resolve()),
    }
