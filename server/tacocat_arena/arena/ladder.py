"""The long-running arena: a referee whose connected bots are kept playing, a ladder.

``Arena`` owns the store, the referee (bots authenticate against the store's token hashes;
a new connection with a bot's token replaces its old session), the games in flight and the
live standings.  Its matchmaking loop pairs connected bots (``matchmaking.choose_pairs``)
up to the configured concurrency, each bot within its own limit: the ladder's ``per_bot``
and the ``max_concurrent_games`` its Hello asked for, whichever is smaller (a pair plays
its two games in turn, so a bot in k pairs plays at most k games at once).  A game counts
once it is committed to the store; a pair's games still to play are **booked** meanwhile
(``Booking``), so the matchmaker counts them as met.  A bot that leaves forfeits only its
games in flight (the referee decides that) and is not paired until it comes back.

**Deals.**  Two hosted versions play a duplicate pair: one deal, seats swapped.  A
*connected* bot is one process that remembers what it saw, so the second game of one deal
would be open to it (its first hand is its opponent's second: 983 of 983 hands predicted,
issue 34).  With ``independent_deals`` (the default) a pairing with a connected bot plays
its two games on two deals of their own instead, each its own pair number and secret, seats
swapped; each game is published as soon as it ends (no twin shares its deal) and its record
says so (``record["ladder"]["deals"]``).

A committed game is *held* until its duplicate twin has ended too (the rule ``run`` follows
for games.jsonl): its record holds the deal the twin is playing, so until then it is counted
by the matchmaker but shown nowhere — no page, JSON, stream, standings row or count (the web
reads ``results``, ``recent``, ``finished_games`` and ``finished_game``, which leave it out).
Deals follow ``arena/deals.py``: run's seed scheme with the store's secret.

The hosted wing (``arena.hosted``) is a ``HostedWing`` the arena asks for its processes'
tokens and its versions (``NoHosting`` where there is none); it changes the arena's counts
only through ``reserve``/``release`` of a ``Pairing``, and plays its games against connected
bots through ``play_pairing``, the one routine of a pairing's two games on this referee.

Everything runs on one asyncio loop with the web page; the standings are refitted off the
loop's hot path (a worker thread, at most every ``refresh_s``) so pages stay fast while games
finish at full speed.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import random
import secrets
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tacocat_arena.arena.deals import (
    SECRET_KEY,
    Deals,
    event_deals,
    event_deals_key,
    event_secret,
    ladder_game_id,
    ladder_seed,
    pair_secret,
    pairing_deals,
)
from tacocat_arena.arena.matchmaking import choose_pairs, pair_key
from tacocat_arena.arena.players import token_matches
from tacocat_arena.arena.store import (
    LADDER,
    REFUSALS_KEPT,
    ArenaStore,
    StoredGame,
    read_results,
)
from tacocat_arena.arena.submissions import Status, Version
from tacocat_arena.engine import DEFAULT_RULESET, Game, Ruleset
from tacocat_arena.referee import (
    BotSession,
    EndReason,
    GameReport,
    PendingDecision,
    Referee,
    RefereeSettings,
)
from tacocat_arena.stats.ratings import fit_ratings
from tacocat_arena.stats.tables import (
    GameResult,
    StandingsRow,
    Tally,
    rating_games,
    standings_of,
)
from tacocat_arena.tournament.games_log import DuplicateKey, duplicate_key
from tacocat_arena.tournament.runner import game_result

log = logging.getLogger(__name__)

#: Seconds between two looks at the players table (revocations by another process).
PLAYERS_POLL_S = 0.1
#: How many of the newest finished games the arena keeps in memory for its pages.
RECENT_MEMORY = 50


@dataclass(frozen=True)
class LadderSettings:
    """How the arena plays: concurrency, limits, the ruleset and the referee's clocks."""

    #: Games played at the same time, over all bots.
    concurrency: int = 8
    #: Games one bot plays at the same time (each duplicate pair plays its two games in turn).
    per_bot: int = 2
    #: Finished games after which a bot is no longer paired (0 = no limit).
    games_per_bot: int = 0
    ruleset: Ruleset = DEFAULT_RULESET
    referee: RefereeSettings = field(default_factory=RefereeSettings)
    #: Seconds the games in flight get to finish when the arena stops.
    drain_s: float = 5.0
    #: Shortest time between two refits of the standings (each costs ~16 ms of CPU at
    #: 5,000 games, GIL included; refitting every 0.25 s visibly cut bench arena's games/s
    #: and the page's p99).
    refresh_s: float = 1.0
    #: Whether the ladder pairs bots (False while a round-robin event runs alone).
    ladder: bool = True
    #: Whether a pairing with a connected bot plays its two games on independent deals
    #: rather than one deal twice (module docstring: a connected bot remembers a deal).
    independent_deals: bool = True

    def __post_init__(self) -> None:
        if self.concurrency < 1 or self.per_bot < 1 or self.games_per_bot < 0:
            raise ValueError("concurrency and per_bot must be >= 1, games_per_bot >= 0")


