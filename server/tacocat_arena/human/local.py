"""``tacocat-arena play human BOT``: a person against a bot on this machine.

It is a two-bot tournament like ``play``'s (``lifecycle.open_event``: the store, the
deal secret, the plan and its commitment; ``run_tournament``: the referee on loopback, the
bot started by the one launcher in its sandbox, every game saved to the store, the same
result files), in which one bot connects by itself: the person's seat, a gRPC client of the
referee in this process (``human.client``), relayed to a page served on 127.0.0.1
(``human.page``).  The person's seat has its own, longer allowance per decision
(``BotSpec.move_timeout_s``); the bot keeps the match's.  A person who leaves the page loses
the game by that clock, and the tournament then stops the bot's process as it always does.

A duplicate pair is played one game at a time (``run_tournament(plan=[game])``): the twin game,
the same deal with the seats swapped, only once the person accepts it on the page; a pair not
finished is a match stopped by choice (``write_outputs(stopped=...)``), which ``verify``
checks as far as it went.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable, MutableSequence
from dataclasses import dataclass, replace
from typing import Any

from tacocat_arena.engine import Termination
from tacocat_arena.human.client import play_seat
from tacocat_arena.human.page import Tap, create_page, serve_page
from tacocat_arena.human.relay import Relay, pair_score
from tacocat_arena.launch.bots import BotStartError, new_token
from tacocat_arena.report.outputs import write_outputs
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.config import TournamentConfig
from tacocat_arena.tournament.lifecycle import open_event
from tacocat_arena.tournament.runner import run_tournament
from tacocat_arena.tournament.storage import TournamentStore, output_folder

#: The person's per-decision allowance by default, in seconds: time to read and click.
DEFAULT_HUMAN_MOVE_TIMEOUT_S = 120.0
#: Seconds the page keeps being served once the match is over, for its last state to arrive.
LINGER_S = 2.0


@dataclass(frozen=True)
class HumanMatch:
    """How the match went: its games (in order) and the person's pair score, if a pair."""

    human: str
    bot: str
    results: tuple[GameResult, ...]
    stopped: str
    pair_points: float | None


def human_config(config: TournamentConfig, human: str, move_timeout_s: float) -> TournamentConfig:
    """``config`` (two bots, the person's first, connecting by itself) with the person's own
    clock and one game at a time."""
    person, bot = config.bots
    if person.name != human or not person.is_external or bot.is_external:
        raise ValueError("a human match is the person's seat (no command) and one bot")
    return replace(
        config,
        bots=(replace(person, move_timeout_s=move_timeout_s), bot),
        concurrency=1,
    )


async def play_human(
    config: TournamentConfig,
    *,
    pair: bool,
    on_url: Callable[[str], None],
    say: Callable[[str], None] = lambda text: None,
    tap: MutableSequence[bytes] | None = None,
    twin_wait_s: float | None = None,
    linger_s: float = LINGER_S,
) -> HumanMatch:
    """Serve the page on 127.0.0.1, play the match (``run_match``); ``on_url`` gets the
    page's address once it listens.  ``tap`` collects every body byte the page sends
    (tests)."""
    person, bot = config.bots
    output_folder(config.out)  # before the page: an unwritable folder is said, not a dead page
    relay = Relay(person.name, bot.name, games=2 if pair else 1)
    key = secrets.token_urlsafe(18)
    app: Any = create_page(relay, key)
    if tap is not None:
        app = Tap(app, tap)
    server, port = await serve_page(app)
    on_url(f"http://127.0.0.1:{port}/{key}/")
    try:
        return await run_match(
            config, relay, pair=pair, say=say, twin_wait_s=twin_wait_s, linger_s=linger_s
        )
    finally:
        server.should_exit = True
        with contextlib.suppress(Exception):
            await server.task


async def run_match(
    config: TournamentConfig,
    relay: Relay,
    *,
    pair: bool,
    say: Callable[[str], None] = lambda text: None,
    twin_wait_s: float | None = None,
    linger_s: float = LINGER_S,
) -> HumanMatch:
    """Play one game (or a duplicate pair, ``pair``) with the person's seat relayed by
    ``relay`` (whose page is served by the caller) and write the result files into
    ``config.out``."""
    person, bot = config.bots
    event = open_event(config)  # the life cycle's store, secret, plan and commitment
    store, plan = event.store, event.plan  # one duplicate pair: the deal, then its twin
    token = new_token()
    stopped = ""
    wait = (
        twin_wait_s
        if twin_wait_s is not None
        else person.move_timeout_s or DEFAULT_HUMAN_MOVE_TIMEOUT_S
    )
    try:
        for index, planned in enumerate(plan[: 2 if pair else 1]):
            if index and not await _twin_wanted(relay, store, wait):
                stopped = "the person did not play the twin game"
                break
            try:
                await _play_game(config, store, planned, person.name, token, relay, say)
            except BotStartError:
                # The page says so, not why: the bot's own lines are its owner's (the
                # error, with them, goes to whoever started the match: the CLI, the arena's log).
                relay.notice = f"{bot.name} could not start: the game was not played"
                raise
        relay.finish()
        await asyncio.sleep(linger_s)  # the page's stream sends the last state and ends
        played = store.count()
        if not pair:
            stopped = "one game of the duplicate pair was asked for"
        write_outputs(
            config,
            store,
            complete=True,
            planned=len(plan),
            stopped=stopped if played < len(plan) else "",
        )
        results = tuple(store.results())
    finally:
        relay.finish()
        store.close()
    return HumanMatch(person.name, bot.name, results, stopped, pair_score(relay.results))


async def _twin_wanted(relay: Relay, store: TournamentStore, wait_s: float) -> bool:
    """Whether the person plays the twin game: not after leaving (the first game lost on
    the clock), else as they answer the page's offer within ``wait_s``."""
    results = store.results()
    last = results[-1] if results else None
    if (
        last is not None
        and last.reason is Termination.FORFEIT_TIMEOUT
        and last.forfeit_by is not None
        and last.seats[last.forfeit_by] == relay.name
    ):
        return False
    return await relay.offer_twin(wait_s)


async def _play_game(
    config: TournamentConfig,
    store: TournamentStore,
    planned: Any,
    human: str,
    token: str,
    relay: Relay,
    say: Callable[[str], None],
) -> None:
    """One game of the plan: a referee of its own, the bot's process, the person's seat."""
    seats: list[asyncio.Task[None]] = []

    def connect(port: int) -> None:
        seats.append(asyncio.create_task(play_seat(f"127.0.0.1:{port}", human, token, relay)))

    try:
        await run_tournament(
            config,
            store,
            tokens={human: token},
            on_listening=connect,
            on_notice=say,
            plan=[planned],
        )
    finally:
        for task in seats:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(task, 5.0)  # the session's end, sent by the referee
