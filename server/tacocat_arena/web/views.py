"""What the arena's pages and JSON API show, as plain data: no rule or statistic of its own.

The standings are the ladder's (``stats.tables.standings_of``, Bradley-Terry ratings);
a live game is shown only through the engine's ``spectator_view`` (beside ``build_view``:
what both seats may know, never a hand or the draw pile) and the clock of the decision
pending; a finished game's record is public
(docs/game-record.md).  Bots go by their public names everywhere: a twin instance
(``alice@v1~B``, the process that plays a duplicate pair's second game) is its bot
(``public_name``).
"""

from __future__ import annotations

import time
from typing import Any

from tacocat_arena.arena.hosted import hosted_of
from tacocat_arena.arena.ladder import Arena, ConnectionFailure, LiveGame
from tacocat_arena.arena.names import public_name, public_text
from tacocat_arena.arena.store import StoredGame
from tacocat_arena.arena.submissions import Status, parse_identity, version_summary
from tacocat_arena.engine import spectator_view
from tacocat_arena.report import Frame, spectator_frames
from tacocat_arena.report.plot import elo_plot

#: Event kinds that end a game: a live page's frames stop before them (their detail waits for
#: the record, as ``spectator_state``'s events do).
_ENDINGS = frozenset({"forfeit", "game_end"})


def leaderboard(arena: Arena) -> list[dict[str, Any]]:
    """One row per ladder entry, best first: the standings, each bot's status now and its
    rating's bar (``bar``: the interval and the rating as percents of one scale shared by
    the rows).  A player that plays only through hosted versions has no row of its own
    besides theirs (``is_entry``)."""
    rows = []
    plot = elo_plot(arena.standings)
    bars = {row.bot: row for row in plot.rows}
    span = max(plot.right - plot.left, 1)
    for row in arena.standings:
        if not is_entry(arena, row.bot, row.games):
            continue
        bar = bars[row.bot]
        rows.append(
            {
                "rank": row.rank,
                "bot": row.bot,
                "games": row.games,
                "wins": row.wins,
                "losses": row.losses,
                "draws": row.draws,
                "score": row.score,
                "rating": round(row.elo, 1),
                "rating_err": None if row.elo_err is None else round(row.elo_err, 1),
                "forfeits": row.forfeits,
                "errors": row.errors,
                "mean_decision_ms": (
                    None if row.mean_decision_ms is None else round(row.mean_decision_ms, 2)
                ),
                "connected": arena.is_connected(row.bot),
                "playing": arena.in_flight[row.bot],
                **player_status(arena, row.bot),
                "bar": {
                    key: None if value is None else round(100 * (value - plot.left) / span, 1)
                    for key, value in (("x", bar.x), ("low", bar.low), ("high", bar.high))
                },
            }
        )
    return rows


def is_entry(arena: Arena, bot: str, games: int) -> bool:
    """Whether ``bot`` has a leaderboard row: every version and every bot with games does,
    and a player's own name while it is connected or has no hosted version (a player just
    added shows up), not when its versions' rows already stand for it."""
    if games or parse_identity(bot) is not None or arena.is_connected(bot):
        return True
    return not arena.hosting.versions(bot)


def player_status(arena: Arena, bot: str) -> dict[str, str]:
    """Whose ``bot`` is and where it is now: a player's own name is ``connected``, ``revoked``
    (its token no longer works), ``hosted`` (not connected, an active hosted version plays
    for it) or ``away``; a hosted version (``alice@v2``) is ``hosted`` while active, else its
    version's status (``suspended``, ``retired``...)."""
    identity = parse_identity(bot)
    if identity is not None:
        player, number = identity
        version = arena.hosting.version(player, number)
        if version is None:
            return {"player": player, "status": "retired", "status_text": f"v{number}, gone"}
        if version.status is Status.ACTIVE:
            return {"player": player, "status": "hosted", "status_text": f"hosted, v{number}"}
        status = str(version.status)
        return {"player": player, "status": status, "status_text": f"{status}, v{number}"}
    if arena.is_connected(bot):
        status = "connected"
    elif not arena.is_active(bot):
        status = "revoked"
    elif (active := _active_version(arena, bot)) is not None:
        return {"player": bot, "status": "hosted", "status_text": f"hosted, v{active}"}
    else:
        status = "away"
    return {"player": bot, "status": status, "status_text": status}


def _active_version(arena: Arena, player: str) -> int | None:
    """The number of ``player``'s active hosted version, if it has one."""
    active = [v for v in arena.hosting.versions(player) if v.status is Status.ACTIVE]
    return active[-1].version if active else None


def waiting_submissions(arena: Arena) -> list[dict[str, Any]]:
    """Versions waiting for the gate or refused by it, newest first (none where the arena
    hosts no bots)."""
    versions = arena.hosting.with_status(Status.CHECKING, Status.REJECTED)
    return [
        version_summary(v, arena.games_played[v.identity], private=True)  # the desk: organizer
        for v in sorted(versions, key=lambda v: v.submitted_at, reverse=True)
    ]


def workers(arena: Arena) -> dict[str, Any]:
    """Where hosted games run and how that went (zeros where the arena hosts no bots)."""
    hosting = hosted_of(arena)
    if hosting is None:
        return {"workers": 0, "workers_text": "no hosted bots (serve --workers N hosts them)",
                "batches_played": 0, "batches_lost": 0, "checking": 0}  # fmt: skip
    return {
        "workers": hosting.runner.slots,
        "workers_text": hosting.runner.description,
        "batches_played": hosting.batches_played,
        "batches_lost": hosting.batches_lost,
        "checking": len(hosting.submissions.with_status(Status.CHECKING)),
    }


