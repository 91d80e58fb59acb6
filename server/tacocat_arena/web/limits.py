"""What one browser, script or attacker may hold of the web server: time, connections, streams.

uvicorn (0.54, httptools parser) closes a keep-alive connection ``timeout_keep_alive`` seconds
after its last response, and ``limit_concurrency`` answers 503 once a request is parsed; it
has no deadline for a request's head (a client that opens a connection and sends nothing, or
a byte every few seconds, holds it for ever), no cap on a head's size with httptools (h11's
``max_incomplete_event_size`` applies to h11 only: a 1 MiB header was accepted), no count
per client address, and its 503 has no Retry-After.  So:

- ``limited_protocol``: uvicorn's httptools protocol, plus a deadline for every request head
  (from the accept or the first byte of the request: ``header_timeout_s``, then 408 and
  close), a head-size cap (``max_header_bytes``: 431 and close), and caps on connections per
  client address and in total, counted at the accept (beyond: 503 with Retry-After and close,
  before any parsing, so a flood of connections costs a file descriptor for microseconds;
  ``accept_batch`` is uvicorn's ``backlog``, which is also how many connections asyncio
  accepts in one go before any of them is looked at: a flood then never holds more than
  ``connections_total + accept_batch`` descriptors, under the usual 1,024);
- ``StreamLimits``: an ASGI middleware capping event streams (server-sent events) per client
  address and in total (503 with Retry-After beyond), since a stream holds its connection and
  costs the server work at every change of the arena.

The client address is the TCP peer's: behind a reverse proxy every client is the proxy, so
there raise the per-client caps (or set them at the proxy).

uvicorn has no public hook for any of the three protocol checks (its ``Config`` takes a
protocol class, not callbacks), so ``_LimitedProtocol`` subclasses its private
``HttpToolsProtocol``.  That is why pyproject pins uvicorn to the minor version this was
tested with (0.54.x) instead of ``>=``: a private class may change in any release.
``protocol_problems`` names what the subclass relies on that a given uvicorn lacks (methods
and their parameters, attributes it reads); tests/test_web_limits_shape.py fails with that
list, so raising the pin starts from a clear message, not a server that silently stops
enforcing a limit.
"""

from __future__ import annotations

import asyncio
import collections
import inspect
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

#: The methods of ``HttpToolsProtocol`` that ``_LimitedProtocol`` overrides and calls, with
#: their parameters, and the attributes it reads (of the protocol; of its request cycle).
RELIED_ON_METHODS = {
    "connection_made": ("self", "transport"),
    "connection_lost": ("self", "exc"),
    "data_received": ("self", "data"),
    "on_headers_complete": ("self",),
    "on_body": ("self", "body"),
    "on_message_complete": ("self",),
}
RELIED_ON_ATTRIBUTES = ("client", "transport", "cycle", "url", "headers", "loop")
RELIED_ON_CYCLE = ("response_complete",)


def protocol_problems() -> list[str]:
    """What ``_LimitedProtocol`` relies on that the installed uvicorn's private
    ``HttpToolsProtocol`` lacks (empty: the shape it was written for)."""
    problems = []
    for name, parameters in RELIED_ON_METHODS.items():
        method = getattr(HttpToolsProtocol, name, None)
        found = None if method is None else tuple(inspect.signature(method).parameters)
        if found != parameters:
            problems.append(f"HttpToolsProtocol.{name}{found or ' missing'}, not {parameters}")
    for kind, names in (
        (HttpToolsProtocol, RELIED_ON_ATTRIBUTES),
        (RequestResponseCycle, RELIED_ON_CYCLE),
    ):
        source = inspect.getsource(kind)
        problems += [
            f"{kind.__name__} sets no self.{name}"
            for name in names
            if f"self.{name} =" not in source and f"self.{name}: " not in source
        ]
    return problems


@dataclass(frozen=True)
class WebLimits:
    """The web server's limits (see the module docstring); the defaults suit a classroom on
    one machine with the usual 1,024 open files (500 + 100 for the web, the rest for bots'
    connections, the store and logs)."""

    #: Seconds a request's head may take, from the accept or its first byte.
    header_timeout_s: float = 10.0
    #: Seconds an idle keep-alive connection is kept after its last response (uvicorn's).
    keep_alive_s: int = 5
    #: Bytes of a request's head (request line and headers) at most.
    max_header_bytes: int = 16 * 1024
    connections_per_client: int = 64
    connections_total: int = 500
    #: Connections accepted at once before they are counted (uvicorn's ``backlog``).
    accept_batch: int = 100
    streams_per_client: int = 32
    streams_total: int = 400
    #: What a 503 tells the client to wait before trying again (seconds).
    retry_after_s: int = 5

    def __post_init__(self) -> None:
        if min(self.connections_per_client, self.streams_per_client, self.max_header_bytes) < 1:
            raise ValueError("web limits must be at least 1")
        if self.streams_total >= self.connections_total:
            raise ValueError("streams_total must be below connections_total (pages need some)")


def is_stream(path: str) -> bool:
    """Whether ``path`` is one of the arena's event streams (``/events``, ``/games/ID/events``)."""
    return path == "/events" or path.endswith("/events")


