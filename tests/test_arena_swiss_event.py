"""``serve --event swiss``: the arena's Swiss pairs its rounds with ``run``'s pairing function,
deals them as ``verify`` checks a round robin's, shows its rounds and tiebreaks on the event
page and tells ``--notify`` when it is over."""

from __future__ import annotations

import random
import signal
import sqlite3
import time
from pathlib import Path

import arena_support
import pytest
from arena_support import add_players, start_bots
from notify_support import endpoint

from tacocat_arena.arena.deals import Deals, event_secret
from tacocat_arena.arena.events import (
    EventKind,
    EventSettings,
    swiss_event,
    swiss_problems,
    swiss_table,
)
from tacocat_arena.arena.verify_arena import _events
from tacocat_arena.cli.run import verify_any
from tacocat_arena.engine import Termination
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.config import TournamentFormat
from tacocat_arena.tournament.swiss import Outcome, swiss_rounds

SECRET = "e" * 32  # the arena's; an event deals with its own derived from it
SEED = 77
KEY = event_secret(SECRET, "cup")


def _event(entrants: list[str], deals: Deals, rounds: int = 3, games: int = 4):
    """A whole simulated Swiss event as the arena plays it: its stored results and state."""
    kind = EventKind(TournamentFormat.SWISS, games, rounds)
    strength = {bot: random.Random(bot).random() for bot in entrants}
    results: list[GameResult] = []
    for _ in range(rounds + 1):
        state, plan = swiss_event("cup", entrants, kind, SEED, KEY, deals, results)
        done = {r.game_id for r in results}
        for game in plan:
            if game.game_id not in done:
                a, b = game.seats
                winner = int(strength[b] > strength[a])
                results.append(GameResult(game.game_id, game.seats, game.seed, winner,
                                          Termination.GOAL, 3, (1, 1), (0.0, 0.0)))  # fmt: skip
    return kind, results, swiss_event("cup", entrants, kind, SEED, KEY, deals, results)


@pytest.mark.parametrize("deals", [Deals.DUPLICATE, Deals.INDEPENDENT])
def test_the_arena_pairs_with_runs_pairing_and_deals_as_verify_checks(deals: Deals) -> None:
    entrants = ["ann", "ben", "cat", "dan", "eve"]
    kind, results, (state, plan) = _event(entrants, deals)
    assert state.finished == 3 and len(results) == len(plan) == 3 * 2 * 4
    # The same pairing function as run's: fed the same outcomes under run's ids, it pairs
    # the same rounds.
    ids = {arena.game_id: swiss.game_id for arena, swiss in zip(plan, state.plan, strict=True)}
    outcomes = [Outcome(ids[r.game_id], r.seats, r.winner) for r in results]
    assert swiss_rounds(entrants, 3, 4, SEED, outcomes, secret="").rounds == state.rounds
    assert len({r.bye for r in state.rounds}) == 3  # an odd field: a bye each round
    # Ids EVENT:rN-A-B-dK; the deals re-derive as verify derives a round robin event's (A1).
    assert all(g.game_id.startswith("cup:r") for g in plan)
    rows = [(g.game_id, "cup", i, g.seats, g.seed) for i, g in enumerate(plan)]
    assert _events(rows, SEED, SECRET, {"cup": deals}) == []
    seeds = {g.seed for g in plan}
    assert len(seeds) == (len(plan) if deals is Deals.INDEPENDENT else len(plan) // 2)
    # A game dealt otherwise is caught.
    forged = [*rows[:-1], (rows[-1][0], "cup", 0, rows[-1][3], rows[-1][4] + 1)]
    found = _events(forged, SEED, SECRET, {"cup": deals})
    assert found and {p.rule for p in found} == {"A1"} and found[0].game_id == rows[-1][0]
    # The standings carry the tiebreaks, from the finished rounds.
    _, table = swiss_table("cup", entrants, kind, deals, results)
    assert sum(row.points for row in table) == 3 * 2 + 3  # two matches and a bye a round
    assert all(row.matches + row.byes == 3 for row in table)


def test_verify_re_pairs_an_arena_swiss_and_catches_a_changed_pairing() -> None:
    entrants = ["ann", "ben", "cat", "dan", "eve", "fay"]
    kind, results, (state, plan) = _event(entrants, Deals.INDEPENDENT)
    games = [Outcome(r.game_id, r.seats, r.winner) for r in results]

    def problems(stored, over=True):
        return swiss_problems("cup", entrants, kind, Deals.INDEPENDENT, over, stored, SEED, KEY)

    assert problems(games) == []
    assert problems(games[:-5], over=False) == []  # an event in play: a prefix of its plan
    assert any("missing" in text for _, text in problems(games[:-5]))
    # Round 2 paired otherwise: its first two matches swap opponents (a-b, c-d: a-d, c-b).
    first, second = state.rounds[1].pairings[:2]
    swap = {first.b: second.b, second.b: first.b}
    forged = []
    for game in games:
        if game.game_id.startswith("cup:r2-") and {first.a, second.a} & set(game.seats):
            seats = tuple(swap.get(bot, bot) for bot in game.seats)
            head, _, deal = game.game_id.rpartition("-d")
            game = Outcome(f"cup:r2-{seats[0]}-{seats[1]}-d{deal}", seats, game.winner)
        forged.append(game)
    found = problems(forged)
    assert any("is no game of Swiss event 'cup'" in text for _, text in found), found
    # A flipped result of round 1 would have paired round 2 otherwise.
    flipped = [
        Outcome(g.game_id, g.seats, 1 - g.winner) if g.game_id.startswith("cup:r1-") else g
        for g in games
    ]
    assert problems(flipped)


def test_a_swiss_events_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="--rounds is for a Swiss"):
        EventSettings(rounds=3)
    with pytest.raises(ValueError, match="not a knockout"):
        EventSettings(format=TournamentFormat.KNOCKOUT)
    swiss = EventSettings(format=TournamentFormat.SWISS, rounds=9)
    assert swiss.swiss_rounds_for(4) == 3  # no two bots meet twice
    assert EventSettings(format=TournamentFormat.SWISS).swiss_rounds_for(9) == 4
    with pytest.raises(ValueError, match="--start-with must be >= 2"):
        EventSettings(start_with=1)


