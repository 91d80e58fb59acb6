"""The arena's parts without a transport: matchmaking, players and tokens, the store, what a
spectator sees, and the ladder's commit-before-count."""

from __future__ import annotations

import random
import re
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from tacocat_arena.arena.matchmaking import choose_pairs, pair_key
from tacocat_arena.arena.players import add_player, hash_token, token_matches
from tacocat_arena.arena.store import ArenaError, ArenaStore
from tacocat_arena.cli import main
from tacocat_arena.engine import spectator_event
from tacocat_arena.play.local import play_game
from tacocat_arena.play.policies import RandomPolicy
from tacocat_arena.stats.tables import GameResult


def test_a_newcomer_is_paired_before_any_rematch() -> None:
    capacity = {"ann": 1, "ben": 1, "cat": 1, "new": 1}
    meetings = {pair_key("ann", "ben"): 4, pair_key("ann", "cat"): 4, pair_key("ben", "cat"): 4}
    pairs = choose_pairs(capacity, meetings, {}, slots=2, rng=random.Random(1))
    assert len(pairs) == 2
    assert any("new" in pair for pair in pairs)


def test_among_equally_met_pairs_the_closest_in_rating_come_first() -> None:
    ratings = {"a": 0.0, "b": 10.0, "c": 400.0, "d": 390.0}
    capacity = dict.fromkeys(ratings, 1)
    pairs = choose_pairs(capacity, {}, ratings, slots=2, rng=random.Random(3))
    assert {frozenset(p) for p in pairs} == {frozenset("ab"), frozenset("cd")}


def test_capacity_and_slots_bound_the_pairs() -> None:
    capacity = {"a": 2, "b": 1, "c": 0}
    pairs = choose_pairs(capacity, {}, {}, slots=5, rng=random.Random(0))
    assert [frozenset(p) for p in pairs] == [frozenset("ab")]  # c is full, b has one slot
    assert choose_pairs({"a": 3}, {}, {}, slots=5, rng=random.Random(0)) == []
    assert choose_pairs({"a": 1, "b": 1}, {}, {}, slots=0, rng=random.Random(0)) == []


def test_only_a_token_hash_is_stored_and_it_is_checked(tmp_path: Path) -> None:
    store = ArenaStore(tmp_path)
    token = add_player(store, "ann")
    assert token_matches(token, store.token_hash("ann"))
    assert not token_matches(token + "x", store.token_hash("ann"))
    store.close()
    raw = (tmp_path / "arena.sqlite").read_bytes()
    for suffix in ("-wal", "-shm"):
        if (tmp_path / f"arena.sqlite{suffix}").exists():
            raw += (tmp_path / f"arena.sqlite{suffix}").read_bytes()
    assert token.encode() not in raw
    assert hash_token(token).encode() in raw


def test_players_commands_add_list_revoke(tmp_path: Path) -> None:
    runner = CliRunner()
    folder = str(tmp_path / "a")
    added = runner.invoke(main, ["players", "add", "ann", "--dir", folder])
    assert added.exit_code == 0, added.output
    token = added.output.strip().splitlines()[-1]
    assert token.startswith("tca_")
    again = runner.invoke(main, ["players", "add", "ann", "--dir", folder])
    assert again.exit_code == 1 and "already exists" in again.output
    bad = runner.invoke(main, ["players", "add", "no spaces", "--dir", folder])
    assert bad.exit_code == 1 and "invalid player name" in bad.output
    listed = runner.invoke(main, ["players", "list", "--dir", folder])
    assert "ann" in listed.output and "active" in listed.output and token not in listed.output
    revoked = runner.invoke(main, ["players", "revoke", "ann", "--dir", folder])
    assert revoked.exit_code == 0
    assert "revoked" in runner.invoke(main, ["players", "list", "--dir", folder]).output
    store = ArenaStore(tmp_path / "a")
    assert store.token_hash("ann") is None
    with pytest.raises(ArenaError, match="no active player"):
        store.revoke_player("ann")
    store.close()


def _result(game_id: str) -> GameResult:
    return GameResult(game_id, ("ann", "ben"), 2**63 + 5, 0, "goal", 3, (10, 11), (1.0, 2.0))