@dataclass(frozen=True)
class ConnectionFailure:
    """A refused connection, as the organizer sees it."""

    at: float  # time.time()
    name: str
    peer: str
    reason: str


class Booking:
    """Games planned for a pair and not yet committed: counted as met by the matchmaker
    (``Arena.expected_meetings``) from the moment they are planned, so the next free slot
    goes to a pair that has met less, not again to the pair being played."""

    def __init__(self, reserved: collections.Counter[tuple[str, str]], a: str, b: str,
                 games: int) -> None:  # fmt: skip
        self.key = pair_key(a, b)
        self.left = games
        self._reserved = reserved
        reserved[self.key] += games

    def played(self, games: int = 1) -> None:
        """``games`` of them were committed (they count in ``Arena.meetings`` now)."""
        games = min(games, self.left)
        self.left -= games
        self._reserved[self.key] -= games
        if self._reserved[self.key] <= 0:
            del self._reserved[self.key]

    def close(self) -> None:
        """The pair is over: the games not played never will be."""
        self.played(self.left)


@dataclass
class Pairing:
    """A pairing the arena reserved (``Arena.reserve``) until its games are over
    (``Arena.release``): its pair numbers, its booked games, both sides counted in flight
    and, when this process referees it (``local``), one of the ``concurrency`` slots."""

    seats: tuple[str, str]
    #: Its pair numbers: ``first`` and the ``deals - 1`` after it.
    first: int
    deals: int
    booking: Booking
    local: bool
    #: The seeds of the deals it has dealt (their games held until the twin ends).
    seeds: set[int] = field(default_factory=set)

    @property
    def pairs(self) -> range:
        """Its pair numbers (a hosted batch plays one deal on each)."""
        return range(self.first, self.first + self.deals)


@dataclass(frozen=True)
class Capacity:
    """What the ladder may start now (``Arena.capacity``): ``slots`` more pairs on this
    process's referee, and each connected bot that may play with its ``capacity_of``."""

    slots: int
    connected: dict[str, int]


#: How one side of a pairing comes to one of its games (``Arena.play_pairing``): given the
#: side's ladder name and the game's half (0 or 1), an async context whose value is the name
#: the referee knows the side by in that game (a connected bot: its own; a hosted version:
#: the process the arena starts for that game alone), or None when it cannot play it.
SeatStart = Callable[[str, int], AbstractAsyncContextManager[str | None]]


class HostedWing(Protocol):
    """The arena's hosted wing as the arena and its pages see it: ``arena.hosted.Hosting``,
    or ``NoHosting`` where the arena hosts no submitted bots."""

    #: Whether the arena hosts submitted bots at all.
    enabled: bool

    def process_hash(self, name: str) -> str | None:
        """The token hash of the arena's own process ``name`` (a hosted game's), else None:
        the arena's referee accepts it as it accepts a player's."""
        ...

    def is_hosted(self, name: str) -> bool:
        """Whether ``name`` is a hosted version's ladder name."""
        ...

    def sync(self) -> None:
        """The store changed (``Arena.check_players``): players revoked elsewhere."""
        ...

    def start_games(self) -> bool:
        """Start what the free slots allow, pairs of connected bots included; False if it
        starts none at all (the arena then pairs its connected bots itself)."""
        ...

    def versions(self, player: str | None = None) -> list[Version]:
        """Every submitted version (of ``player``), oldest first."""
        ...

    def version(self, player: str, number: int) -> Version | None:
        """One submitted version, or None."""
        ...

    def with_status(self, *statuses: Status) -> list[Version]:
        """The submitted versions in any of ``statuses``, oldest first."""
        ...

    def summary(self, version: Version, private: bool = False) -> dict[str, Any]:
        """One version as the API lists it."""
        ...


