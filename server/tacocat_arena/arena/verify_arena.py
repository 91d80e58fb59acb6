"""What ``verify`` checks of an arena's folder (``serve --dir``): its games, and its deals.

Every game in ``arena.sqlite`` re-verifies as a tournament's does (``tournament/verify.py``:
replay, the referee's claims, the row against its record).  Beyond that, the store holds the
arena's seed and its deal secret, from which docs/arena-server.md ("Deals and their secret")
derives every deal, so the arena's own plan is checked too (A1):

* a ladder game's id is ``deals.ladder_game_id`` of its stored ``pair`` (``L000123a`` or
  ``...b``), the two halves of a pair seat the same two bots swapped, and its seed is
  ``deals.ladder_seed`` of the arena's seed, the secret, the pair and the two bots;
* a round-robin event's game is ``EVENT:A-B-dN``, dealt ``schedule.deal_seed`` of the arena's
  seed, the two bots, deal N and the event's derived secret, both games of a deal alike; on
  an event's independent deals (``deals.event_deals_key``) no two games share a deal;
* a seat is a bot's name, never the ``NAME~B`` twin that played it (issue 38: hosted games
  named the twin), and a hosted version (``alice@v2``) is one the store holds, that was
  admitted to play (not one still being checked, nor one its gate rejected);
* a Swiss event's rounds re-pair from its stored results (``events.swiss_problems``, the
  pairing of ``tournament/swiss.py``) to exactly the games it stored;
* an event's deal secret is the one it committed to at its start (``serve`` prints the
  commitment; the store keeps it).
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from pathlib import Path

from tacocat_arena.arena.deals import (
    SECRET_KEY,
    Deals,
    event_deals,
    event_deals_key,
    event_secret,
    ladder_game_id,
    ladder_seed,
)
from tacocat_arena.arena.events import (
    EventKind,
    event_commitment_key,
    event_entrants_key,
    event_format_key,
    swiss_problems,
)
from tacocat_arena.arena.ladder import event_over_key
from tacocat_arena.arena.store import DB_NAME, LADDER
from tacocat_arena.arena.submissions import Status, parse_identity
from tacocat_arena.tournament.commitments import secret_commitment
from tacocat_arena.tournament.config import TournamentFormat
from tacocat_arena.tournament.runner import TWIN_SUFFIX
from tacocat_arena.tournament.schedule import deal_seed
from tacocat_arena.tournament.swiss import Outcome
from tacocat_arena.tournament.verify import (
    InputError,
    Problem,
    Verification,
    verify_path,
    with_problems,
)

#: Statuses of a version that never played a game.
_NEVER_PLAYED = frozenset({Status.CHECKING, Status.REJECTED})
#: One stored game as the deal check reads it: id, event, pair, seats, seed.
_Row = tuple[str, str, int, tuple[str, str], int]


def is_arena(path: Path) -> bool:
    """Whether ``path`` is an arena's folder or its store."""
    return (path / DB_NAME).is_file() if path.is_dir() else path.name == DB_NAME


def verify_arena(path: Path) -> Verification:
    """Every game of the arena at ``path`` (its folder or its arena.sqlite) and its deals."""
    store = path / DB_NAME if path.is_dir() else path
    result = verify_path(store)
    try:
        found = check_deals(store)
    except sqlite3.Error as error:
        raise InputError(f"{store} is not an arena's store ({error})") from None
    return with_problems(
        result,
        found,
        "every deal re-derived from the arena's seed and secret, every seat a bot's name and "
        "every hosted version one the arena admitted",
    )


def check_deals(store: Path) -> list[Problem]:
    """A1 of every game in ``store`` (see the module docstring)."""
    db = sqlite3.connect(f"{store.resolve().as_uri()}?mode=ro", uri=True)
    try:
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        rows: list[_Row] = [
            (game_id, event, pair, (seat0, seat1), seed + 2**64 if seed < 0 else seed)
            for game_id, event, pair, seat0, seat1, seed in db.execute(
                "SELECT game_id, event, pair, seat0, seat1, seed FROM games ORDER BY seq"
            )
        ]
        versions = _versions(db)
        winners = dict(db.execute("SELECT game_id, winner FROM games").fetchall())
    finally:
        db.close()
    if "seed" not in meta or SECRET_KEY not in meta:
        return [Problem(str(store), None, "A1", "the store holds no seed or deal secret")]
    arena_seed, secret = int(meta["seed"]), str(meta[SECRET_KEY])
    found: list[Problem] = []
    for row in rows:
        found += _seats(row, versions)
    ladder = [row for row in rows if row[1] == LADDER]
    found += _ladder(ladder, arena_seed, secret)
    events = {row[1] for row in rows if row[1] != LADDER}
    deals = {event: event_deals(meta.get(event_deals_key(event))) for event in events}
    found += _events([row for row in rows if row[1] != LADDER], arena_seed, secret, deals)
    found += _swiss(rows, winners, meta, arena_seed, secret)
    for event in sorted({row[1] for row in rows if row[1] != LADDER}):
        committed = meta.get(event_commitment_key(event))
        if committed is not None and committed != secret_commitment(event_secret(secret, event)):
            found.append(
                Problem(
                    event, None, "A1", "the event's secret is not the one committed at its start"
                )
            )
    return found


