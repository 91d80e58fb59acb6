"""A process's output split by game (launch/game_output.py): what reaches the log while a game
is in flight is that game's, exactly when it is alone, marked shared when games overlap; the
cap keeps the end; saving keeps a bounded number of games per process."""

from __future__ import annotations

import os
from pathlib import Path

from tacocat_arena.launch import game_output
from tacocat_arena.launch.bots import CappedLog


def test_one_game_at_a_time_gets_exactly_what_was_written_while_it_was_in_flight(
    tmp_path: Path,
) -> None:
    log = CappedLog(tmp_path / "alice@v1.log", 1024 * 1024)
    log.write(b"started\n")  # before any game: in the log only
    first = log.taps.open("L000001a")
    log.write(b"thinking about game 1\n")
    assert log.taps.close("L000001a") is first
    log.write(b"between games\n")
    second = log.taps.open("L000002a")
    log.write(b"Traceback: boom\n")
    log.taps.close("L000002a")
    assert bytes(first.data) == b"thinking about game 1\n"
    assert bytes(second.data) == b"Traceback: boom\n"
    assert first.as_json()["exact"] and second.as_json()["shared_with"] == []
    assert first.process == "alice@v1"
    assert b"between games" in (tmp_path / "alice@v1.log").read_bytes()


def test_overlapping_games_each_get_the_shared_output_and_name_each_other(tmp_path: Path) -> None:
    log = CappedLog(tmp_path / "bob@v2.log", 1024 * 1024)
    a = log.taps.open("L000001a")
    log.write(b"only a\n")
    b = log.taps.open("L000002a")
    log.write(b"a or b\n")
    log.taps.close("L000001a")
    log.write(b"only b\n")
    log.taps.close("L000002a")
    assert bytes(a.data) == b"only a\na or b\n" and a.shared_with == {"L000002a"}
    assert bytes(b.data) == b"a or b\nonly b\n" and b.shared_with == {"L000001a"}
    assert not a.as_json()["exact"]


def test_the_cap_keeps_the_end_and_counts_what_it_dropped() -> None:
    capture = game_output.GameCapture("L000001a", "p", cap=10)
    capture.add(b"0123456789")
    capture.add(b"abcdef")
    assert bytes(capture.data) == b"6789abcdef" and capture.dropped == 6
    shown = capture.as_json()
    assert shown["cap_bytes"] == 10 and shown["dropped_bytes"] == 6


def test_save_load_and_the_newest_games_kept(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(game_output, "KEEP_GAMES", 3)
    empty = game_output.GameCapture("L000000a", "p")
    assert game_output.save(tmp_path, empty) is None  # printed nothing: no file
    for n in range(5):
        capture = game_output.GameCapture(f"L{n:06d}a", "p")
        capture.add(f"game {n}\n".encode())
        path = game_output.save(tmp_path, capture)
        assert path is not None
        os.utime(path, ns=(n * 10**9, n * 10**9))  # mtimes apart however fast the disk
    assert game_output.saved_games(tmp_path, "p") == ["L000004a", "L000003a", "L000002a"]
    found = game_output.load(tmp_path, "p", "L000004a")
    assert found is not None and found["output"] == "game 4\n" and found["game"] == "L000004a"
    assert game_output.load(tmp_path, "p", "L000000a") is None
    assert game_output.load(tmp_path, "nobody", "L000004a") is None
    assert game_output.saved_games(tmp_path, "nobody") == []


def test_an_arena_that_hosts_no_bots_lists_no_output_and_does_not_fail(tmp_path: Path) -> None:
    from tacocat_arena.arena.failures import owner_report
    from tacocat_arena.arena.ladder import Arena, LadderSettings
    from tacocat_arena.arena.players import add_player
    from tacocat_arena.arena.store import ArenaStore

    store = ArenaStore(tmp_path / "arena")
    try:
        arena = Arena(store, LadderSettings())
        add_player(store, "ann")
        report = owner_report(arena, "ann")
        assert report is not None
        assert report["failures"] == [] and report["game_output"] == []
        assert report["output"] == [] and report["game_output_cap_bytes"] == 64 * 1024
        assert owner_report(arena, "nobody") is None
    finally:
        store.close()
