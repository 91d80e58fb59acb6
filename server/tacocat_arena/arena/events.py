"""Events: a round robin played inside the arena (``serve --round-robin --games N``).

The entrants are the bots connected when the event starts (``start_after_s`` after the
server), kept in the store so a restarted server plays the same event on.  Late joiners are
added to the remaining schedule (each meets every entrant ``games_per_pairing`` times) unless
the organizer says not to.  Absent bots never stop it: their games wait while others are
played, and once only games of absent bots are left and ``absent_s`` has passed, those are
recorded as forfeits by the absent seat (not played).  Deals and seeds are the tournament's
(``schedule.round_robin``, with the event's secret: ``deals.event_secret``), so duplicate pairs
are adjacent and the event replays exactly; the secret is published when the event is over.

Every entrant is a connected bot, one process that would remember a duplicate deal's first
game in its second, so an event follows the arena's ``LadderSettings.independent_deals``
(stored at its start, ``deals.event_deals_key``): each game of a pairing is then a deal of its
own, deal numbers ``deals.pairing_deals(2 * d)`` for the round robin's deal ``d``, with the
same seed function and secret.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass

from tacocat_arena.arena.deals import Deals, event_deals, event_deals_key, pairing_deals
from tacocat_arena.arena.ladder import Arena, event_over_key
from tacocat_arena.engine import Outcome, Termination
from tacocat_arena.referee import GameReport
from tacocat_arena.stats.tables import compute_standings
from tacocat_arena.tournament.commitments import secret_commitment
from tacocat_arena.tournament.schedule import PlannedGame, deal_seed, round_robin


@dataclass(frozen=True)
class EventSettings:
    """One round-robin event."""

    name: str = "round-robin"
    games_per_pairing: int = 2
    late_joiners: bool = True
    #: Seconds after start-up at which the connected bots become the entrants.
    start_after_s: float = 10.0
    #: Seconds the event waits for absent bots once nothing else is left to play.
    absent_s: float = 60.0

    def __post_init__(self) -> None:
        if self.games_per_pairing < 2 or self.games_per_pairing % 2:
            raise ValueError(
                "--games must be even and at least 2 (a pairing's games come two by two, "
                "seats swapped)"
            )


async def run_event(
    arena: Arena, settings: EventSettings, say: Callable[[str], None], stop: asyncio.Event
) -> None:
    """Play the event to its end, then set ``stop`` (the server's run is the event's)."""
    store = arena.store
    key = f"event:{settings.name}:entrants"
    stored = store.meta(key)
    if stored is None:
        await _sleep_or_stop(stop, settings.start_after_s)
        while len(entrants := _present(arena, [])) < 2 and not stop.is_set():
            await arena.changes.wait(1.0)
        independent = arena.settings.independent_deals
        deals = Deals.INDEPENDENT if independent else Deals.DUPLICATE
        store.set_meta(event_deals_key(settings.name), deals.value)
        store.set_meta(key, json.dumps(entrants))
    else:
        entrants = json.loads(stored)
        deals = event_deals(store.meta(event_deals_key(settings.name)))
    secret = arena.event_secret(settings.name)
    plan = _plan(entrants, settings, arena.seed, secret, deals)
    # Published at the start (and kept): the commitment to the secret published at the end.
    committed = secret_commitment(arena.event_secret(settings.name))
    store.set_meta(event_commitment_key(settings.name), committed)
    say(
        f"event {settings.name!r}: {len(entrants)} entrants ({', '.join(entrants)}), "
        f"{len(plan)} games on {deals.value} deals; its deal secret committed as {committed}"
    )
    done = {g.result.game_id for g in store.games(event=settings.name)}
    running: set[str] = set()
    waiting_since: float | None = None
    while not stop.is_set():
        if settings.late_joiners:
            for newcomer in _present(arena, entrants):
                entrants.append(newcomer)
                store.set_meta(key, json.dumps(entrants))
                plan = _plan(entrants, settings, arena.seed, secret, deals)
                say(f"event {settings.name!r}: {newcomer} joins; now {len(plan)} games")
        todo = [g for g in plan if g.game_id not in done and g.game_id not in running]
        if not todo and not running:
            break
        started = False
        for planned in todo:
            busy = sum(arena.in_flight.values())
            if busy >= arena.settings.concurrency:
                break
            if all(
                arena.can_play(n) and arena.in_flight[n] < arena.settings.per_bot
                for n in planned.seats
            ):
                running.add(planned.game_id)
                for name in planned.seats:
                    arena.in_flight[name] += 1
                arena.spawn(
                    _play(arena, planned, plan.index(planned), settings, deals, done, running)
                )
                started = True
        if started or running or not todo:
            waiting_since = None
        elif waiting_since is None:
            waiting_since = time.monotonic()
        elif time.monotonic() - waiting_since > settings.absent_s:
            waiting = {g.game_id for g in todo}
            for index, planned in enumerate(plan):
                if planned.game_id in waiting:
                    await arena.commit(_unplayed(arena, planned), settings.name, index, deals=deals)
                    done.add(planned.game_id)
            say(f"event {settings.name!r}: {len(todo)} games of absent bots recorded as forfeits")
        await arena.changes.wait(1.0)
    if not stop.is_set():
        results = store.results(event=settings.name)
        store.set_meta(event_over_key(settings.name), "1")
        say(
            f"event {settings.name!r} is over: {len(results)} games; its deal secret, "
            f"published now: {arena.event_secret(settings.name)}"
        )
        for row in compute_standings(results, sorted(entrants)):
            err = "unrated" if row.elo_err is None else f"{row.elo:.0f} ± {row.elo_err:.0f}"
            say(f"  {row.rank:>2}. {row.bot:<20} {row.score:>6} / {row.games}   {err}")
        stop.set()


def _plan(
    entrants: list[str], settings: EventSettings, seed: int, secret: str, deals: Deals
) -> list[PlannedGame]:
    """The entrants' round robin, then each late joiner's games against those before it;
    on independent deals each game has a deal number of its own (the module docstring)."""
    plan = []
    for index, name in enumerate(entrants):
        for other in entrants[:index]:
            for game in round_robin([other, name], settings.games_per_pairing, seed, secret=secret):
                if deals is Deals.DUPLICATE:
                    number, dealt = game.deal, game.seed
                else:
                    number = pairing_deals(game.deal * deals.per_pairing, deals)[game.twin]
                    dealt = deal_seed(seed, (other, name), number, secret=secret)
                a, b = game.seats
                game_id = f"{settings.name}:{a}-{b}-d{number}"
                plan.append(PlannedGame(game_id, game.seats, dealt, number))
    return plan


def _present(arena: Arena, known: list[str]) -> list[str]:
    return sorted(n for n in list(arena.referee.sessions) if n not in known and arena.can_play(n))


async def _play(
    arena: Arena,
    planned: PlannedGame,
    index: int,
    settings: EventSettings,
    deals: Deals,
    done: set[str],
    running: set[str],
) -> None:
    try:
        word = "independent deal" if deals is Deals.INDEPENDENT else "deal"
        info = f"{settings.name}, {word} {planned.deal}"
        report = await arena.play_game(
            planned.game_id, planned.seats, planned.seed, info, settings.name
        )
        if report is not None:
            await arena.commit(report, settings.name, index, deals=deals)
            done.add(planned.game_id)
    finally:
        running.discard(planned.game_id)
        for name in planned.seats:
            arena.in_flight[name] -= 1
        arena.wake()


def _unplayed(arena: Arena, planned: PlannedGame) -> GameReport:
    absent = [seat for seat, name in enumerate(planned.seats) if not arena.is_connected(name)]
    seat = absent[0] if len(absent) == 1 else None
    outcome = Outcome(Termination.FORFEIT_DISCONNECT, None if seat is None else 1 - seat)
    names = " and ".join(planned.seats[s] for s in absent) or "a bot"
    detail = f"{names} did not come back within the event's wait; game not played"
    return GameReport.unplayed(planned.game_id, planned.seats, planned.seed, outcome, detail)


async def _sleep_or_stop(stop: asyncio.Event, seconds: float) -> None:
    try:
        await asyncio.wait_for(stop.wait(), seconds)
    except TimeoutError:
        pass


def event_commitment_key(event: str) -> str:
    """The ``meta`` key of event ``event``'s commitment to its deal secret, published at its
    start (``commitments.secret_commitment``; ``verify`` checks it, A1)."""
    return f"event:{event}:commitment"
