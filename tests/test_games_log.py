"""games.jsonl grows pair by pair (tournament/games_log.py): a game is published only with
its duplicate twin, a torn line is cut off, and reopening never writes a game twice."""

from __future__ import annotations

import json
from pathlib import Path

from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.games_log import GamesLog
from tacocat_arena.tournament.storage import TournamentStore


def result(game_id: str, seats: tuple[str, str], seed: int) -> GameResult:
    return GameResult(game_id, seats, seed, 0, "goal", 3, (10, 10), (1.0, 2.0))


def save(store: TournamentStore, game: GameResult) -> None:
    store.save(game, "", {"format": "tacocat-game-record", "seed": game.seed})


def ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text().splitlines()]


def test_a_game_waits_for_its_twin(tmp_path: Path) -> None:
    store = TournamentStore(tmp_path)
    path = tmp_path / "games.jsonl"
    store.on_commit.append(GamesLog(path, store).add)
    save(store, result("a-b-d0", ("a", "b"), 7))
    save(store, result("a-c-d0", ("a", "c"), 8))
    assert not path.exists()  # neither deal is finished: its twin would learn its cards
    save(store, result("b-a-d0", ("b", "a"), 7))
    assert ids(path) == ["a-b-d0", "b-a-d0"]
    save(store, result("c-a-d0", ("c", "a"), 8))
    assert ids(path) == ["a-b-d0", "b-a-d0", "a-c-d0", "c-a-d0"]


def test_reopening_cuts_a_torn_line_and_appends_what_is_missing_once(tmp_path: Path) -> None:
    store = TournamentStore(tmp_path)
    path = tmp_path / "games.jsonl"
    log = GamesLog(path, store)
    store.on_commit.append(log.add)
    for game in (result("a-b-d0", ("a", "b"), 7), result("b-a-d0", ("b", "a"), 7)):
        save(store, game)
    store.on_commit.clear()  # as if killed between these commits and their append
    for game in (result("a-c-d0", ("a", "c"), 8), result("c-a-d0", ("c", "a"), 8)):
        save(store, game)
    with open(path, "a") as handle:
        handle.write('{"id": "torn')  # kill -9 in the middle of a write
    GamesLog(path, store)  # what --resume does first
    assert ids(path) == ["a-b-d0", "b-a-d0", "a-c-d0", "c-a-d0"]
    GamesLog(path, store)
    assert ids(path) == ["a-b-d0", "b-a-d0", "a-c-d0", "c-a-d0"]  # never twice


def test_a_store_without_games_starts_a_new_file(tmp_path: Path) -> None:
    (tmp_path / "games.jsonl").write_text('{"id": "old"}\n')
    GamesLog(tmp_path / "games.jsonl", TournamentStore(tmp_path))
    assert not (tmp_path / "games.jsonl").exists()