def leaderboard_counts(arena: Arena, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The leaderboard's header: the games its rows count (each game counts in two rows),
    the games published since (counted at the next refit) and the rows by status."""
    by_status: dict[str, int] = {}
    for row in rows:
        by_status[row["status"]] = by_status.get(row["status"], 0) + 1
    return {
        "games": arena.standings_games,
        "pending": arena.tally.games - arena.standings_games,
        "bots": len(rows),
        "by_status": dict(sorted(by_status.items())),
    }


def status(arena: Arena) -> dict[str, Any]:
    """The arena in numbers: games stored, decisions refereed since start-up, games in
    flight, bots connected (what ``bench arena`` reads)."""
    return {
        "games": arena.tally.games,
        "decisions_since_start": arena.decisions,
        "uptime_s": round(time.time() - arena.started_at, 3),
        "live": len(arena.live),
        "connected": sum(1 for s in arena.referee.sessions.values() if s.is_open),
        "paused": arena.paused,
    }


def connections(arena: Arena) -> dict[str, Any]:
    """Who is connected now and the recent refused connections, newest first.  A bot is
    listed once by its public name, however many of its instances are connected (a hosted
    version's twin ``NAME~B`` is ``NAME``'s)."""
    now = time.time()
    connected: dict[str, dict[str, Any]] = {}
    for name, session in sorted(arena.referee.sessions.items()):
        bot = public_name(name)
        if not session.is_open or bot in connected:
            continue  # sorted: a bot's own session comes before its twin's
        connected[bot] = {
            "bot": bot,
            "session": session.session_id,
            "connected_for_s": round(now - arena.connected_since.get(name, now), 1),
            "playing": arena.in_flight[bot],
        }
    return {
        "connected": list(connected.values()),
        "failures": [failure_dict(f) for f in reversed(arena.failures)][:50],
        "paused": arena.paused,
    }


def failure_dict(failure: ConnectionFailure) -> dict[str, Any]:
    """A refused connection as JSON."""
    return {
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(failure.at)),
        "bot": public_name(failure.name),
        "peer": failure.peer,
        "reason": public_text(failure.reason, (public_name(failure.name),)),
    }


def game_summary(stored: StoredGame) -> dict[str, Any]:
    """A finished game in a list: who, result and why."""
    result = stored.result
    seats = [public_name(name) for name in result.seats]
    winner = None if result.winner is None else seats[result.winner]
    return {
        "id": result.game_id,
        "event": stored.event,
        "seats": seats,
        "winner": winner,
        "reason": result.reason.value,
        "rounds": result.rounds,
        "detail": public_text(stored.detail, seats),
        "finished_at": stored.finished_at,
        "live": False,
    }


def held_reason(arena: Arena, game_id: str) -> str | None:
    """Why a finished game is not shown yet (None if it is not held)."""
    if game_id not in arena.held_ids:
        return None
    return (
        f"game {game_id!r} is over; it is shown once its duplicate twin (the same deal, seats "
        "swapped) has ended too"
    )


def live_seats(live: LiveGame) -> tuple[str, str]:
    """The public names of a live game's seats (the sessions playing may be twins)."""
    return (public_name(live.seats[0]), public_name(live.seats[1]))


def live_summary(live: LiveGame) -> dict[str, Any]:
    """A game in flight in a list."""
    return {
        "id": live.game_id,
        "event": live.event,
        "seats": list(live_seats(live)),
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(live.started_at)),
        "live": True,
    }


def spectator_state(live: LiveGame) -> dict[str, Any]:
    """What anyone may see of a game in flight: the board, counts and public events.

    Once the engine has an outcome the state stops there until the game is stored and its
    record published: the last events (a forfeit's detail) wait for the record.
    """
    state = live_summary(live)
    game = live.game
    if game is None or game.outcome is not None:
        state.update(started=game is not None, events=[], board=None, pending=[])
        return state
    view = spectator_view(game)
    state.update(
        started=True,
        pending=pending_decisions(live),
        round=view.round,
        board={
            "tacocat": view.tacocat,
            "spaces": view.ruleset.spaces,
            "covered": [i for i, covered in enumerate(view.covered) if covered],
        },
        hand_sizes=list(view.hand_sizes),
        draw_pile_size=view.draw_pile_size,
        rounds_won=list(view.rounds_won),
        events=list(view.events),
    )
    return state


def pending_decisions(live: LiveGame) -> list[dict[str, Any]]:
    """Whose decisions the referee waits for, what kind and by when: ``asked_at`` and
    ``deadline_at`` are seconds since the epoch (``deadline_at`` None: no clock), the
    allowance and the bank left in milliseconds (what the seat's request says it has)."""
    seats = live_seats(live)
    return [
        {
            "seat": pending.seat,
            "bot": seats[pending.seat],
            "kind": pending.kind.value,
            "asked_at": round(pending.asked_at, 3),
            "deadline_at": None if pending.deadline_at is None else round(pending.deadline_at, 3),
            "allowance_ms": pending.allowance_ms,
            "bank_left_ms": round(pending.bank_left_ms),
        }
        for pending in live.pending
    ]


def live_frames(live: LiveGame) -> list[Frame]:
    """A game in flight drawn as a spectator may see it: one frame per public event so far."""
    game = live.game
    if game is None:
        return []
    view = spectator_view(game)
    shown = []
    for event in view.events:
        if event["type"] in _ENDINGS:
            break
        shown.append(event)
    return spectator_frames(shown, live_seats(live), view.ruleset)
