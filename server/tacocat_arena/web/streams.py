"""Server-sent events: a page's parts re-sent whenever what they show changes.

Hundreds of open tabs must not cost hundreds of renders per change: a stream sends at most
once per ``STREAM_INTERVAL_S`` (changes in between are coalesced: it sends the latest), and
streams showing the same thing share one render per change of the arena (``SharedRender``).
``bench arena --sse 350`` measures what they cost the pages.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator

from starlette.responses import StreamingResponse

from tacocat_arena.arena.ladder import Arena

#: Seconds between keep-alive comments on an idle event stream.
KEEPALIVE_S = 15.0
#: Seconds between two looks at a live game for its page's stream.
LIVE_POLL_S = 0.2
#: Shortest time between two sends of one stream (a game ends every ~50 ms at full speed).
STREAM_INTERVAL_S = 0.5


class SharedRender:
    """``render()`` once per change of the arena, whoever asks: every stream of the index
    page reads the same sections."""

    def __init__(self, arena: Arena, render: Callable[[], dict[str, str]]) -> None:
        self.arena = arena
        self.render = render
        self._count = -1
        self._value: dict[str, str] = {}

    def __call__(self) -> dict[str, str]:
        if self._count != self.arena.changes.count:
            self._value = self.render()
            self._count = self.arena.changes.count
        return self._value


def event_stream(
    arena: Arena,
    render: Callable[[], dict[str, str]],
    *,
    until: str | None = None,
    poll_s: float | None = None,
    interval_s: float = STREAM_INTERVAL_S,
) -> StreamingResponse:
    """Server-sent events: ``render()`` (event name -> data) is sent when it differs from
    what was last sent, checked at each change of the arena (and every ``poll_s`` seconds:
    a live game's moves are not arena changes), at most once per ``interval_s``.  The
    stream ends after event ``until``."""

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
            await asyncio.sleep(interval_s)  # what changes meanwhile goes in the next send
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
