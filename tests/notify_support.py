"""A loopback HTTP endpoint for ``--notify`` tests: answers each POST with the next status of
a script (then 200), and keeps what it was sent."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any


class Endpoint:
    def __init__(self, statuses: Sequence[int], location: str = "") -> None:
        self.statuses = list(statuses)
        self.location = location
        self.bodies: list[Any] = []
        self.url = ""


@contextmanager
def endpoint(statuses: Sequence[int] = (), location: str = "") -> Iterator[Endpoint]:
    """An ``Endpoint`` served on 127.0.0.1 in a thread for the block's length."""
    state = Endpoint(statuses, location)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            length = int(self.headers.get("Content-Length", "0"))
            state.bodies.append(json.loads(self.rfile.read(length)))
            status = state.statuses.pop(0) if state.statuses else 200
            self.send_response(status)
            if state.location:
                self.send_header("Location", state.location)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/done"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
