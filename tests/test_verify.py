"""Records that prove what happened (version 2) and ``tacocat-arena verify``.

A record holds each applied action's measured milliseconds, every refused answer and every
substitution with its mark; ``verify`` replays every game and re-runs every clock.  A record
with one altered card, one altered timing, or one substitution stripped of its mark fails
with the game id, the round and the rule ID.
"""

from __future__ import annotations

import copy
import json
import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tacocat_arena.engine import (
    DEFAULT_RULESET,
    Attack,
    DecisionKind,
    DecisionNote,
    Duel,
    Failure,
    Game,
    RecordError,
    Refused,
    Termination,
    build_view,
    replay,
    to_record,
)
from tacocat_arena.play.policies import RandomPolicy
from tacocat_arena.protocol.wire import default_action
from tacocat_arena.tournament.verify import GameEntry, verify_game

CLOCK = {"decision_ms": 500, "bank_ms": 1000, "grace_ms": 100, "failure_policy": "default_action"}


def refereed_record(seed: int = 7) -> dict[str, Any]:
    """A game as the referee records it under the default-action policy: seat 1 times out
    in its first decision, sends an illegal attack in its first attack, and everything else
    is answered in 20 ms."""
    game = Game(DEFAULT_RULESET, seed)
    policies = (RandomPolicy(random.Random(1)), RandomPolicy(random.Random(2)))
    notes: dict[int, DecisionNote] = {}
    timed_out = attacked = False
    while not game.is_over:
        seat = min(game.pending)
        view = build_view(game, seat)
        if seat == 1 and not timed_out:
            timed_out = True
            game.substitute(seat, default_action(view), Failure.TIMEOUT)
            notes[len(game.actions) - 1] = DecisionNote(1610.0, "no answer within 500 ms")
        elif seat == 1 and view.kind is DecisionKind.ATTACK and not attacked:
            attacked = True
            sent = Attack(view.hand)
            error = f"P6: cannot attack with your last card; hand {list(view.hand)}"
            game.substitute(seat, default_action(view), Failure.ILLEGAL)
            refused = Refused(Failure.ILLEGAL, error, "P6", sent)
            notes[len(game.actions) - 1] = DecisionNote(20.0, error, refused)
        else:
            game.apply(seat, policies[seat].act(view))
            notes[len(game.actions) - 1] = DecisionNote(20.0)
    assert timed_out and attacked
    return to_record(game, notes, CLOCK, ("alice", "bob"))


def problems(record: dict[str, Any]) -> list[tuple[str, int | None, str]]:
    return [(p.game_id, p.round, p.rule) for p in verify_game(GameEntry("g7", None, record))]


def test_a_refereed_record_says_what_the_referee_measured_refused_and_substituted() -> None:
    record = refereed_record()
    assert record["version"] == 2 and record["players"] == ["alice", "bob"]
    assert record["referee"] == CLOCK
    marked = [a for a in record["actions"] if "substituted" in a]
    timeout, illegal = marked
    assert timeout["substituted"] == "timeout" and timeout["ms"] == 1610.0
    assert "refused" not in timeout and timeout["reason"] == "no answer within 500 ms"
    assert illegal["substituted"] == "illegal_action"
    assert illegal["refused"]["sent"]["attack"] and illegal["refused"]["rule"] == "P6"
    assert illegal["refused"]["then"] == "default_action"
    assert all(isinstance(a["ms"], float) for a in record["actions"])
    # The engine logs each substitution publicly, just before the action it stands for.
    events = record["events"]
    marks = [i for i, e in enumerate(events) if e["type"] == "substituted"]
    assert [events[i]["reason"] for i in marks] == ["timeout", "illegal_action"]
    assert replay(record).outcome is not None
    assert problems(record) == []