class NoHosting:
    """The hosted wing of an arena that hosts no bots: no versions, no processes of its own,
    no pairs (the arena pairs its connected bots by itself)."""

    enabled = False

    def process_hash(self, name: str) -> str | None:
        return None

    def is_hosted(self, name: str) -> bool:
        return False

    def sync(self) -> None:
        pass

    def start_games(self) -> bool:
        return False

    def versions(self, player: str | None = None) -> list[Version]:
        return []

    def version(self, player: str, number: int) -> Version | None:
        return None

    def with_status(self, *statuses: Status) -> list[Version]:
        return []

    def summary(self, version: Version, private: bool = False) -> dict[str, Any]:
        raise LookupError(f"no hosted wing to show {version.identity}")


@dataclass
class LiveGame:
    """A game in flight; ``game`` is the engine's state once the referee has started it."""

    game_id: str
    seats: tuple[str, str]
    event: str
    started_at: float
    game: Game | None = None
    #: The decisions the referee waits for now, with their clocks (``PendingDecision``).
    pending: tuple[PendingDecision, ...] = ()


class Changes:
    """Something visible changed: waiters (event streams) wake up."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self.count = 0

    def fire(self) -> None:
        """Wake every waiter."""
        self.count += 1
        self._event.set()
        self._event = asyncio.Event()

    async def wait(self, timeout: float) -> bool:
        """Wait for the next change; False after ``timeout`` seconds without one."""
        try:
            await asyncio.wait_for(self._event.wait(), timeout)
            return True
        except TimeoutError:
            return False


class ArenaReferee(Referee):
    """The referee of an arena: tokens checked against stored hashes, refusals remembered,
    reconnections replace the old session."""

    def __init__(self, arena: Arena, settings: RefereeSettings) -> None:
        super().__init__({}, settings, replace_sessions=True)
        self.arena = arena
        #: The token hash each name last authenticated with, until its session registers.
        self._authenticated: dict[str, str] = {}

    def authenticate(self, name: str, token: str) -> bool:
        """True if ``token`` is the token of active player ``name``; the session it opens is
        bound to that token (see ``Arena.check_players``)."""
        stored = self.arena.store.token_hash(name)
        if stored is None:
            stored = self.arena.hosting.process_hash(name)  # a hosted version's process
        if stored is None or not token_matches(token, stored):
            return False
        self._authenticated[name] = stored
        return True

    def revoked(self, name: str, token: str) -> bool:
        """True if ``token`` was ``name``'s until the organizer revoked it."""
        return token_matches(token, self.arena.store.revoked_hash(name))

    def refused(self, name: str, peer: str, reason: str) -> None:
        """Log the refusal and show it on the organizer's page."""
        super().refused(name, peer, reason)
        self.arena.note_failure(ConnectionFailure(time.time(), name, peer, reason))

    async def register(self, session: BotSession) -> None:
        self.arena.token_of[session] = self._authenticated.pop(session.name, "")
        self.arena.check_players(reread=True)  # it may have been added a moment ago
        await super().register(session)
        self.arena.connected_since[session.name] = time.time()
        self.arena.wake()

    async def unregister(self, session: BotSession) -> None:
        await super().unregister(session)
        self.arena.token_of.pop(session, None)
        if session.name not in self.sessions:
            self.arena.connected_since.pop(session.name, None)
        self.arena.wake()