def refusal(status: int, reason: str, message: str, retry_after_s: int | None = None) -> bytes:
    """A complete HTTP/1.1 response that closes the connection."""
    body = (message + "\n").encode()
    head = [
        f"HTTP/1.1 {status} {reason}",
        "content-type: text/plain; charset=utf-8",
        f"content-length: {len(body)}",
        "connection: close",
    ]
    if retry_after_s is not None:
        head.append(f"retry-after: {retry_after_s}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class _Counts:
    """Open connections per client address and in total (one per server)."""

    def __init__(self) -> None:
        self.by_client: collections.Counter[str] = collections.Counter()
        self.total = 0

    def add(self, client: str) -> None:
        self.by_client[client] += 1
        self.total += 1

    def remove(self, client: str) -> None:
        self.by_client[client] -= 1
        if self.by_client[client] <= 0:
            del self.by_client[client]  # the counter does not grow with every address seen
        self.total -= 1


def limited_protocol(limits: WebLimits) -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol with ``limits`` (pass it as ``uvicorn.Config(http=...)``;
    each call counts its own connections)."""

    class LimitedHttpToolsProtocol(_LimitedProtocol):
        _limits = limits
        _counts = _Counts()

    return LimitedHttpToolsProtocol


class _LimitedProtocol(HttpToolsProtocol):
    """The checks of ``limited_protocol``; a subclass made there binds one server's limits
    and connection counts."""

    _limits: WebLimits
    _counts: _Counts
    _counted: str | None = None
    _head_timer: asyncio.TimerHandle | None = None
    _head_bytes = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        client = self.client[0] if self.client else ""
        if self._counts.total >= self._limits.connections_total:
            self._refuse(503, "Service Unavailable", "too many connections to this server")
            return
        if self._counts.by_client[client] >= self._limits.connections_per_client:
            self._refuse(503, "Service Unavailable", "too many connections from your address")
            return
        self._counts.add(client)
        self._counted = client
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        if self._counted is not None:
            self._counts.remove(self._counted)
            self._counted = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.transport.is_closing():
            return
        between_requests = self.cycle is None or self.cycle.response_complete
        if self._head_timer is None and between_requests:
            self._arm_head_timer()  # a new request's first bytes: its head's deadline
        in_head = self._head_timer is not None
        super().data_received(data)
        if in_head and self._head_timer is not None:  # the head is still incomplete
            self._head_bytes += len(data)
            if self._head_bytes > self._limits.max_header_bytes:  # stop buffering it
                self._refuse(431, "Request Header Fields Too Large", self._too_large())

    def on_headers_complete(self) -> None:
        self._disarm_head_timer()
        size = len(self.url) + sum(len(k) + len(v) + 4 for k, v in self.headers)
        if size > self._limits.max_header_bytes:
            self._refuse(431, "Request Header Fields Too Large", self._too_large())
            return
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if not self.transport.is_closing():
            super().on_body(body)

    def on_message_complete(self) -> None:
        if not self.transport.is_closing():
            super().on_message_complete()

    def _too_large(self) -> str:
        return f"request head over {self._limits.max_header_bytes} bytes"

    def _arm_head_timer(self) -> None:
        self._head_bytes = 0
        self._head_timer = self.loop.call_later(self._limits.header_timeout_s, self._head_timeout)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timeout(self) -> None:
        self._head_timer = None
        message = f"no complete request head within {self._limits.header_timeout_s:g} s"
        self._refuse(408, "Request Timeout", message)

    def _refuse(self, status: int, reason: str, message: str) -> None:
        self._disarm_head_timer()
        if not self.transport.is_closing():
            retry = self._limits.retry_after_s if status == 503 else None
            self.transport.write(refusal(status, reason, message, retry))
            self.transport.close()


class StreamLimits:
    """ASGI middleware: at most ``streams_per_client`` event streams per client address and
    ``streams_total`` in all; beyond, 503 with Retry-After (the browser's EventSource retries)."""

    def __init__(self, app: Any, limits: WebLimits) -> None:
        self.app = app
        self.limits = limits
        self.by_client: collections.Counter[str] = collections.Counter()
        self.total = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not is_stream(scope["path"]):
            await self.app(scope, receive, send)
            return
        client = scope["client"][0] if scope.get("client") else ""
        if self.total >= self.limits.streams_total:
            await self._refuse(send, "too many event streams on this server")
            return
        if self.by_client[client] >= self.limits.streams_per_client:
            await self._refuse(send, "too many event streams from your address")
            return
        self.by_client[client] += 1
        self.total += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.total -= 1
            self.by_client[client] -= 1
            if self.by_client[client] <= 0:
                del self.by_client[client]

    async def _refuse(self, send: Any, message: str) -> None:
        body = (message + "\n").encode()
        headers = [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", str(len(body)).encode()),
            (b"retry-after", str(self.limits.retry_after_s).encode()),
        ]
        await send({"type": "http.response.start", "status": 503, "headers": headers})
        await send({"type": "http.response.body", "body": body})
