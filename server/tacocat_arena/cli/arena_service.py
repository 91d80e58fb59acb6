"""``tacocat-arena serve``'s start-up: the referee, the ladder and the web page on one loop.

It lives in cli/ because it joins two rooms that do not know each other: the arena (arena/)
and its web page (web/, which imports arena); ``serve.py`` imports it only when ``serve``
runs, so other commands do not load grpc, Starlette and uvicorn.

Start-up prints ``arena: HOST:PORT`` and ``web: http://HOST:PORT/`` (scripts wait for these
lines; on every interface, HOST is this machine's address, not 0.0.0.0: ``addresses.py``).
SIGINT and SIGTERM stop it cleanly: no new games, the games in flight get ``drain_s`` to
finish (each is stored only if it finishes), bots are told SERVER_SHUTDOWN.  Started again on
the same folder it carries on: the store holds every finished game.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tacocat_arena.arena.events import EventSettings, run_event
from tacocat_arena.arena.hosted import (
    BatchRunner,
    DaskWorkers,
    HostedSettings,
    Hosting,
    WorkerProcesses,
)
from tacocat_arena.arena.ladder import Arena, LadderSettings
from tacocat_arena.arena.players import import_tokens, organizer_token
from tacocat_arena.arena.store import ArenaStore
from tacocat_arena.cli.addresses import describe
from tacocat_arena.launch.sandbox import admit_bot, describe_limits
from tacocat_arena.referee import start_server, stop_server
from tacocat_arena.referee.stopping import stop_signals
from tacocat_arena.web.app import serve_web


@dataclass(frozen=True)
class ServeOptions:
    """Where the arena listens and how it plays."""

    folder: Path
    host: str = "127.0.0.1"
    port: int = 50051
    web_host: str = "127.0.0.1"
    web_port: int = 8080
    ladder: LadderSettings = LadderSettings()
    tokens: dict[str, str] | None = None
    #: (private key, certificate chain), PEM: bots connect with TLS.
    tls: tuple[bytes, bytes] | None = None
    event: EventSettings | None = None
    hosted: HostedSettings = HostedSettings()
    #: Where hosted batches run: local worker processes, or a Dask cluster (its address).
    workers: int = 1
    cluster: str | None = None


async def serve_arena(
    options: ServeOptions,
    say: Callable[[str], None] = print,
    stop: asyncio.Event | None = None,
) -> Arena:
    """Run the arena until SIGINT/SIGTERM (or ``stop``); return it, stopped."""
    store = ArenaStore(options.folder)
    _log_to(options.folder / "logs" / "arena.log")
    try:
        if options.tokens:
            import_tokens(store, options.tokens)
        if organizer_token(store) is not None:
            say(f"organizer token written to {options.folder / 'organizer.token'}")
        arena = Arena(store, options.ladder)
        runner: BatchRunner = (
            DaskWorkers(options.cluster) if options.cluster else WorkerProcesses(options.workers)
        )
        hosting = Hosting(arena, options.hosted, runner)
        server, port = await start_server(
            arena.referee,
            options.host,
            options.port,
            tls=options.tls,
            unix_sockets=[str(hosting.socket)],
        )
        admit_bot(hosting.socket)  # a root arena's hosted bots are uid 65534
        local = "127.0.0.1" if options.host in ("0.0.0.0", "::", "") else options.host
        hosting.tcp_address = f"{local}:{port}"
        try:
            web, web_port = await serve_web(arena, options.web_host, options.web_port)
        except BaseException:
            await stop_server(server, None)
            raise
        stop = stop or asyncio.Event()
        loop = asyncio.get_running_loop()
        taken = stop_signals()  # a terminal closing stops the arena as a Ctrl-C does
        for signum in taken:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signum, stop.set)
        # On every interface (0.0.0.0) the lines name this machine's addresses instead.
        arena_at, arena_note = describe(options.host, port)
        web_at, web_note = describe(options.web_host, web_port, "http://")
        say(f"arena: {arena_at}{' (TLS)' if options.tls else ''}{arena_note}")
        say(f"web: {web_at}{web_note}")
        players = [p.name for p in store.players() if p.is_active]
        hint = f"; add some: tacocat-arena players add NAME --dir {options.folder}"
        say(
            f"{len(players)} players, {store.count()} games stored in {store.path}"
            + ("" if players else hint)
        )
        event_task = None
        if options.event is not None:
            event_task = asyncio.ensure_future(run_event(arena, options.event, say, stop))
        say(f"hosted bots: {hosting.mode} sandbox, batches on {runner.description}")
        say(f"hosted bots' limits: {describe_limits(hosting.settings.limits, hosting.mode)}")
        hosted_task = asyncio.ensure_future(hosting.run(stop))
        try:
            await arena.run(stop)
        finally:
            await asyncio.gather(hosted_task, return_exceptions=True)
            for signum in taken:
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(signum)
            if event_task is not None:
                event_task.cancel()
                await asyncio.gather(event_task, return_exceptions=True)
            web.should_exit = True
            await asyncio.gather(web.task, return_exceptions=True)
            await stop_server(server, 1.0)
        say(f"stopped: {store.count()} games stored in {store.path}")
        return arena
    finally:
        store.close()


def _log_to(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("tacocat_arena")
    root.setLevel(logging.INFO)
    for old in [h for h in root.handlers if isinstance(h, logging.FileHandler)]:
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