def test_verify_names_an_altered_card() -> None:
    record = refereed_record()
    index, duel = next((i, a) for i, a in enumerate(record["actions"]) if "duel" in a)
    duel["duel"] = 99  # no such card in any hand
    ((game_id, round_number, rule),) = problems(record)
    assert (game_id, rule) == ("g7", "D1") and round_number == 1


def test_verify_names_an_altered_dealt_card() -> None:
    record = refereed_record()
    deal = record["events"][0]
    deal["hands"][0][0] = 0  # no card has value 0
    assert problems(record) == [("g7", 1, "S2")]


def test_verify_names_an_altered_timing() -> None:
    record = refereed_record()
    own = [a for a in record["actions"] if "substituted" not in a]
    own[-1]["ms"] = 500 + 1000 + 100 + 1.0  # past allowance, the whole bank, and grace
    ((_, round_number, rule),) = problems(record)
    assert rule == "T1" and round_number == record["rounds"]


def test_verify_names_a_timeout_ruled_too_early() -> None:
    record = refereed_record()
    timeout = next(a for a in record["actions"] if a.get("substituted") == "timeout")
    timeout["ms"] = 300.0  # under the 500 ms allowance
    assert [rule for _, _, rule in problems(record)] == ["T2"]


@pytest.mark.parametrize("which", ["timeout", "illegal_action"])
def test_verify_names_a_substitution_stripped_of_its_mark(which: str) -> None:
    record = refereed_record()
    entry = next(a for a in record["actions"] if a.get("substituted") == which)
    for key in ("substituted", "reason", "refused"):
        entry.pop(key, None)
    ((game_id, round_number, rule),) = problems(record)
    assert (game_id, rule) == ("g7", "F1") and round_number is not None


def test_a_timeout_stripped_from_both_action_and_events_is_still_caught_by_its_clock() -> None:
    record = refereed_record()
    entry = next(a for a in record["actions"] if a.get("substituted") == "timeout")
    for key in ("substituted", "reason"):
        entry.pop(key)
    record["events"] = [
        e for e in record["events"] if not (e["type"] == "substituted" and e["reason"] == "timeout")
    ]
    assert [rule for _, _, rule in problems(record)] == ["T1"]


def test_version_1_records_still_replay() -> None:
    game = Game(DEFAULT_RULESET, 3)
    policies = (RandomPolicy(random.Random(5)), RandomPolicy(random.Random(6)))
    while not game.is_over:
        seat = min(game.pending)
        game.apply(seat, policies[seat].act(build_view(game, seat)))
    record = to_record(game)
    old = {k: v for k, v in copy.deepcopy(record).items() if k not in ("players", "referee")}
    old["version"] = 1
    assert replay(old).outcome == game.outcome
    assert problems(old) == []
    with pytest.raises(RecordError, match="version 3"):
        replay({**old, "version": 3})


def test_a_forfeit_keeps_the_refused_answer() -> None:
    game = Game.from_position(((2, 9), (3, 8)), phase=DecisionKind.DUEL)
    game.apply(0, Duel(2))
    game.forfeit(1, Termination.FORFEIT_ILLEGAL, "D1: card 7 is not in your hand (3, 8)")
    refused = Refused(Failure.ILLEGAL, "D1: card 7 is not in your hand (3, 8)", "D1", Duel(7))
    record = to_record(game, {0: DecisionNote(3.0), 1: DecisionNote(4.5, refused=refused)}, CLOCK)
    entry = record["actions"][-1]
    assert entry["forfeit"] == "illegal_action" and entry["ms"] == 4.5
    assert entry["refused"] == {
        "failure": "illegal_action",
        "sent": {"duel": 7},
        "rule": "D1",
        "error": "D1: card 7 is not in your hand (3, 8)",
        "then": "forfeit",
    }