class Arena:
    """A persistent ladder over one store; see the module docstring."""

    def __init__(self, store: ArenaStore, settings: LadderSettings) -> None:
        self.store = store
        self.settings = settings
        self.seed = _arena_seed(store)
        #: Mixed into every deal (``arena/deals.py``); never shown, only secrets derived
        #: from it for one finished pair or event.
        self.secret = store.secret(SECRET_KEY)
        self.rng = random.Random(self.seed ^ store.count())
        self.referee = ArenaReferee(self, settings.referee)
        self._count_stored(store.results())
        self.in_flight: collections.Counter[str] = collections.Counter()
        #: Games booked and not yet committed, by pair (``Booking``).
        self.reserved: collections.Counter[tuple[str, str]] = collections.Counter()
        #: Pairs this process referees now (ladder pairs and hosted-against-connected): the
        #: ``concurrency`` setting bounds them (hosted batches are bounded by their workers).
        self.local_pairs = 0
        self.live: dict[str, LiveGame] = {}
        #: The newest published games, newest first (the index page reads them every time).
        self.recent: collections.deque[StoredGame] = collections.deque(
            self.finished_games(limit=RECENT_MEMORY), maxlen=RECENT_MEMORY
        )
        #: The refused connections, kept in the store too: a restart does not empty them.
        self.failures: collections.deque[ConnectionFailure] = collections.deque(
            (ConnectionFailure(*row) for row in store.refusals()), maxlen=REFUSALS_KEPT
        )
        self.connected_since: dict[str, float] = {}
        self.paused = False
        self.decisions = 0
        self.started_at = time.time()
        self.standings: list[StandingsRow] = standings_of(self.tally, self._entrants())
        #: How many published games ``standings`` were computed from: the pages show this
        #: count beside the rows, so the header and the rows always add up.
        self.standings_games = self.tally.games
        self.changes = Changes()
        #: Called with each game as it is committed (the bench and events listen here).
        self.on_game: list[Callable[[StoredGame], None]] = []
        self._next_pair = store.last_pair(LADDER) + 1
        self._tasks: set[asyncio.Task[None]] = set()
        self._wake = asyncio.Event()
        self._refit = asyncio.Event()
        self.closing = False
        #: The token hash each live session authenticated with: a session whose hash is no
        #: longer its player's (revoked, or revoked and added again) is ended.
        self.token_of: dict[BotSession, str] = {}
        self._active: dict[str, str] = {}
        self._revoked: set[str] = set()
        self._data_version = -1
        self._history_cache: dict[tuple[str, int], list[tuple[int, float, float]]] = {}
        #: The submitted bots' side of the arena (``arena.hosted``), once attached.
        self.hosting: HostedWing = NoHosting()

    def _count_stored(self, stored: list[GameResult]) -> None:
        """At start-up: the stored games, counted (what is held, published, met, played)."""
        #: Committed games whose twin has not ended, by their pair (see the module docstring).
        self.held: dict[DuplicateKey, list[StoredGame]] = {}
        #: Their ids, which every page and the JSON API leave out.
        self.held_ids: set[str] = set()
        self._hold_unpaired_event_games()
        #: The published games, counted: standings and counts (their list stays in the
        #: store, not in memory: RSS stays flat however many games the arena plays).
        self.tally = Tally()
        self._seen: set[str] = set()
        for result in stored:
            if result.game_id not in self.held_ids:
                self.tally.add(result)
                self._seen.update(result.seats)
        self.meetings: collections.Counter[tuple[str, str]] = collections.Counter(
            pair_key(*r.seats) for r in stored
        )
        self.games_played: collections.Counter[str] = collections.Counter(
            bot for r in stored for bot in r.seats
        )

    def attach(self, wing: HostedWing) -> None:
        """Give the arena its hosted wing (``Hosting`` attaches itself when it is made)."""
        self.hosting = wing

    # -- what the pages read ----------------------------------------------------------------
    @property
    def ratings(self) -> dict[str, float]:
        """The current rating of every bot with a standings row."""
        return {row.bot: row.elo for row in self.standings}

    def finished_games(
        self, *, bot: str | None = None, event: str | None = None, limit: int | None = None
    ) -> list[StoredGame]:
        """Published finished games, newest first (held games left out)."""
        return self.store.games(bot=bot, event=event, limit=limit, exclude=self.held_ids)

    def finished_game(self, game_id: str) -> tuple[StoredGame, dict[str, Any]] | None:
        """A published finished game and its record; None if unknown or held."""
        return None if game_id in self.held_ids else self.store.game(game_id)

    def deal_of(self, stored: StoredGame) -> dict[str, Any] | None:
        """How anyone re-derives a published game's seed (docs/arena-server.md): the
        derived secret of its pair (ladder) or of its event once the event is over."""
        if stored.event == LADDER:
            return {
                "arena_seed": self.seed,
                "pairing": list(pair_key(*stored.result.seats)),
                "deal": stored.pair,
                "secret": pair_secret(self.secret, LADDER, stored.pair),
            }
        if self.store.meta(event_over_key(stored.event)) is None:
            return None
        return {"arena_seed": self.seed, "secret": self.event_secret(stored.event)}

    def event_secret(self, event: str) -> str:
        """The secret of the deals of event ``event`` (a round robin or a Swiss)."""
        return event_secret(self.secret, event)

    def is_connected(self, name: str) -> bool:
        """Whether ``name`` has a live session now."""
        return self.referee.live_session(name) is not None

    def note_failure(self, failure: ConnectionFailure) -> None:
        """Remember a refused connection (in the store too) and tell the pages."""
        self.failures.append(failure)
        self.store.note_refusal(failure.at, failure.name, failure.peer, failure.reason)
        self.changes.fire()

    async def rating_history(self, bot: str, points: int = 30) -> list[tuple[int, float, float]]:
        """``(games of the bot, rating, ±)`` after evenly spaced games of ``bot``, last one
        included: the fit over all games finished by then (the same fit as the standings).
        The fits run in a worker thread, so the loop (and the pages) stay responsive."""
        key = (bot, self.tally.games)
        cached = self._history_cache.get(key)
        if cached is None:
            path, held, names = self.store.path, frozenset(self.held_ids), self._entrants()
            cached = await asyncio.to_thread(_rating_history, path, held, names, bot, points)
            self._history_cache = {key: cached}
        return cached

    # -- running ----------------------------------------------------------------------------
    @property
    def pairing(self) -> bool:
        """Whether the ladder pairs bots now (it is on and the organizer has not paused it)."""
        return self.settings.ladder and not self.paused

    def wake(self) -> None:
        """Ask the matchmaker to look again (a bot came or went, a game ended)."""
        self._wake.set()
        self.changes.fire()

    async def run(self, stop: asyncio.Event) -> None:
        """Pair connected bots until ``stop`` is set, then drain the games in flight."""
        refresher = asyncio.create_task(self._refresh_loop())
        watcher = asyncio.create_task(self._watch_players())
        try:
            while not stop.is_set():
                self._wake.clear()
                if self.pairing:
                    self._start_pairs()
                waiters = [
                    asyncio.ensure_future(self._wake.wait()),
                    asyncio.ensure_future(stop.wait()),
                ]
                await asyncio.wait(waiters, timeout=1.0, return_when=asyncio.FIRST_COMPLETED)
                for waiter in waiters:
                    waiter.cancel()
        finally:
            self.closing = True
            if self._tasks:
                await asyncio.wait(set(self._tasks), timeout=self.settings.drain_s)
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            refresher.cancel()
            watcher.cancel()
            await asyncio.gather(refresher, watcher, return_exceptions=True)
            await self.end_sessions()

    async def end_sessions(self) -> None:
        """Tell every bot the server is shutting down and close the streams."""
        await asyncio.gather(
            *(
                session.end(
                    EndReason.SERVER_SHUTDOWN,
                    "the arena is shutting down; connect again when it is back",
                    self.settings.referee.limits.write_deadline_s,
                )
                for session in list(self.referee.sessions.values())
            )
        )

    def spawn(self, coroutine: object) -> None:
        """Run a game task that the arena drains or cancels when it stops."""
        task = asyncio.ensure_future(coroutine)  # type: ignore[call-overload]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def check_players(self, *, reread: bool = False) -> None:
        """Re-read the players if another process changed the store (or ``reread``: this
        process did), and end at once every session whose token is no longer its player's:
        revoked, or revoked and added again with a new token (``players revoke X && players
        add X`` leaves the old session nothing)."""
        version = self.store.data_version()
        if reread or version != self._data_version:
            self._data_version = version
            self._active = self.store.active_hashes()
            self._revoked = {p.name for p in self.store.players() if not p.is_active}
            self.hosting.sync()  # its versions: revoked, suspended... elsewhere
        for name, session in list(self.referee.sessions.items()):
            if self.hosting.process_hash(name) is not None:
                continue  # the arena's own process for a hosted game, not a player's
            if session.is_open and self._active.get(name) != self.token_of.get(session):
                log.info("player %s was revoked: ending its session %s", name, session.session_id)
                self.token_of[session] = ""  # ended once, whatever comes next
                self.spawn(self._remove(session))

    async def _watch_players(self) -> None:
        """``check_players`` every ``PLAYERS_POLL_S``: another process's ``players revoke``
        counts within that time (``data_version`` makes a look without change cheap)."""
        while True:
            self.check_players()
            await asyncio.sleep(PLAYERS_POLL_S)

    def is_registered(self, player: str) -> bool:
        """Whether ``player`` is a registered player now (not revoked)."""
        return player in self.store.active_hashes()

    def revoked_players(self) -> frozenset[str]:
        """The players revoked (as of the last ``check_players``)."""
        return frozenset(self._revoked)

    def is_active(self, name: str) -> bool:
        """Whether ``name`` is a registered player whose token works (not revoked)."""
        return name in self._active

    def expected_meetings(self) -> dict[tuple[str, str], int]:
        """Games each pair has played plus those booked for it (what "met" means to the
        matchmaker)."""
        met = dict(self.meetings)
        for key, games in self.reserved.items():
            met[key] = met.get(key, 0) + games
        return met

    def capacity_of(self, name: str) -> int:
        """How many more pairs connected bot ``name`` may play now: the ladder's ``per_bot``
        or the ``max_concurrent_games`` its session asked for, whichever is smaller, less
        the pairs it plays (0 if it cannot play)."""
        if not self.can_play(name):
            return 0
        session = self.referee.live_session(name)
        asked = session.max_concurrent_games if session is not None else 0
        limit = min(self.settings.per_bot, asked) if asked > 0 else self.settings.per_bot
        return max(0, limit - self.in_flight[name])

    def concurrency_left(self) -> int:
        """How many more pairs this process may referee now."""
        return max(0, self.settings.concurrency - self.local_pairs)

    def can_play(self, name: str) -> bool:
        """Connected with its player's current token, under the per-bot game limit."""
        limit = self.settings.games_per_bot
        session = self.referee.live_session(name)
        return (
            session is not None
            and (current := self._active.get(name)) is not None
            and self.token_of.get(session) == current
            and not (limit and self.games_played[name] >= limit)
        )

    def capacity(self) -> Capacity:
        """What may start now: the free referee slots (``concurrency_left``) and, while
        there are any, every connected bot that may play with its ``capacity_of``."""
        slots = self.concurrency_left()
        if slots <= 0:
            return Capacity(0, {})
        capacity = {name: self.capacity_of(name) for name in list(self.referee.sessions)}
        return Capacity(slots, {name: n for name, n in capacity.items() if n > 0})

    def reserve(self, a: str, b: str, *, deals: int, games: int, local: bool) -> Pairing:
        """Reserve a pairing of ``a`` and ``b`` until ``release``: ``deals`` consecutive
        ladder pair numbers, ``games`` booked (``Booking``), both counted in flight and,
        ``local`` (this process referees it), one of the ``concurrency`` slots."""
        first = self._next_pair
        self._next_pair += deals
        booking = Booking(self.reserved, a, b, games)
        for name in (a, b):
            self.in_flight[name] += 1
        self.local_pairs += local
        return Pairing((a, b), first, deals, booking, local)

    def release(self, pairing: Pairing) -> None:
        """The pairing is over, and what it did not play never will be: the games it dealt
        are published (a half not played leaves its twin nothing to wait for), its booking
        closed, its sides and slot free again."""
        for seed in pairing.seeds:
            self.publish(self.held.pop((seed, pair_key(*pairing.seats)), []))
        pairing.booking.close()
        for name in pairing.seats:
            self.in_flight[name] -= 1
        self.local_pairs -= pairing.local
        self.wake()

    def is_committed(self, game_id: str) -> bool:
        """Whether game ``game_id`` is stored (a hosted batch played twice records it once)."""
        return self.store.game(game_id) is not None

    def deals_of(self, a: str, b: str) -> int:
        """How many pair numbers a pairing's two games take: two when a connected bot plays
        and ``independent_deals`` is on (a deal each), else one (a duplicate deal)."""
        connected = [n for n in (a, b) if not self.hosting.is_hosted(n)]
        return 2 if connected and self.settings.independent_deals else 1

    def deal_plan(self, a: str, b: str, first: int) -> list[tuple[str, tuple[str, str], int, str]]:
        """The two games of pairing ``(a, b)`` from pair number ``first``: ``(game id, seats,
        pair, match info)`` each; ``deals_of`` says whether they share one deal."""
        deals = Deals.INDEPENDENT if self.deals_of(a, b) == 2 else Deals.DUPLICATE
        word = "independent deal" if deals is Deals.INDEPENDENT else "deal"
        one, two = pairing_deals(first, deals)
        return [
            (ladder_game_id(one, False), (a, b), one, f"ladder pair {one}, {word} 1 of 2"),
            (ladder_game_id(two, True), (b, a), two, f"ladder pair {two}, {word} 2 of 2"),
        ]

    def _start_pairs(self) -> None:
        """Pair connected bots; with hosted versions too, ``Hosting.start_games`` pairs
        everyone at once (so neither side's pairs are chosen without the other's)."""
        if self.hosting.start_games():
            return
        free = self.capacity()
        meetings = self.expected_meetings()
        for a, b in choose_pairs(free.connected, meetings, self.ratings, free.slots, self.rng):
            self.start_pair(a, b)

    def start_pair(self, a: str, b: str) -> None:
        """Start a pairing of two connected bots (its two games in turn)."""
        pairing = self.reserve(a, b, deals=self.deals_of(a, b), games=2, local=True)
        self.spawn(self.play_pairing(pairing))

    async def _remove(self, session: BotSession) -> None:
        await session.end(
            EndReason.REMOVED,
            "the organizer revoked this bot",
            self.settings.referee.limits.write_deadline_s,
        )
        await self.referee.unregister(session)

    @contextlib.asynccontextmanager
    async def connected_seat(self, name: str, half: int) -> AsyncIterator[str | None]:
        """How a connected bot comes to a game (``SeatStart``): as itself."""
        yield name

    async def play_pairing(
        self,
        pairing: Pairing,
        plays: Callable[[str], bool] | None = None,
        seat: SeatStart | None = None,
        counted: Callable[[GameResult], None] = lambda result: None,
    ) -> None:
        """A reserved pairing's two games on this process's referee, (a, b) then (b, a)
        (``deal_plan``: one duplicate deal, or two independent ones), then ``release``.
        Before each game both sides must still play (``plays``: ``can_play`` by default),
        then ``seat`` brings each to it (``connected_seat`` by default; the hosted wing
        starts a version's process there); each result is committed, then ``counted``.
        It stops early when a side cannot play or the arena is stopping: the missing half
        is simply not played."""
        plays, seat = plays or self.can_play, seat or self.connected_seat
        a, b = pairing.seats
        try:
            for half, (game_id, seats, pair, info) in enumerate(
                self.deal_plan(a, b, pairing.first)
            ):
                if self.closing or not (plays(a) and plays(b)):
                    break
                seed = ladder_seed(self.seed, self.secret, LADDER, (a, b), pair)
                pairing.seeds.add(seed)
                async with seat(seats[0], half) as one, seat(seats[1], half) as two:
                    if one is None or two is None:
                        break
                    report = await self.play_game(game_id, (one, two), seed, info, LADDER)
                    if report is None:
                        break
                    report.players = seats  # the record names the bots, not their processes
                    result = game_result(report, seats)
                    await self.commit_result(
                        result, report.detail, report.record, LADDER, pair, pairing.booking
                    )
                counted(result)
        finally:
            self.release(pairing)

    async def play_game(
        self, game_id: str, seats: tuple[str, str], seed: int, info: str, event: str
    ) -> GameReport | None:
        """Referee one game, visible as live while it runs; None if a bot is not connected."""
        live = LiveGame(game_id, seats, event, time.time())
        self.live[game_id] = live

        def observe(game: Game) -> None:
            live.game = game

        def waiting(pending: tuple[PendingDecision, ...]) -> None:
            live.pending = pending

        self.changes.fire()
        try:
            return await self.referee.play(
                game_id,
                seats,
                seed=seed,
                ruleset=self.settings.ruleset,
                match_info=info,
                observe=observe,
                on_pending=waiting,
            )
        except LookupError:
            self.live.pop(game_id, None)
            return None
        except BaseException:
            self.live.pop(game_id, None)
            raise
        # It stays live until ``commit`` has stored it: its page never shows "no such game".

    async def commit(
        self,
        report: GameReport,
        event: str,
        pair: int,
        booking: Booking | None = None,
        *,
        deals: Deals | None = None,
    ) -> StoredGame:
        """Store a finished game (durable first), count it for the matchmaker, and publish
        it with its twin, or hold it until the twin ends."""
        return await self.commit_result(
            game_result(report), report.detail, report.record, event, pair, booking, deals=deals
        )

    async def commit_result(
        self,
        result: GameResult,
        detail: str,
        record: dict[str, Any],
        event: str,
        pair: int,
        booking: Booking | None = None,
        *,
        deals: Deals | None = None,
    ) -> StoredGame:
        """``commit`` for a game given as its result (a hosted batch's games come back from
        their worker so).  Its record says how it was dealt: ``ladder`` (its pair) or, for an
        event's game, ``event`` (its name and plan index) with the event's ``deals``."""
        if event == LADDER:
            independent = self.deals_of(*result.seats) == 2
            deals = Deals.INDEPENDENT if independent else Deals.DUPLICATE
            record = {**record, "ladder": {"pair": pair, "deals": deals.value}}
        else:
            deals = deals or event_deals(self.store.meta(event_deals_key(event)))
            record = {**record, "event": {"name": event, "game": pair, "deals": deals.value}}
        lone = deals is Deals.INDEPENDENT
        if not lone:
            # Held from before it is stored: the commit waits on the store's writer thread,
            # and a page served meanwhile found it stored and not yet held (a twin could read
            # the deal its twin game is still playing).  ``publish`` lets it go.
            self.held_ids.add(result.game_id)
        try:
            stored = await self.store.commit_game(result, detail, record, event=event, pair=pair)
        except BaseException:
            self.held_ids.discard(result.game_id)
            raise
        self.live.pop(result.game_id, None)
        self.meetings[pair_key(*result.seats)] += 1
        if booking is not None:
            booking.played()
        for bot in result.seats:
            self.games_played[bot] += 1
        key = duplicate_key(result)
        twin = self.held.pop(key, None)
        if lone:
            self.publish([stored])  # no other game shares its deal
        elif twin is None:
            self.held[key] = [stored]
        else:
            self.publish([*twin, stored])
        self.changes.fire()
        for listener in self.on_game:
            listener(stored)
        return stored

    def publish(self, games: list[StoredGame]) -> None:
        """Show committed games on the pages (their pair is over), in commit order."""
        for stored in games:
            self.held_ids.discard(stored.result.game_id)
            self.recent.appendleft(stored)
            self.tally.add(stored.result)
            self._seen.update(stored.result.seats)
            self.decisions += sum(stored.result.decisions)
        if games:
            self._refit.set()
            self.changes.fire()

    def _hold_unpaired_event_games(self) -> None:
        """At start-up: hold the stored games of unfinished events whose twin is not stored
        (the event, played on, will deal it).  Every ladder pair is over: a restarted ladder
        starts new pairs, so its lone halves are published."""
        games = self.store.games()
        pairs = collections.Counter(duplicate_key(g.result) for g in games)
        for stored in reversed(games):
            key = duplicate_key(stored.result)
            if (
                stored.event != LADDER
                and pairs[key] == 1
                and self.store.meta(event_over_key(stored.event)) is None
                and event_deals(self.store.meta(event_deals_key(stored.event)))
                is Deals.DUPLICATE  # an independent deal has no twin to wait for
            ):
                self.held[key] = [stored]
                self.held_ids.add(stored.result.game_id)

    async def _refresh_loop(self) -> None:
        while True:
            await self._refit.wait()
            self._refit.clear()
            tally, names = self.tally.copy(), self._entrants()
            standings = await asyncio.to_thread(standings_of, tally, names)
            self.standings, self.standings_games = standings, tally.games
            self.changes.fire()
            await asyncio.sleep(self.settings.refresh_s)

    def _entrants(self) -> list[str]:
        return sorted(self._seen | {p.name for p in self.store.players()})