def test_the_store_keeps_games_in_order_and_seeds_as_unsigned_64_bit(tmp_path: Path) -> None:
    store = ArenaStore(tmp_path)
    for index in range(3):
        store.save_game(_result(f"L{index}"), "", {"seed": 1}, event="ladder", pair=index)
    assert [g.result.game_id for g in store.games()] == ["L2", "L1", "L0"]
    assert [r.game_id for r in store.results()] == ["L0", "L1", "L2"]
    assert store.results()[0].seed == 2**63 + 5
    assert store.last_pair("ladder") == 2 and store.last_pair("other") == -1
    found = store.game("L1")
    assert found is not None and found[1] == {"seed": 1}
    with pytest.raises(sqlite3.IntegrityError):
        store.save_game(_result("L1"), "", {}, event="ladder", pair=9)  # an id counts once
    store.close()
    journal = sqlite3.connect(tmp_path / "arena.sqlite").execute("PRAGMA journal_mode")
    assert journal.fetchone()[0] == "wal"


def test_a_spectator_sees_no_hand_no_draw_and_no_draw_pile() -> None:
    game = play_game((RandomPolicy(random.Random(1)), RandomPolicy(random.Random(2))), seed=11)
    kinds = set()
    for event in game.events:
        shown = spectator_event(event)
        kinds.add(shown["type"])
        assert not {"hands", "hand", "drawn", "draw_pile"} & set(shown), shown
        if event["type"] not in ("deal", "replace"):
            assert shown == event  # everything else is public as it is
    assert {"deal", "replace", "game_end"} <= kinds


@pytest.mark.slow
def test_bench_arena_prints_rates_and_page_latencies() -> None:
    result = CliRunner().invoke(
        main,
        ["bench", "arena", "--bots", "4", "--seconds", "1", "--concurrency", "4", "--sse", "40"],
    )
    assert result.exit_code == 0, result.output
    for text in ("games/s", "decisions/s", "GET /api/leaderboard", "p99", "ladder paused"):
        assert text in result.output, result.output
    streams = re.search(r"with 40 SSE streams open \(they read ([\d,]+) events", result.output)
    assert streams and int(streams[1].replace(",", "")) >= 40, result.output


def test_an_event_waiting_for_its_second_bot_says_so(tmp_path: Path) -> None:
    """`serve --event swiss` with fewer than two bots connected sat silent until stopped
    (`stopped: 0 games`): the organizer is told what it waits for."""
    import asyncio

    from tacocat_arena.arena.events import EventSettings, run_event
    from tacocat_arena.arena.ladder import Arena, LadderSettings
    from tacocat_arena.tournament.config import TournamentFormat

    said: list[str] = []

    async def wait_then_stop() -> None:
        arena = Arena(ArenaStore(tmp_path), LadderSettings(ladder=False))
        settings = EventSettings("swiss", start_after_s=0, format=TournamentFormat.SWISS)
        stop = asyncio.Event()
        task = asyncio.create_task(run_event(arena, settings, said.append, stop))
        for _ in range(200):
            if said:
                break
            await asyncio.sleep(0.01)
        stop.set()
        await asyncio.wait_for(task, 5)

    asyncio.run(wait_then_stop())
    assert said == [
        "event 'swiss': waiting for a second bot to connect (0 connected; it starts with "
        "the bots connected then)"
    ]


def test_an_event_plays_up_to_concurrency_games_each_holding_a_slot(tmp_path: Path) -> None:
    """An event's game holds one of the arena's ``concurrency`` slots (``Arena.reserve``):
    three games of six bots start at concurrency 3 (counting each game's two seats against
    it started two), and a fourth waits."""
    from tacocat_arena.arena.deals import Deals
    from tacocat_arena.arena.events import EventSettings, _start_games
    from tacocat_arena.arena.ladder import Arena, LadderSettings
    from tacocat_arena.tournament.schedule import PlannedGame

    arena = Arena(ArenaStore(tmp_path), LadderSettings(ladder=False, concurrency=3, per_bot=1))
    arena.can_play = lambda name: True  # type: ignore[method-assign]  # six connected bots
    started: list[object] = []
    arena.spawn = started.append  # type: ignore[method-assign]  # the games, not run here
    seats = [("a", "b"), ("c", "d"), ("e", "f"), ("g", "h")]
    plan = [PlannedGame(f"rr:{x}-{y}-d0", (x, y), 1, 0) for x, y in seats]
    running: set[str] = set()
    assert _start_games(arena, plan, plan, EventSettings(), Deals.DUPLICATE, set(), running)
    assert len(started) == 3 and running == {g.game_id for g in plan[:3]}
    assert arena.concurrency_left() == 0 and arena.in_flight["a"] == 1
    for game in started:
        game.close()  # type: ignore[attr-defined]