# -- the CLI, in a subprocess ----------------------------------------------------------------
def cli(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", *map(str, args)],
        cwd=cwd,
        env=dict(os.environ, COLUMNS="200"),
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def match(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real match of two example bots through the CLI: its output folder."""
    folder = tmp_path_factory.mktemp("match")
    done = cli("play", "random", "greedy", "--games", "4", "--out", "m", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder / "m"


@pytest.mark.slow
def test_verify_passes_on_a_tournaments_games_jsonl_and_sqlite_store(match: Path) -> None:
    for target in (match / "games.jsonl", match / "tournament.sqlite", match):
        done = cli("verify", target, cwd=match)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.startswith("OK: 4 games of") and "every timing" in done.stdout
    line = json.loads((match / "games.jsonl").read_text().splitlines()[0])
    record = line["record"]
    assert record["version"] == 2 and record["players"] == line["seats"]
    own = [a for a in record["actions"] if "forfeit" not in a]
    assert own and all(a["ms"] >= 0 for a in own)


@pytest.mark.slow
def test_verify_fails_with_game_round_and_rule(match: Path, tmp_path: Path) -> None:
    lines = (match / "games.jsonl").read_text().splitlines()
    tampered = json.loads(lines[1])
    duel = next(a for a in tampered["record"]["actions"] if "duel" in a)
    duel["duel"] = 99
    lines[1] = json.dumps(tampered)
    (tmp_path / "games.jsonl").write_text("\n".join(lines) + "\n")
    done = cli("verify", tmp_path / "games.jsonl", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        line for line in done.stdout.splitlines() if line.startswith(tampered["id"])
    ]
    assert done.stdout.startswith(f"{tampered['id']} round 1 D1: ")
    assert "Error: 1 problem(s) in 4 games" in done.stderr


@pytest.mark.slow
def test_replay_reads_the_sqlite_store(match: Path) -> None:
    """issue 14 (2): a SQLite store is read as such, not decoded as text."""
    done = cli("replay", match / "tournament.sqlite", cwd=match)
    assert done.returncode == 0, done.stderr
    first = json.loads((match / "games.jsonl").read_text().splitlines()[0])
    seats = first["seats"]
    assert done.stdout.startswith(f"Game {first['id']}: {seats[0]} (seat 0) vs {seats[1]}")
    assert "re-verified" in done.stdout and "Traceback" not in done.stderr


@pytest.mark.slow
def test_replay_of_a_tampered_record_or_of_results_json_is_an_error(
    match: Path, tmp_path: Path
) -> None:
    """issue 14 (3): an Error naming what is wrong, a non-zero exit, never a narration."""
    line = json.loads((match / "games.jsonl").read_text().splitlines()[0])
    record = line["record"]
    (tmp_path / "one.json").write_text(json.dumps(record))
    alone = cli("replay", tmp_path / "one.json", cwd=tmp_path)
    assert alone.returncode == 0, alone.stderr
    names = record["players"]
    assert f"{names[0]} (seat 0) vs {names[1]} (seat 1)" in alone.stdout  # names kept

    record["actions"][0] = {"seat": record["actions"][0]["seat"], "replace": [99]}
    (tmp_path / "bad.json").write_text(json.dumps(record))
    bad = cli("replay", tmp_path / "bad.json", cwd=tmp_path)
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr.startswith("Error: the record of game") and " R1: " in bad.stderr

    results = cli("replay", match / "results.json", cwd=tmp_path)
    assert results.returncode == 1 and results.stdout == ""
    assert results.stderr.startswith("Error: ") and "results file" in results.stderr

    (tmp_path / "noise.bin").write_bytes(bytes(range(256)))
    noise = cli("verify", tmp_path / "noise.bin", cwd=tmp_path)
    assert noise.returncode == 1 and "not text" in noise.stderr and "Traceback" not in noise.stderr

    sqlite3.connect(tmp_path / "other.sqlite").execute("CREATE TABLE t (x)").connection.commit()
    other = cli("verify", tmp_path / "other.sqlite", cwd=tmp_path)
    assert other.returncode == 1 and "not a tournament store" in other.stderr