def _swiss(
    rows: list[_Row],
    winners: dict[str, int | None],
    meta: dict[str, str],
    arena_seed: int,
    secret: str,
) -> list[Problem]:
    """A1 of each Swiss event: its rounds re-paired from its stored results
    (``events.swiss_problems``)."""
    found = []
    for event in sorted({row[1] for row in rows if row[1] != LADDER}):
        kind = EventKind.of(meta.get(event_format_key(event)), 2)
        entrants = meta.get(event_entrants_key(event))
        if kind.format is not TournamentFormat.SWISS or entrants is None:
            continue
        games = [
            Outcome(game_id, seats, winners.get(game_id))
            for game_id, where, _, seats, _ in rows
            if where == event
        ]
        problems = swiss_problems(
            event,
            json.loads(entrants),
            kind,
            event_deals(meta.get(event_deals_key(event))),
            meta.get(event_over_key(event)) is not None,
            games,
            arena_seed,
            event_secret(secret, event),
        )
        found += [Problem(where, None, "A1", message) for where, message in problems]
    return found


def _versions(db: sqlite3.Connection) -> dict[tuple[str, int], str] | None:
    """(player, version) -> status of the hosted versions; None for a store without any."""
    try:
        return {(p, v): s for p, v, s in db.execute("SELECT player, version, status FROM versions")}
    except sqlite3.OperationalError:
        return None  # an arena that never took an upload


def _seats(row: _Row, versions: dict[tuple[str, int], str] | None) -> list[Problem]:
    game_id, _, _, seats, _ = row
    found = []
    for seat, name in enumerate(seats):
        if name.endswith(TWIN_SUFFIX):
            found.append(
                Problem(game_id, None, "A1", f"seat {seat} is {name!r}: a twin, not a bot's name")
            )
            continue
        version = parse_identity(name)
        if version is None:
            continue  # a connected bot, a player's own name
        status = None if versions is None else versions.get(version)
        if status is None:
            found.append(Problem(game_id, None, "A1", f"seat {seat}'s {name} is no stored version"))
        elif status in _NEVER_PLAYED:
            found.append(
                Problem(game_id, None, "A1", f"seat {seat}'s {name} is {status}: it never played")
            )
    return found


def _ladder(rows: list[_Row], arena_seed: int, secret: str) -> list[Problem]:
    found = []
    halves: dict[int, list[_Row]] = defaultdict(list)
    for row in rows:
        game_id, _, pair, seats, seed = row
        halves[pair].append(row)
        if game_id not in (ladder_game_id(pair, False), ladder_game_id(pair, True)):
            found.append(Problem(game_id, None, "A1", f"is no game id of ladder pair {pair}"))
        expected = ladder_seed(arena_seed, secret, LADDER, seats, pair)
        if seed != expected:
            found.append(
                Problem(
                    game_id,
                    None,
                    "A1",
                    f"dealt with seed {seed}, not ladder pair {pair}'s {expected} (from the "
                    "arena's seed, its secret, the pair and the two bots)",
                )
            )
    for pair, both in halves.items():
        if len(both) > 2:
            found.append(
                Problem(both[0][0], None, "A1", f"ladder pair {pair} has {len(both)} games")
            )
        elif len(both) == 2 and both[0][3] != both[1][3][::-1]:
            found.append(
                Problem(
                    both[1][0],
                    None,
                    "A1",
                    f"seats {both[1][3]} are not its twin {both[0][0]}'s {both[0][3]} swapped",
                )
            )
    return found


def _events(
    rows: list[_Row], arena_seed: int, secret: str, deals: dict[str, Deals]
) -> list[Problem]:
    found = []
    dealt: dict[tuple[str, frozenset[str], int], list[_Row]] = defaultdict(list)
    for row in rows:
        game_id, event, _, seats, seed = row
        prefix, _, deal_text = game_id.rpartition("-d")
        if not prefix.startswith(f"{event}:") or not deal_text.isdigit():
            found.append(Problem(game_id, None, "A1", f"is no game id of event {event!r}"))
            continue
        deal = int(deal_text)
        dealt[(event, frozenset(seats), deal)].append(row)
        key = event_secret(secret, event)
        # The pairing is (earlier entrant, later one): either order of the seats.
        if seed not in {
            deal_seed(arena_seed, order, deal, secret=key) for order in (seats, seats[::-1])
        }:
            found.append(
                Problem(
                    game_id,
                    None,
                    "A1",
                    f"dealt with seed {seed}, not deal {deal} of {seats[0]} and {seats[1]} in "
                    f"event {event!r} (from the arena's seed and the event's secret)",
                )
            )
    for (event, _, deal), both in dealt.items():
        if len(both) > 1 and deals[event] is Deals.INDEPENDENT:
            found.append(
                Problem(
                    both[1][0],
                    None,
                    "A1",
                    f"shares deal {deal} with {both[0][0]} in event {event!r}, which deals "
                    "every game independently",
                )
            )
        elif len(both) == 2 and (both[0][4] != both[1][4] or both[0][3] != both[1][3][::-1]):
            found.append(
                Problem(
                    both[1][0],
                    None,
                    "A1",
                    f"is not deal {deal}'s twin of {both[0][0]} in event {event!r} (the same seed, "
                    "the seats swapped)",
                )
            )
    return found
