"""Server-sent events: a page's parts re-sent whenever what they show changes."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterator

from starlette.responses import StreamingResponse

from tacocat_arena.arena.ladder import Arena

#: Seconds between keep-alive comments on an idle event stream.
KEEPALIVE_S = 15.0
#: Seconds between two looks at a live game for its page's stream.
LIVE_POLL_S = 0.2


def event_stream(
    arena: Arena,
    render: Callable[[], dict[str, str]],
    *,
    until: str | None = None,
    poll_s: float | None = None,
) -> StreamingResponse:
    """Server-sent events: ``render()`` (event name -> data) is sent when it differs from
    what was last sent, checked at each change of the arena (and every ``poll_s`` seconds:
    a live game's moves are not arena changes).  The stream ends after event ``until``."""

    async def stream() -> AsyncIterator[str]:
        last: dict[str, str] = {}
        yield "retry: 2000\n\n"
        quiet_since = time.monotonic()
        while not arena.closing:
            for name, data in render().items():
                if last.get(name) != data:
                    last[name] = data
                    quiet_since = time.monotonic()
                    yield "".join(sse_lines(name, data))
                if name == until:
                    return
            await arena.changes.wait(poll_s or KEEPALIVE_S)
            if time.monotonic() - quiet_since >= KEEPALIVE_S:
                quiet_since = time.monotonic()
                yield ": keep-alive\n\n"

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


def sse_lines(name: str, data: str) -> Iterator[str]:
    """One server-sent event, line by line (a data line per line of ``data``)."""
    yield f"event: {name}\n"
    for line in data.splitlines() or [""]:
        yield f"data: {line}\n"
    yield "\n"
