"""The arena's person's games in process (docs/human-seat.md, "In the arena"): the owner's
opt-out refuses a challenge with a message, a refused challenge gives back the capacity it
held, a write from another origin is refused by the one check both pages use, and ``verify``'s
H1 finds a table that does not match its folders.  The real ``serve`` over HTTP:
tests/test_human_arena.py."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tacocat_arena.human.challenges import (
    INTERRUPTED,
    ChallengeError,
    Challenges,
    Opponent,
    verify_games,
)
from tacocat_arena.human.page import write_refusal
from tacocat_arena.launch.spec import BotSpec


def _challenges(folder: Path) -> tuple[Challenges, list[Any]]:
    spawned: list[Any] = []
    return Challenges(folder, bot_move_timeout_s=1.0, spawn=spawned.append), spawned


def _opponent(name: str, released: list[str]) -> Opponent:
    return Opponent(BotSpec(name, "builtin:random"), lambda: released.append(name))


def test_an_opted_out_version_is_refused_saying_so_and_its_slot_given_back(
    tmp_path: Path,
) -> None:
    challenges, spawned = _challenges(tmp_path / "human")
    released: list[str] = []
    challenges.set_opted_out("alice@v1", True)
    challenges.set_opted_out("alice@v1", True)  # twice is once
    assert challenges.opted_out() == {"alice@v1"}
    with pytest.raises(ChallengeError, match="owner opted it out"):
        challenges.start("bob", _opponent("alice@v1", released))
    assert released == ["alice@v1"] and not spawned
    assert challenges.history() == []  # a refused challenge leaves no row
    challenges.set_opted_out("alice@v1", False)
    started = challenges.start("bob", _opponent("alice@v1", released))
    assert started.opponent == "alice@v1" and len(spawned) == 1
    assert released == ["alice@v1"]  # held until the game ends
    assert challenges.history("bob")[0]["opponent"] == "alice@v1"
    with pytest.raises(ChallengeError, match="in play already"):
        challenges.start("bob", _opponent("carol@v2", released))
    assert released == ["alice@v1", "carol@v2"]
    for game in spawned:
        game.close()


def test_a_bot_named_as_its_challenger_is_refused(tmp_path: Path) -> None:
    challenges, spawned = _challenges(tmp_path / "human")
    released: list[str] = []
    with pytest.raises(ChallengeError, match="name of its challenger"):
        challenges.start("bob", _opponent("bob", released))
    assert released == ["bob"] and not spawned


def _scope(method: str, **headers: str) -> dict[str, Any]:
    pairs = [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()]
    return {"type": "http", "method": method, "headers": pairs}


def test_a_write_from_another_origin_is_refused_and_reads_and_own_writes_are_not() -> None:
    host = "arena.example:8080"
    assert write_refusal(_scope("GET", host=host, origin="http://evil.example")) == ""
    assert write_refusal(_scope("POST", host=host)) == ""  # a script's, not a browser's
    assert write_refusal(_scope("POST", host=host, origin=f"https://{host}")) == ""
    assert write_refusal(_scope("POST", host=host, origin=f"http://{host}")) == ""
    refused = write_refusal(_scope("POST", host=host, origin="http://evil.example"))
    assert "another origin ('http://evil.example')" in refused
    assert "Sec-Fetch-Site: cross-site" in write_refusal(
        _scope("POST", host=host, sec_fetch_site="cross-site")
    )
    # The local page's own origins (play human): the request's Host is not enough.
    origins = frozenset({"http://127.0.0.1:5000"})
    assert write_refusal(_scope("POST", host=host, origin=f"http://{host}"), origins)
    assert write_refusal(_scope("POST", host=host, origin="http://127.0.0.1:5000"), origins) == ""


def test_verify_finds_a_folder_without_its_row_and_a_finished_row_without_its_game(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "human"
    challenges, spawned = _challenges(folder)
    challenges.start("bob", "random")
    challenges.start("carol", "greedy")
    for game in spawned:
        game.close()
    problems, checked = verify_games(folder)
    assert problems == [] and checked.startswith("0 game(s)")  # two games in play: no folder
    with sqlite3.connect(folder / "games.sqlite") as db:
        db.execute("UPDATE human_games SET result = 'win' WHERE number = 1")
    (folder / "9").mkdir()
    found = sorted(str(p) for p in verify_games(folder)[0])
    assert len(found) == 2
    assert found[0].startswith("human/1 H1: the row says win but")
    assert "no finished game" in found[0]
    assert found[1].startswith("human/9 H1: a folder of") and "no row" in found[1]


def test_a_table_from_before_pairs_gains_their_columns_and_keeps_its_games(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "human"
    folder.mkdir()
    with sqlite3.connect(folder / "games.sqlite") as db:
        db.execute(
            "CREATE TABLE human_games (number INTEGER PRIMARY KEY, player TEXT NOT NULL,"
            " opponent TEXT NOT NULL, folder TEXT NOT NULL, started_at REAL NOT NULL,"
            " result TEXT NOT NULL DEFAULT '', reason TEXT NOT NULL DEFAULT '',"
            " rounds INTEGER NOT NULL DEFAULT 0, seat INTEGER)"
        )
        db.execute(
            "INSERT INTO human_games VALUES (1, 'bob', 'random', 'x', 0, 'win', 'goal', 3, 0)"
        )
    challenges, spawned = _challenges(folder)
    (old,) = challenges.history("bob")
    assert old["result"] == "win" and old["games"] == 1 and old["twin_result"] == ""
    challenges.start("carol", "greedy", pair=True)
    assert challenges.history("carol")[0]["games"] == 2
    for game in spawned:
        game.close()


def test_a_game_an_arena_stop_interrupted_is_not_in_play_after_a_restart(tmp_path: Path) -> None:
    """The row kept no result, and the pages showed it "in play" for ever."""
    challenges, spawned = _challenges(tmp_path)
    challenges.start("ann", "random")
    for coroutine in spawned:
        coroutine.close()  # the arena stopped before the game ended
    challenges.db.close()
    (row,) = Challenges(tmp_path, bot_move_timeout_s=1.0).history("ann")
    assert row["result"] == "" and row["reason"] == INTERRUPTED, row


@pytest.mark.parametrize(("decision_ms", "bot_s"), [(0, 0.0), (2500, 2.5)])
def test_a_persons_game_gives_the_bot_the_arenas_move_timeout_no_limit_included(
    tmp_path: Path, decision_ms: int, bot_s: float
) -> None:
    """The bot keeps the arena's ``--move-timeout`` against a person; an arena with no limit
    (0) gives it none there either, never a second made up on the way."""
    from types import SimpleNamespace

    from tacocat_arena.web.human import challenges_of

    clock = SimpleNamespace(decision_ms=decision_ms)
    arena = SimpleNamespace(
        settings=SimpleNamespace(referee=SimpleNamespace(clock=clock)),
        store=SimpleNamespace(folder=tmp_path),
        spawn=lambda coroutine: None,
    )
    request = SimpleNamespace(app=SimpleNamespace(state=SimpleNamespace(arena=arena)))
    assert challenges_of(request).bot_move_timeout_s == bot_s  # type: ignore[arg-type]