@pytest.mark.slow
def test_serve_event_swiss_plays_its_rounds_shows_them_and_notifies(
    tmp_path: Path, cleanup: list
) -> None:
    folder = tmp_path / "arena"
    names = ("ann", "ben", "cat", "dan", "eve")
    tokens = add_players(folder, *names)
    with endpoint([503]) as told:  # the first POST fails: retried
        arena = arena_support.start_arena(
            folder, "--event", "swiss", "--rounds", "3", "--games", "2", "--event-name", "cup",
            "--start-after", "120", "--start-with", "5", "--move-timeout", "5",
            "--notify", told.url,
        )  # fmt: skip
        cleanup.append(arena)
        cleanup.extend(start_bots(tokens, arena.address, tmp_path, reconnect=False))
        out = arena.wait(240)
        assert arena.process.returncode == 0, out
    assert "a Swiss of 3 rounds" in out and "round 3 paired" in out, out
    assert "its page is /event/cup" in out, out
    assert "is over: 12 games" in out and "Swiss standings" in out, out
    assert "attempt 1 of 3 failed (HTTP 503)" in out, out
    assert len(told.bodies) == 2 and told.bodies[0] == told.bodies[1]
    body = told.bodies[-1]
    assert body["event"] == "cup" and body["format"] == "swiss" and body["rounds"] == 3
    assert sum(row["byes"] for row in body["swiss_standings"]) == 3
    verified = verify_any(folder)  # every game re-verifies, the deals re-derive (A1)
    assert verified.ok and verified.games == 12, verified.problems

    # The event page, served by the arena started again on the same folder.
    again = arena_support.start_arena(folder)
    cleanup.append(again)
    page = again.get("/event/cup").decode()
    assert 'id="event-over"' in page and 'id="swiss-table"' in page
    assert page.count('<tr data-round="3">') == 3  # two matches and the bye
    assert "Buchholz" in page and "Sonneborn" in page
    for row in body["swiss_standings"]:
        assert f'<a href="/bots/{row["bot"]}">{row["bot"]}</a>' in page
    assert again.status("/event/nothing") == 404
    again.stop()


def _event_games(folder: Path) -> dict[str, tuple]:
    """The stored games of event ``cup``: id -> (seats, seed, winner), read-only."""
    db = sqlite3.connect(f"file:{folder / 'arena.sqlite'}?mode=ro", uri=True, timeout=5)
    try:
        query = "SELECT game_id, seat0, seat1, seed, winner FROM games WHERE event = 'cup'"
        rows = db.execute(query)
        return {row[0]: row[1:] for row in rows}
    except sqlite3.OperationalError:  # not created yet
        return {}
    finally:
        db.close()


@pytest.mark.slow
def test_a_swiss_event_killed_mid_round_pairs_on_from_the_store_after_a_restart(
    tmp_path: Path, cleanup: list
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "ben", "cat", "dan", "eve")
    flags = ("--event", "swiss", "--rounds", "3", "--games", "2", "--event-name", "cup",
             "--start-after", "120", "--start-with", "5", "--move-timeout", "5")  # fmt: skip
    arena = arena_support.start_arena(folder, *flags)
    cleanup.append(arena)
    bots = start_bots(tokens, arena.address, tmp_path, delay=0.02, reconnect=False)
    cleanup.extend(bots)
    deadline = time.monotonic() + 180
    while not 0 < sum(g.startswith("cup:r2-") for g in _event_games(folder)) < 4:
        assert arena.process.poll() is None, "the event ended before it was killed"
        assert time.monotonic() < deadline, "round 2 did not start within 180 s"
        time.sleep(0.02)
    arena.process.send_signal(signal.SIGKILL)  # mid round 2
    arena.process.wait(10)
    for bot in bots:
        bot.process.wait(30)
    before = _event_games(folder)

    again = arena_support.start_arena(folder, *flags)
    cleanup.append(again)
    cleanup.extend(start_bots(tokens, again.address, tmp_path, reconnect=False))
    out = again.wait(240)
    assert again.process.returncode == 0 and "is over: 12 games" in out, out
    after = _event_games(folder)
    assert all(after[game_id] == row for game_id, row in before.items())  # nothing replayed
    assert len(after) == 12 and len({g.split("-")[0] for g in after}) == 3  # 3 rounds
    verified = verify_any(folder)  # the rounds re-pair from the stored results (A1)
    assert verified.ok and verified.games == 12, verified.problems
