"""Events: a round robin or a Swiss played inside the arena (``serve --event round_robin``,
``serve --event swiss --rounds N``).

The entrants are the bots connected when the event starts (``start_after_s`` after the server,
or as soon as ``start_with`` bots are connected), kept in the store so a restarted server plays
the same event on. Late joiners are added to the remaining schedule (each meets every entrant
``games_per_pairing`` times) unless the organizer says not to. Absent bots never stop it: their
games wait while others are played, and once only games of absent bots are left and
``absent_s`` has passed, those are recorded as forfeits by the absent seat (not played). Deals
and seeds are the tournament's (``schedule.round_robin``, with the event's secret:
``deals.event_secret``), so duplicate pairs are adjacent and the event replays exactly; the
secret is published when the event is over.

Every entrant is a connected bot, one process that would remember a duplicate deal's first
game in its second, so an event follows the arena's ``LadderSettings.independent_deals``
(stored at its start, ``deals.event_deals_key``): each game of a pairing is then a deal of its
own, deal numbers ``deals.pairing_deals(2 * d)`` for the round robin's deal ``d``, with the
same seed function and secret.

A Swiss event (``serve --event swiss``) pairs its rounds with ``tournament.swiss``, the
pairing ``run --format swiss`` uses (one procedure in one place): round r+1 is paired from the
stored results once every game of round r is stored, so a restarted server pairs the same.
Its entrants are fixed at its start (late joiners wait for the next event).  Its games are
``EVENT:rN-A-B-dK``, dealt as a round robin's, deal K of the pairing numbered on across the
rounds (``swiss_game``), so ``verify`` checks their deals as it checks a round robin's.
When an event is over, ``EventSettings.notify`` gets its summary (``tournament.notify.post``,
the one ``run --notify`` uses, off the arena's loop (``post_off_loop``): retried, never
failing the event, never holding a stop).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from tacocat_arena.arena.deals import Deals, event_deals, event_deals_key, pairing_deals
from tacocat_arena.arena.ladder import Arena, Pairing, event_over_key
from tacocat_arena.arena.store import LADDER
from tacocat_arena.engine import Outcome, Termination
from tacocat_arena.referee import GameReport
from tacocat_arena.stats.tables import GameResult, compute_standings
from tacocat_arena.stats.tiebreaks import SwissRow, swiss_standings
from tacocat_arena.tournament.commitments import secret_commitment
from tacocat_arena.tournament.config import TournamentFormat, swiss_max_rounds
from tacocat_arena.tournament.notify import post_off_loop
from tacocat_arena.tournament.schedule import PlannedGame, deal_seed, round_robin
from tacocat_arena.tournament.swiss import Outcome as SwissOutcome
from tacocat_arena.tournament.swiss import SwissState, swiss_rounds

#: The formats an arena event plays.
EVENT_FORMATS = (TournamentFormat.ROUND_ROBIN, TournamentFormat.SWISS)


@dataclass(frozen=True)
class EventSettings:
    """One event: a round robin, or a Swiss (``format``, ``rounds``)."""

    name: str = "round-robin"
    games_per_pairing: int = 2
    late_joiners: bool = True
    #: Seconds after start-up at which the connected bots become the entrants.
    start_after_s: float = 10.0
    #: Seconds the event waits for absent bots once nothing else is left to play.
    absent_s: float = 60.0
    format: TournamentFormat = TournamentFormat.ROUND_ROBIN
    #: A Swiss event's rounds (None: ceil(log2(entrants)), as ``run``'s default).
    rounds: int | None = None
    #: An http(s) URL told the event's summary once it is over (``tournament.notify``).
    notify: str | None = None
    #: Start as soon as this many bots are connected, before ``start_after_s`` (None: at
    #: it): an organizer who knows the field does not wait on a clock that a slow start of
    #: the bots (a loaded machine, a late laptop) could beat.
    start_with: int | None = None

    def __post_init__(self) -> None:
        if self.games_per_pairing < 2 or self.games_per_pairing % 2:
            raise ValueError(
                "--games must be even and at least 2 (a pairing's games come two by two, "
                "seats swapped)"
            )
        if self.format not in EVENT_FORMATS:
            words = " or ".join(f.value for f in EVENT_FORMATS)
            raise ValueError(f"an arena event is a {words}, not a {self.format.value}")
        if self.rounds is not None and self.format is not TournamentFormat.SWISS:
            raise ValueError("--rounds is for a Swiss event (--event swiss)")
        if self.rounds is not None and self.rounds < 1:
            raise ValueError(f"--rounds must be >= 1, got {self.rounds}")
        if self.start_with is not None and self.start_with < 2:
            raise ValueError(f"--start-with must be >= 2, got {self.start_with}")

    def swiss_rounds_for(self, entrants: int) -> int:
        """The rounds a Swiss of ``entrants`` plays: ``rounds`` (at most as many as let no
        two bots meet twice), or ceil(log2(entrants))."""
        wanted = self.rounds if self.rounds is not None else max(1, (entrants - 1).bit_length())
        return min(wanted, swiss_max_rounds(entrants))


def event_entrants_key(event: str) -> str:
    """The ``meta`` key of event ``event``'s entrants (a JSON list), stored at its start and
    as late joiners join, so a restarted server plays the same event on."""
    return f"event:{event}:entrants"


def event_format_key(event: str) -> str:
    """The ``meta`` key of event ``event``'s format and rounds, stored at its start (JSON),
    so a restarted server plays the event it started; absent for an event from before: a
    round robin."""
    return f"event:{event}:format"


@dataclass(frozen=True)
class EventKind:
    """What an event is, as stored at its start."""

    format: TournamentFormat
    games: int  # per pairing (a Swiss: per match)
    rounds: int = 0  # a Swiss's

    @classmethod
    def of(cls, stored: str | None, games: int) -> EventKind:
        """The stored kind (``games``: the server's --games, for an event from before)."""
        if stored is None:
            return cls(TournamentFormat.ROUND_ROBIN, games)
        data = json.loads(stored)
        return cls(TournamentFormat(data["format"]), int(data["games"]), int(data["rounds"]))

    def dumps(self) -> str:
        return json.dumps({"format": self.format.value, "games": self.games, "rounds": self.rounds})


async def run_event(
    arena: Arena, settings: EventSettings, say: Callable[[str], None], stop: asyncio.Event
) -> None:
    """Play the event to its end, then set ``stop`` (the server's run is the event's)."""
    store = arena.store
    key = event_entrants_key(settings.name)
    begun = await _start(arena, settings, stop, say)
    if begun is None:
        return
    entrants, deals, kind = begun
    swiss = kind.format is TournamentFormat.SWISS
    secret = arena.event_secret(settings.name)

    def current_plan() -> list[PlannedGame]:
        if swiss:
            results = store.results(event=settings.name)
            return swiss_event(settings.name, entrants, kind, arena.seed, secret, deals, results)[1]
        return _plan(entrants, settings, arena.seed, secret, deals)

    plan = current_plan()
    _announce(arena, settings, kind, entrants, deals, len(plan), say)
    done = {g.result.game_id for g in store.games(event=settings.name)}
    running: set[str] = set()
    waiting_since: float | None = None
    while not stop.is_set():
        if settings.late_joiners and not swiss:  # a Swiss's entrants are fixed
            for newcomer in _present(arena, entrants):
                entrants.append(newcomer)
                store.set_meta(key, json.dumps(entrants))
                plan = _plan(entrants, settings, arena.seed, secret, deals)
                say(f"event {settings.name!r}: {newcomer} joins; now {len(plan)} games")
        todo = [g for g in plan if g.game_id not in done and g.game_id not in running]
        if not todo and not running and swiss and len(replan := current_plan()) > len(plan):
            plan = replan  # the round is over: the next one is paired from the store
            say(f"event {settings.name!r}: {round_words(plan[-1])} paired")
            continue
        if not todo and not running:
            break
        started = _start_games(arena, todo, plan, settings, deals, done, running)
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
        await _over(arena, settings, kind, entrants, deals, say)
        stop.set()


def _start_games(
    arena: Arena,
    todo: list[PlannedGame],
    plan: list[PlannedGame],
    settings: EventSettings,
    deals: Deals,
    done: set[str],
    running: set[str],
) -> bool:
    """Start the games of ``todo`` whose bots may play now, each holding one of the arena's
    ``concurrency`` slots and a place in both bots' ``per_bot`` (``Arena.reserve``, as the
    ladder's pairs and a person's games hold theirs) until it ends; whether any started."""
    started = False
    for planned in todo:
        if arena.concurrency_left() <= 0:
            break
        if all(
            arena.can_play(n) and arena.in_flight[n] < arena.settings.per_bot for n in planned.seats
        ):
            running.add(planned.game_id)
            a, b = planned.seats
            slot = arena.reserve(a, b, deals=0, games=0, local=True)
            index = plan.index(planned)
            arena.spawn(_play(arena, planned, index, settings, deals, done, running, slot))
            started = True
    return started


def _announce(
    arena: Arena,
    settings: EventSettings,
    kind: EventKind,
    entrants: list[str],
    deals: Deals,
    planned: int,
    say: Callable[[str], None],
) -> None:
    """Publish the commitment to the event's secret (kept: the secret is published at the
    end) and say what the event is."""
    swiss = kind.format is TournamentFormat.SWISS
    # Published at the start (and kept): the commitment to the secret published at the end.
    committed = secret_commitment(arena.event_secret(settings.name))
    arena.store.set_meta(event_commitment_key(settings.name), committed)
    games = (
        f"a Swiss of {kind.rounds} round{'' if kind.rounds == 1 else 's'} "
        f"({planned} games paired so far)"
        if swiss
        else f"{planned} games"
    )
    if swiss and kind.rounds != (settings.rounds or kind.rounds):
        games += f"; --rounds {settings.rounds} is more than {len(entrants)} entrants allow"
    say(
        f"event {settings.name!r}: {len(entrants)} entrants ({', '.join(entrants)}), "
        f"{games} on {deals.value} deals; its deal secret committed as {committed}"
    )
    say(f"event {settings.name!r}: its page is /event/{settings.name} on the web address")


async def _start(
    arena: Arena, settings: EventSettings, stop: asyncio.Event, say: Callable[[str], None]
) -> tuple[list[str], Deals, EventKind] | None:
    """The event's entrants, deals and kind: stored ones (a restarted server plays its event
    on), or, ``start_after_s`` after start-up (sooner once ``start_with`` are connected), the
    bots connected then, stored now (None: the server stopped first).  Waiting for a second
    bot is said once: the server sat silent."""
    store = arena.store
    key = event_entrants_key(settings.name)
    stored = store.meta(key)
    if stored is not None:
        deals = event_deals(store.meta(event_deals_key(settings.name)))
        kind = EventKind.of(store.meta(event_format_key(settings.name)), settings.games_per_pairing)
        return json.loads(stored), deals, kind
    await _until_start(arena, settings, stop)
    said = False
    while len(entrants := _present(arena, [])) < 2 and not stop.is_set():
        if not said:
            said = True
            say(
                f"event {settings.name!r}: waiting for a second bot to connect "
                f"({len(entrants)} connected; it starts with the bots connected then)"
            )
        await arena.changes.wait(1.0)
    if stop.is_set():
        return None
    deals = Deals.INDEPENDENT if arena.settings.independent_deals else Deals.DUPLICATE
    swiss = settings.format is TournamentFormat.SWISS
    rounds = settings.swiss_rounds_for(len(entrants)) if swiss else 0
    kind = EventKind(settings.format, settings.games_per_pairing, rounds)
    store.set_meta(event_deals_key(settings.name), deals.value)
    store.set_meta(event_format_key(settings.name), kind.dumps())
    store.set_meta(key, json.dumps(entrants))
    return entrants, deals, kind


async def _over(
    arena: Arena,
    settings: EventSettings,
    kind: EventKind,
    entrants: list[str],
    deals: Deals,
    say: Callable[[str], None],
) -> None:
    """The event is over: mark it, publish its secret, print its standings, notify."""
    store = arena.store
    swiss = kind.format is TournamentFormat.SWISS
    results = store.results(event=settings.name)
    store.set_meta(event_over_key(settings.name), "1")
    say(
        f"event {settings.name!r} is over: {len(results)} games; its deal secret, "
        f"published now: {arena.event_secret(settings.name)}"
    )
    standings = compute_standings(results, sorted(entrants))
    for row in standings:
        err = "unrated" if row.elo_err is None else f"{row.elo:.0f} ± {row.elo_err:.0f}"
        say(f"  {row.rank:>2}. {row.bot:<20} {row.score:>6} / {row.games}   {err}")
    table: list[SwissRow] = []
    if swiss:
        table = swiss_table(settings.name, entrants, kind, deals, results)[1]
        say(f"event {settings.name!r}, Swiss standings (match points, Buchholz, SB):")
        for line in table:  # in columns under the standings' names (they were ragged)
            say(
                f"  {line.rank:>2}. {line.bot:<20} {line.points:>6g} {line.buchholz:>6g} "
                f"{line.sonneborn_berger:>6g}"
            )
    if settings.notify is not None:
        body = event_summary(settings.name, kind, standings, table, len(results))
        await post_off_loop(settings.notify, body, say=say)


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


def swiss_game(
    event: str, number: int, game: PlannedGame, per_round: int, seed: int, secret: str, deals: Deals
) -> PlannedGame:
    """The arena's game of a Swiss round's ``game`` (``swiss.round_games``' id ``rN-A-B-dD``):
    ``EVENT:rN-A-B-dK``, K the pairing's deal numbered on across the rounds (its own K per
    game on independent deals), dealt as a round robin's deal K of the pairing."""
    base = (number - 1) * per_round + game.deal
    deal = base if deals is Deals.DUPLICATE else pairing_deals(base * 2, deals)[game.twin]
    pairing = game.seats[::-1] if game.twin else game.seats  # bot A first, for both games
    head = game.game_id.rpartition("-d")[0]
    return PlannedGame(
        f"{event}:{head}-d{deal}",
        game.seats,
        deal_seed(seed, pairing, deal, secret=secret),
        deal,
        twin=game.twin,
    )


def _swiss_outcome(
    event: str, result: GameResult | SwissOutcome, per_round: int, deals: Deals
) -> SwissOutcome | None:
    """A stored game of Swiss ``event`` as ``tournament.swiss`` names it (``swiss_game``
    backwards); None for an id that is none of its games (``verify`` reports those)."""
    head, _, deal = result.game_id.removeprefix(f"{event}:").rpartition("-d")
    number = head.partition("-")[0].removeprefix("r")
    if not (deal.isdigit() and number.isdigit()):
        return None
    base = int(deal) // deals.per_pairing
    swiss_deal = base - (int(number) - 1) * per_round
    return SwissOutcome(f"{head}-d{swiss_deal}", result.seats, result.winner)


def swiss_event(
    event: str,
    entrants: list[str],
    kind: EventKind,
    seed: int,
    secret: str,
    deals: Deals,
    results: Sequence[GameResult | SwissOutcome],
) -> tuple[SwissState, list[PlannedGame]]:
    """Swiss ``event``'s rounds paired so far from its stored ``results``, and their games as
    the arena plays them (``swiss_game``).  The pairing reads only the results; ``seed`` and
    ``secret`` deal the games."""
    per_round = kind.games // 2
    outcomes = [o for r in results if (o := _swiss_outcome(event, r, per_round, deals))]
    state = swiss_rounds(entrants, kind.rounds, kind.games, seed, outcomes, secret=secret)
    plan = [
        swiss_game(event, number, game, per_round, seed, secret, deals)
        for number, games in enumerate(state.games, start=1)
        for game in games
    ]
    return state, plan


def swiss_table(
    event: str, entrants: list[str], kind: EventKind, deals: Deals, results: list[GameResult]
) -> tuple[SwissState, list[SwissRow]]:
    """Swiss ``event``'s pairing state and standings: match points, Buchholz,
    Sonneborn–Berger, then the Elo fit of its games (``stats.tiebreaks``)."""
    state, _ = swiss_event(event, entrants, kind, 0, "", deals, results)
    elo = {row.bot: row.elo for row in compute_standings(results, entrants)}
    finished = state.rounds[: state.finished]
    byes = [(r.number, r.bye) for r in finished if r.bye is not None]
    return state, swiss_standings(entrants, state.scores, byes, elo)


def round_words(game: PlannedGame) -> str:
    """``round N`` of a Swiss event's game."""
    return f"round {game.game_id.rpartition(':')[2].partition('-')[0].removeprefix('r')}"


def event_name_problem(name: str) -> str:
    """Why ``name`` cannot name an event ("" if it can): the ladder's own name (its games
    would be taken for the ladder's: their deals, their page, verify), or a character that
    breaks its page's address (``/``, ``?``, ``#``, ``%``) or its lines (a control character)."""
    if name == LADDER:
        return f"--event-name {name!r} is the ladder's own name: choose another"
    if not name.strip() or any(c in "/?#%" or not c.isprintable() for c in name):
        return (
            f"--event-name {name!r}: a name is printable text without / ? # % "
            "(its page is /event/NAME)"
        )
    return ""


def event_summary(
    event: str,
    kind: EventKind,
    standings: list[Any],
    table: list[SwissRow],
    played: int,
) -> dict[str, Any]:
    """What ``serve --notify`` POSTs once an event is over: the keys of ``run --notify``'s
    summary (``tournament.notify.summary``) that an arena event has."""
    body: dict[str, Any] = {
        "event": event,
        "format": kind.format.value,
        "complete": True,
        "games_played": played,
        "standings": [
            {"rank": r.rank, "bot": r.bot, "games": r.games, "score": r.score, "elo": r.elo}
            for r in standings
        ],
        "page": f"/event/{event}",
    }
    if kind.format is TournamentFormat.SWISS:
        body["rounds"] = kind.rounds
        body["swiss_standings"] = [asdict(row) for row in table]
    return body


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
    slot: Pairing,
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
        arena.release(slot)  # its bots and its slot free again; the loop is woken


def _unplayed(arena: Arena, planned: PlannedGame) -> GameReport:
    absent = [seat for seat, name in enumerate(planned.seats) if not arena.is_connected(name)]
    seat = absent[0] if len(absent) == 1 else None
    outcome = Outcome(Termination.FORFEIT_DISCONNECT, None if seat is None else 1 - seat)
    names = " and ".join(planned.seats[s] for s in absent) or "a bot"
    detail = f"{names} did not come back within the event's wait; game not played"
    return GameReport.unplayed(planned.game_id, planned.seats, planned.seed, outcome, detail)


async def _until_start(arena: Arena, settings: EventSettings, stop: asyncio.Event) -> None:
    """Until ``start_after_s`` has passed, ``start_with`` bots are connected or the server
    stops.  A connection wakes the arena's ``changes``; the one-second bound rechecks the
    stop, which does not."""
    if settings.start_with is None:
        await _sleep_or_stop(stop, settings.start_after_s)
        return
    deadline = time.monotonic() + settings.start_after_s
    while not stop.is_set() and len(_present(arena, [])) < settings.start_with:
        left = deadline - time.monotonic()
        if left <= 0:
            return
        await arena.changes.wait(min(left, 1.0))


async def _sleep_or_stop(stop: asyncio.Event, seconds: float) -> None:
    try:
        await asyncio.wait_for(stop.wait(), seconds)
    except TimeoutError:
        pass


def event_commitment_key(event: str) -> str:
    """The ``meta`` key of event ``event``'s commitment to its deal secret, published at its
    start (``commitments.secret_commitment``; ``verify`` checks it, A1)."""
    return f"event:{event}:commitment"


def event_view(arena: Arena, event: str) -> dict[str, Any] | None:
    """What the event's page shows (None: no such event): its format, entrants, whether it is
    over; a Swiss's rounds (pairings, match scores of finished rounds, byes) and standings
    with their tiebreaks; a round robin's standings.  Only published games count: a game held
    until its twin ends (``Arena.held_ids``) is not shown, as on every other page."""
    store = arena.store
    stored = store.meta(event_entrants_key(event))
    if stored is None:
        return None
    entrants: list[str] = json.loads(stored)
    kind = EventKind.of(store.meta(event_format_key(event)), 2)
    deals = event_deals(store.meta(event_deals_key(event)))
    held = arena.held_ids
    results = [r for r in store.results(event=event) if r.game_id not in held]
    view: dict[str, Any] = {
        "event": event,
        "format": kind.format.value,
        "entrants": entrants,
        "over": store.meta(event_over_key(event)) is not None,
        "games": len(results),
        "standings": compute_standings(results, sorted(entrants)),
        "deals": deals.value,
    }
    if kind.format is TournamentFormat.SWISS:
        state, table = swiss_table(event, entrants, kind, deals, results)
        rounds = []
        for index, played in enumerate(state.rounds):
            scores = {(s.a, s.b): s for s in state.scores if s.round == played.number}
            finished = index < state.finished
            matches = [
                {
                    "a": p.a,
                    "b": p.b,
                    "points": (scores[(p.a, p.b)].points_a, scores[(p.a, p.b)].points_b)
                    if finished
                    else None,
                }
                for p in played.pairings
            ]
            rounds.append({"number": played.number, "matches": matches, "bye": played.bye})
        view.update(rounds=rounds, planned_rounds=kind.rounds, swiss=table)
    return view


def swiss_problems(
    event: str,
    entrants: list[str],
    kind: EventKind,
    deals: Deals,
    over: bool,
    games: Sequence[SwissOutcome],
    seed: int,
    secret: str,
) -> list[tuple[str, str]]:
    """What ``verify`` finds wrong with Swiss ``event``'s stored ``games``, (game id or the
    event's name, message) each: the rounds re-paired from the games' own results must be
    exactly the games stored (a pairing changed, a match added or dropped, a result changed
    that would have paired a later round otherwise), with their seats; an event over has
    every round's every game (``seed``: the arena's; ``secret``: the event's)."""
    state, plan = swiss_event(event, entrants, kind, seed, secret, deals, games)
    planned = {game.game_id: game for game in plan}
    found = []
    for game in games:
        expected = planned.get(game.game_id)
        if expected is None:
            found.append((game.game_id, f"is no game of Swiss event {event!r} as its rounds "
                          "re-pair from its stored results"))  # fmt: skip
        elif expected.seats != game.seats:
            found.append((game.game_id, f"seats {game.seats}, paired {expected.seats}"))
    if over:
        stored = {game.game_id for game in games}
        for game_id in planned.keys() - stored:
            found.append((game_id, f"a game of Swiss event {event!r}'s pairing is missing"))
        if state.finished < kind.rounds:
            found.append((event, f"the event is over after {state.finished} of {kind.rounds} "
                          "rounds"))  # fmt: skip
    return found
