"""``verify`` accepts an arena's folder and re-derives its deals (issue 38, pts 1 and 2).

In process: an arena store is fabricated with the arena's own ``ArenaStore``, its ladder pairs
dealt by ``deals.ladder_seed`` from the store's seed and secret and played by the in-process
policies; each test changes one thing and requires the rule that catches it.  The real arena,
hosted and connected bots together, is verified end to end in tests/test_hosted.py.
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest

from tacocat_arena.arena.deals import SECRET_KEY, event_secret, ladder_seed
from tacocat_arena.arena.events import event_commitment_key
from tacocat_arena.arena.store import LADDER, ArenaStore
from tacocat_arena.cli.run import verify_any
from tacocat_arena.engine import to_record
from tacocat_arena.play.local import play_game
from tacocat_arena.play.policies import GreedyPolicy, RandomPolicy
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.commitments import secret_commitment
from tacocat_arena.tournament.record_checks import forfeit_by
from tacocat_arena.tournament.schedule import deal_seed
from tacocat_arena.tournament.verify import InputError, verify_lines

BOTS = ("alice@v1", "bob")


def fabricate(folder: Path, pairs: int = 3) -> Path:
    """An arena folder whose ladder played ``pairs`` duplicate pairs of ``BOTS``."""
    store = ArenaStore(folder)
    store.set_meta("seed", "4242")
    secret = store.secret(SECRET_KEY)
    with store.db:  # the store's own table of versions, as an upload writes it
        store.db.execute(
            "INSERT INTO versions (player, version, sha256, size, status)"
            " VALUES ('alice', 1, '00', 1, 'active')"
        )
    for pair in range(pairs):
        seed = ladder_seed(4242, secret, LADDER, BOTS, pair)
        for half, seats in enumerate((BOTS, BOTS[::-1])):
            game = play_game((GreedyPolicy(), RandomPolicy(random.Random(seed))), seed=seed)
            record = to_record(game, players=seats)
            outcome = game.outcome
            assert outcome is not None
            result = GameResult(
                f"L{pair:06d}{'ab'[half]}",
                seats,
                seed,
                outcome.winner,
                outcome.termination,
                game.round,
                (0, 0),
                (0.0, 0.0),
                forfeit_by=forfeit_by(record),
            )
            store.save_game(result, "", record, event=LADDER, pair=pair)
    store.close()
    return folder


def rules(folder: Path) -> set[str]:
    return {problem.rule for problem in verify_any(folder).problems}


@pytest.fixture
def arena(tmp_path: Path) -> Path:
    return fabricate(tmp_path / "arena")


def test_an_arena_folder_and_its_store_verify(arena: Path) -> None:
    result = verify_any(arena)
    assert result.ok and result.games == 6
    assert "every deal re-derived" in list(verify_lines(result, arena))[-1]
    assert verify_any(arena / "arena.sqlite").ok


def test_A1_a_record_naming_the_twin_that_played(arena: Path) -> None:
    """Issue 38's first finding: the hosted path named ``NAME~B``, in the record and row."""
    with sqlite3.connect(arena / "arena.sqlite") as db:
        (record,) = db.execute("SELECT record FROM games WHERE game_id = 'L000001b'").fetchone()
        db.execute(
            "UPDATE games SET seat1 = 'alice@v1~B', record = ? WHERE game_id = 'L000001b'",
            (record.replace('"alice@v1"', '"alice@v1~B"'),),
        )
    assert rules(arena) == {"A1"}


def test_G1_a_record_naming_another_bot_than_its_row(arena: Path) -> None:
    with sqlite3.connect(arena / "arena.sqlite") as db:
        (record,) = db.execute("SELECT record FROM games WHERE game_id = 'L000001b'").fetchone()
        db.execute(
            "UPDATE games SET record = ? WHERE game_id = 'L000001b'",
            (record.replace('"alice@v1"', '"alice@v1~B"'),),
        )
    assert rules(arena) == {"G1"}


def test_A1_another_secret_than_the_games_were_dealt_with(arena: Path) -> None:
    with sqlite3.connect(arena / "arena.sqlite") as db:
        db.execute("UPDATE meta SET value = ? WHERE key = ?", ("0" * 32, SECRET_KEY))
    problems = verify_any(arena).problems
    assert {p.rule for p in problems} == {"A1"} and len(problems) == 6


def test_A1_a_pairs_twin_not_the_seats_swapped(arena: Path) -> None:
    with sqlite3.connect(arena / "arena.sqlite") as db:
        db.execute("UPDATE games SET pair = 2 WHERE game_id = 'L000001b'")
    assert rules(arena) == {"A1"}


@pytest.mark.parametrize("status", ["rejected", None])
def test_A1_a_hosted_version_the_arena_never_admitted(arena: Path, status: str | None) -> None:
    with sqlite3.connect(arena / "arena.sqlite") as db:
        if status is None:
            db.execute("DELETE FROM versions")
        else:
            db.execute("UPDATE versions SET status = ?", (status,))
    assert rules(arena) == {"A1"}


def test_a_folder_of_nothing_the_product_writes_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="without tournament.sqlite or games.jsonl"):
        verify_any(tmp_path)


def test_A1_an_events_secret_not_the_one_committed_at_its_start(tmp_path: Path) -> None:
    """An event commits to its deal secret at its start (arena/events.py); the store keeps
    the commitment, and an event whose games' secret is not it is caught."""
    arena = fabricate(tmp_path / "arena", pairs=1)
    with sqlite3.connect(arena / "arena.sqlite") as db:
        secret = dict(db.execute("SELECT key, value FROM meta").fetchall())[SECRET_KEY]
        seed = deal_seed(4242, BOTS, 0, secret=event_secret(secret, "cup"))
        game = play_game((GreedyPolicy(), GreedyPolicy()), seed=seed)
        event_record = to_record(game, players=BOTS)
        db.execute(
            "INSERT INTO games (game_id, event, pair, seat0, seat1, seed, winner, reason,"
            " rounds, decisions0, decisions1, ms0, ms1, forfeit_by, detail, record)"
            " VALUES (?, 'cup', 0, ?, ?, ?, ?, ?, ?, 0, 0, 0, 0, ?, '', ?)",
            (f"cup:{BOTS[0]}-{BOTS[1]}-d0", *BOTS, seed - 2**64 if seed >= 2**63 else seed,
             event_record["winner"], event_record["termination"], event_record["rounds"],
             forfeit_by(event_record), json.dumps(event_record)),
        )  # fmt: skip
        key = event_commitment_key("cup")
        committed = secret_commitment(event_secret(secret, "cup"))
        db.execute("INSERT INTO meta VALUES (?, ?)", (key, committed))
    assert rules(arena) == set()
    with sqlite3.connect(arena / "arena.sqlite") as db:
        db.execute("UPDATE meta SET value = ? WHERE key = ?", ("0" * 64, key))
    assert rules(arena) == {"A1"}