def _arena_seed(store: ArenaStore) -> int:
    """The arena's seed: stored, or drawn (``secrets``) and stored when the store is new."""
    stored_seed = store.meta("seed")
    if stored_seed is None:
        stored_seed = str(secrets.randbits(63))
        store.set_meta("seed", stored_seed)
    return int(stored_seed)


def event_over_key(event: str) -> str:
    """The ``meta`` key set when event ``event`` (a round robin or a Swiss) is over."""
    return f"event:{event}:over"


def _rating_history(
    path: Path, held: frozenset[str], names: list[str], bot: str, points: int
) -> list[tuple[int, float, float]]:
    """In a worker thread: the published results, read from the store for this one answer
    (a game the store holds but the arena has not published yet, in commit, is left out: its
    new version's name is not among ``names`` yet, and the fit refused it with a 500)."""
    known = set(names)
    results = [
        r for r in read_results(path) if r.game_id not in held and known.issuperset(r.seats)
    ]
    ends = [i for i, r in enumerate(results) if bot in r.seats]
    step = max(1, len(ends) // points)
    marks = sorted({*range(step - 1, len(ends), step), len(ends) - 1}) if ends else []
    history = []
    for mark in marks:
        rating = fit_ratings(names, rating_games(results[: ends[mark] + 1]))[bot]
        history.append((mark + 1, rating.elo, rating.err))
    return history
