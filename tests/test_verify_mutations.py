"""``verify`` rejects every record or folder that claims what did not happen (issue 24).

Each test takes a record or an output folder that verifies, changes one claim, and requires
``verify`` to print the rule of docs/game-record.md, "Checks", that the change breaks, and no
other.  The forger is as strong as the format allows: ``forge`` re-plays the changed actions
through the engine and rewrites the events and the result, so the replay alone passes and
only the check of the claim itself can catch it.
"""

from __future__ import annotations

import copy
import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tacocat_arena.engine import Failure, Forfeit, Game, Ruleset, build_view, replay
from tacocat_arena.engine.record import action_from_json, events_to_json
from tacocat_arena.protocol.wire import default_action
from tacocat_arena.tournament.plan_check import config_from_metadata
from tacocat_arena.tournament.record_checks import forfeit_by
from tacocat_arena.tournament.verify import GameEntry, verify_game, verify_lines, verify_path

GOLDEN = Path(__file__).parent / "golden"


def golden(name: str) -> dict[str, Any]:
    return json.loads((GOLDEN / name).read_text())


def forge(record: dict[str, Any]) -> dict[str, Any]:
    """Rewrite ``record``'s events and result from its (changed) actions, as the engine
    plays them: what a forger who knows the engine would publish."""
    game = Game(Ruleset.from_dict(record["ruleset"]), record["seed"])
    for entry in record["actions"]:
        seat, action = action_from_json(entry)
        if isinstance(action, Forfeit):
            game.forfeit(seat, action.termination, action.detail)
        elif "substituted" in entry:
            game.substitute(seat, action, Failure(entry["substituted"]))
        else:
            game.apply(seat, action)
    outcome = game.outcome
    assert outcome is not None
    record["events"] = events_to_json(game.events)
    record.update(
        result=outcome.result(),
        termination=outcome.termination.value,
        winner=outcome.winner,
        rounds=game.round,
    )
    return record


def rules(record: dict[str, Any]) -> set[str]:
    """The rule IDs ``verify`` prints for one record (each line ``GAME round R RULE: ...``)."""
    problems = verify_game(GameEntry("g", None, record))
    for problem in problems:
        assert f" {problem.rule}: " in str(problem)
    return {problem.rule for problem in problems}


def first(record: dict[str, Any], wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    return next(entry for entry in record["actions"] if wanted(entry))


def own_move_not_the_default(record: dict[str, Any], seat: int) -> int:
    """The index of a move of ``seat``'s own that is not the default action."""
    found: list[int] = []

    def look(index: int, game: Game) -> None:
        entry = record["actions"][index]
        if entry.get("seat") != seat or {"substituted", "forfeit"} & entry.keys():
            return
        if action_from_json(entry)[1] != default_action(build_view(game, seat)):
            found.append(index)

    replay(record, before=look)
    return found[0]


def test_the_fixtures_and_the_forgers_unchanged_records_verify() -> None:
    """The control: without a change, no rule is broken (so every rejection below is the
    change's)."""
    for path in sorted(GOLDEN.glob("*.json")):
        record = json.loads(path.read_text())
        assert rules(record) == set(), path.name
        assert rules(forge(copy.deepcopy(record))) == set(), path.name


# -- F1: marks stand where they belong ----------------------------------------------------------
def test_F1_a_fallback_mark_on_a_substitution() -> None:
    """A fallback is an answer the bot's SDK sent and the referee applied as sent; a
    substitution is the referee's own move, which no SDK played."""
    record = golden("default-action.json")
    first(record, lambda e: e.get("substituted") == "timeout")["fallback"] = "duel() raised"
    assert rules(record) == {"F1"}


def test_F1_a_fallback_mark_that_is_no_text() -> None:
    record = golden("default.json")
    first(record, lambda e: e.get("seat") == 1)["fallback"] = ""
    assert rules(record) == {"F1"}


# -- F2: a substitution is exactly the policy's default ------------------------------------------
def test_F2_an_ordinary_move_relabelled_as_a_substitution() -> None:
    record = golden("default-action.json")
    index = own_move_not_the_default(record, 0)
    entry = record["actions"][index]
    entry.update(substituted="timeout", ms=3200.0, reason="no answer")  # a timeout's time
    assert rules(forge(record)) == {"F2"}


# -- F3: a refused answer was refused for the rule it cites ---------------------------------------
def refused_duel() -> tuple[dict[str, Any], dict[str, Any]]:
    record = golden("default-action.json")
    entry = first(record, lambda e: e.get("substituted") == "illegal_action")
    assert entry["refused"]["sent"] == {"duel": 99} and entry["refused"]["rule"] == "D1"
    return record, entry


def test_F3_a_refused_answer_that_was_legal() -> None:
    record, entry = refused_duel()
    entry["refused"]["sent"] = {"duel": entry["duel"]}  # the default card: in the hand
    assert rules(record) == {"F3"}


def test_F3_a_refused_answer_citing_a_rule_it_does_not_break() -> None:
    record, entry = refused_duel()
    entry["refused"]["rule"] = "P6"
    assert rules(record) == {"F3"}


def test_F3_an_answer_of_the_wrong_kind_recorded_as_illegal() -> None:
    record, entry = refused_duel()
    entry["refused"]["sent"] = {"attack": [entry["duel"]]}  # an attack answering a duel
    assert rules(record) == {"F3"}


def test_F3_the_old_fixture_a_duel_answering_a_defence_recorded_as_illegal() -> None:
    """tests/golden/forfeit-illegal_action.json as it was: ``{"duel": 99}`` refused as an
    illegal answer to a pending defend.  It is malformed (the fixture now says so)."""
    record = golden("forfeit-illegal_action.json")
    refused = record["actions"][-1]["refused"]
    assert refused["failure"] == "malformed" and refused["sent"] is None
    refused.update(failure="illegal_action", sent={"duel": 99}, rule="D1")
    refused.pop("note")
    assert rules(record) == {"F3"}


def test_F3_a_malformed_answer_that_holds_a_decoded_action() -> None:
    record = golden("forfeit-illegal_action.json")
    record["actions"][-1]["refused"]["sent"] = {"defend": [99]}
    assert rules(record) == {"F3"}


# -- F4: forfeits and substitutions are the recorded policy's ------------------------------------
def test_F4_a_timeout_forfeit_under_the_default_action_policy() -> None:
    record = golden("forfeit-timeout.json")
    record["referee"]["failure_policy"] = "default_action"
    assert rules(record) == {"F4"}


def test_F4_an_illegal_action_forfeit_without_a_refused_answer() -> None:
    record = golden("forfeit-illegal_action.json")
    del record["actions"][-1]["refused"]
    assert rules(record) == {"F4"}


def test_F4_a_substitution_under_the_forfeit_policy() -> None:
    record = golden("default-action.json")
    record["referee"]["failure_policy"] = "forfeit"
    assert rules(record) == {"F4"}


def test_F4_a_disconnect_substituted_instead_of_forfeited() -> None:
    record = golden("default-action.json")
    first(record, lambda e: e.get("substituted") == "timeout")["substituted"] = "disconnect"
    assert rules(forge(record)) == {"F4"}


# -- T1, T2: the clock, with the grace, as the referee runs it ------------------------------------
def test_T2_a_timeout_inside_the_grace_window() -> None:
    record = golden("forfeit-timeout.json")
    # 1000 ms allowance + 2000 ms of bank left: timed out 50 ms into the 100 ms grace.
    record["actions"][-1]["ms"] = 3050.0
    assert rules(record) == {"T2"}


def test_T1_an_answer_accepted_past_its_deadline() -> None:
    """The slow-bot game of the issue: an answer applied after allowance + bank left +
    grace had run out (the late-timer allowance the referee no longer has)."""
    record = golden("default.json")
    first(record, lambda e: e.get("seat") == 0 and "ms" in e)["ms"] = 3100.5
    assert rules(record) == {"T1"}


def test_T3_a_timeout_without_its_time() -> None:
    record = golden("forfeit-timeout.json")
    del record["actions"][-1]["ms"]
    assert rules(record) == {"T3"}


# -- a real match's folder: lines (G1) and the plan (S1, S2) -------------------------------------
@pytest.fixture(scope="module")
def match(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real match of two built-in bots through the CLI (2 deals, 4 games): its folder."""
    folder = tmp_path_factory.mktemp("match")
    done = subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", "play", "random", "greedy"]
        + ["--games", "4", "--out", "m", "--quiet"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return folder / "m"


def lines_of(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "games.jsonl").read_text().splitlines()]


def write_lines(folder: Path, lines: list[dict[str, Any]]) -> Path:
    path = folder / "games.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def rewrite_folder(folder: Path, lines: list[dict[str, Any]]) -> None:
    """Write ``lines`` as the folder's games.jsonl and its store's games alike: a forger who
    changes both copies, so that only the plan can tell."""
    write_lines(folder, lines)
    with sqlite3.connect(folder / "tournament.sqlite") as db:
        db.execute("DELETE FROM games")
        for line in lines:
            seed = line["seed"] - 2**64 if line["seed"] >= 2**63 else line["seed"]
            db.execute(
                "INSERT INTO games (game_id, seat0, seat1, seed, winner, reason, rounds,"
                " decisions0, decisions1, ms0, ms1, forfeit_by, fallbacks0, fallbacks1, detail,"
                " record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (line["id"], *line["seats"], seed, line["winner"], line["reason"],
                 line["rounds"], *line["decisions"], *line["decision_ms"],
                 forfeit_by(line["record"]), *line["fallbacks"], line["detail"],
                 json.dumps(line["record"])),
            )  # fmt: skip


def printed_rules(path: Path) -> set[str]:
    """The rule IDs ``tacocat-arena verify PATH`` prints (all but its summary line)."""
    result = verify_path(path)
    printed = list(verify_lines(result, path))[:-1]
    assert len(printed) == len(result.problems)
    for line, problem in zip(printed, result.problems, strict=True):
        assert f" {problem.rule}: " in line
    return {problem.rule for problem in result.problems}


def copied(match: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(match, tmp_path / "m"))


@pytest.mark.slow
def test_the_match_folder_verifies_and_its_plan_is_checked(match: Path) -> None:
    result = verify_path(match)
    assert result.ok and result.games == 4
    summary = list(verify_lines(result, match))[-1]
    assert "the folder holds exactly its plan" in summary
    assert summary.endswith("the commitment published at the start and every game's tag")


@pytest.mark.slow
@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda line: line.update(seats=line["seats"][::-1]), id="seats-vs-players"),
        pytest.param(lambda line: line.update(winner=None), id="winner"),
        pytest.param(lambda line: line.update(result="1/2-1/2"), id="result"),
        pytest.param(lambda line: line.update(reason="timeout"), id="reason"),
        pytest.param(lambda line: line.update(rounds=line["rounds"] + 1), id="rounds"),
        pytest.param(
            lambda line: line.update(decisions=[d + 1 for d in line["decisions"]]), id="decisions"
        ),
        pytest.param(
            lambda line: line.update(decision_ms=[ms + 5 for ms in line["decision_ms"]]),
            id="decision_ms",
        ),
    ],
)
def test_G1_a_line_that_contradicts_its_record(
    match: Path, tmp_path: Path, change: Callable[[dict[str, Any]], None]
) -> None:
    lines = lines_of(match)
    if lines[0]["winner"] is None:  # make "winner" a change for this line too
        lines[0], lines[1] = lines[1], lines[0]
    change(lines[0])
    assert printed_rules(write_lines(tmp_path, lines)) == {"G1"}


@pytest.mark.slow
def test_G1_a_store_row_that_contradicts_its_record(match: Path, tmp_path: Path) -> None:
    folder = copied(match, tmp_path)
    (folder / "games.jsonl").unlink()  # the folder is then read from its store
    store = folder / "tournament.sqlite"
    assert printed_rules(store) == set()
    with sqlite3.connect(store) as db:
        db.execute("UPDATE games SET reason = 'crash' WHERE rowid = 1")
    assert printed_rules(store) == {"G1"}


@pytest.mark.slow
def test_S1_a_changed_secret(match: Path, tmp_path: Path) -> None:
    folder = copied(match, tmp_path)
    results = json.loads((folder / "results.json").read_text())
    results["metadata"]["deal_secret"] = "0" * 32
    (folder / "results.json").write_text(json.dumps(results))
    assert printed_rules(folder) == {"S1", "C1"}  # not the secret committed at the start
    assert any("published deal_secret" in p.message for p in verify_path(folder).problems)


@pytest.mark.slow
def test_S1_two_deals_games_swapped(match: Path, tmp_path: Path) -> None:
    folder = copied(match, tmp_path)
    lines = lines_of(folder)
    by_id = {line["id"]: line for line in lines}
    seats = lines[0]["seats"]  # each deal is played in both seatings
    a, b = by_id[f"{seats[0]}-{seats[1]}-d0"], by_id[f"{seats[0]}-{seats[1]}-d1"]
    for key in ("seed", "result", "winner", "reason", "rounds", "decisions", "decision_ms"):
        a[key], b[key] = b[key], a[key]
    a["record"], b["record"] = b["record"], a["record"]
    rewrite_folder(folder, lines)
    found = printed_rules(folder)  # and C1 where the two results differ (their tags)
    assert "S1" in found and found <= {"S1", "C1"}


@pytest.mark.slow
def test_S1_a_dropped_duplicate_pair(match: Path, tmp_path: Path) -> None:
    folder = copied(match, tmp_path)
    rewrite_folder(folder, [line for line in lines_of(folder) if not line["id"].endswith("-d1")])
    assert printed_rules(folder) == {"S1"}
    missing = [p for p in verify_path(folder).problems if "missing" in p.message]
    assert len(missing) == 2 and all("duplicate pair" in p.message for p in missing)


@pytest.mark.slow
def test_G2_a_game_recorded_twice_in_games_jsonl(match: Path, tmp_path: Path) -> None:
    folder = copied(match, tmp_path)
    lines = lines_of(folder)
    write_lines(folder, [*lines, lines[0]])
    assert printed_rules(folder) == {"G2"}


@pytest.mark.slow
def test_G2_games_jsonl_changed_under_an_intact_store(match: Path, tmp_path: Path) -> None:
    """The published file says one thing, the store the tables are built from another: two
    deals' games swapped in games.jsonl alone (each line true to its own record)."""
    folder = copied(match, tmp_path)
    lines = lines_of(folder)
    lines[0]["record"], lines[2]["record"] = lines[2]["record"], lines[0]["record"]
    for key in ("id", "seats", "seed", "result", "winner", "reason", "rounds", "decisions",
                "decision_ms", "fallbacks", "detail"):  # fmt: skip
        lines[0][key], lines[2][key] = lines[2][key], lines[0][key]
    lines[0]["id"], lines[2]["id"] = lines[2]["id"], lines[0]["id"]
    write_lines(folder, lines)
    assert printed_rules(folder) == {"G2"}


@pytest.mark.slow
def test_G2_a_store_edited_under_an_intact_games_jsonl(match: Path, tmp_path: Path) -> None:
    """Two rows of the store swap their results and records (each row true to its record),
    games.jsonl untouched: the folder was read from games.jsonl alone before issue 38."""
    folder = copied(match, tmp_path)
    with sqlite3.connect(folder / "tournament.sqlite") as db:
        rows = db.execute("SELECT rowid, winner, reason, rounds, decisions0, decisions1, ms0,"
                          " ms1, forfeit_by, detail, record FROM games ORDER BY rowid").fetchall()
        first, other = rows[0], rows[1]
        for target, source in ((first, other), (other, first)):
            db.execute(
                "UPDATE games SET winner = ?, reason = ?, rounds = ?, decisions0 = ?,"
                " decisions1 = ?, ms0 = ?, ms1 = ?, forfeit_by = ?, detail = ?, record = ?"
                " WHERE rowid = ?",
                (*source[1:], target[0]),
            )
    found = printed_rules(folder)  # the rows' seats and seeds were left: G1 and S1 may see it
    assert "G2" in found and found <= {"G1", "G2", "S1", "C1"}


@pytest.mark.slow
def test_S1_a_fingerprint_that_is_not_the_configs(match: Path, tmp_path: Path) -> None:
    folder = copied(match, tmp_path)
    results = json.loads((folder / "results.json").read_text())
    results["metadata"]["fingerprint"] = "0123456789abcdef"
    (folder / "results.json").write_text(json.dumps(results))
    assert printed_rules(folder) == {"S1", "C1"}  # nor the fingerprint committed


@pytest.mark.slow
def test_S2_a_game_played_under_another_clock(match: Path, tmp_path: Path) -> None:
    folder = copied(match, tmp_path)
    lines = lines_of(folder)
    lines[0]["record"]["referee"]["bank_ms"] += 1000  # more time: no timing breaks
    rewrite_folder(folder, lines)
    assert printed_rules(folder) == {"S2"}


@pytest.mark.slow
def test_an_unfinished_tournaments_folder_is_reported_not_checked_never_ok(
    match: Path, tmp_path: Path
) -> None:
    folder = copied(match, tmp_path)
    results = json.loads((folder / "results.json").read_text())
    results["metadata"].update(complete=False)
    del results["metadata"]["deal_secret"]
    del results["metadata"]["seed"]
    (folder / "results.json").write_text(json.dumps(results))
    (folder / "report.md").unlink()  # it says the tournament is complete
    result = verify_path(folder)
    assert not result.problems and not result.ok
    summary = list(verify_lines(result, folder))[-1]
    assert summary.startswith("NOT CHECKED: 4 games") and "deal_secret" in summary
    done = subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", "verify", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "NOT CHECKED" in done.stderr and "OK" not in done.stdout


# -- C1: what the tournament committed to at its start -------------------------------------------
def pair_of(lines: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The two lines of one duplicate pair in which one bot won both games (a 2-0)."""
    for line in lines:
        twin = next(
            t for t in lines if t["seed"] == line["seed"] and t["id"] != line["id"]
        )
        if line["winner"] is not None and twin["winner"] is not None:
            if line["seats"][line["winner"]] == twin["seats"][twin["winner"]]:
                return line, twin
    raise AssertionError("the match has a 2-0 pair (greedy against random)")


@pytest.mark.slow
def test_C1_a_pairs_records_swapped_and_relabelled(match: Path, tmp_path: Path) -> None:
    """A 2-0 becomes a 0-2: the pair's two records trade places, each relabelled with the
    other game's seats, in the store and games.jsonl alike.  Every record replays (the same
    deal), every line says what its record says, the plan holds: only the tags tell."""
    folder = copied(match, tmp_path)
    lines = lines_of(folder)
    first, second = pair_of(lines)
    for line, other in ((first, dict(second)), (second, dict(first))):
        record = copy.deepcopy(other["record"])
        record["players"] = line["seats"]
        line.update({k: other[k] for k in ("result", "winner", "reason", "rounds", "decisions",
                                           "decision_ms", "fallbacks", "detail")})  # fmt: skip
        line["record"] = record
    rewrite_folder(folder, lines)
    assert printed_rules(folder) == {"C1"}
    assert len([p for p in verify_path(folder).problems if "tag" in p.message]) == 2


@pytest.mark.slow
def test_C1_a_plan_shrunk_with_its_fingerprint_recomputed(match: Path, tmp_path: Path) -> None:
    """Half the deals dropped, results.json's config made to plan only the rest and its
    fingerprint recomputed: the plan re-derived from it holds exactly the games left."""
    folder = copied(match, tmp_path)
    rewrite_folder(folder, [line for line in lines_of(folder) if line["id"].endswith("-d0")])
    results = json.loads((folder / "results.json").read_text())
    metadata = results["metadata"]
    metadata.update(games_per_pairing=2, games_planned=2, games_played=2)
    metadata["fingerprint"] = config_from_metadata(metadata).fingerprint()
    del metadata["commitment"]  # the forger rewrites results.json, not what was published
    (folder / "results.json").write_text(json.dumps(results))
    assert printed_rules(folder) == {"C1"}


@pytest.mark.slow
@pytest.mark.parametrize("what", ["secret", "tag"])
def test_C1_a_secret_or_a_tag_not_the_committed_one(
    match: Path, tmp_path: Path, what: str
) -> None:
    folder = copied(match, tmp_path)
    if what == "secret":
        path = folder / "commitment.json"
        data = json.loads(path.read_text())
        data["secret_commitment"] = "0" * 64
        path.write_text(json.dumps(data))
    else:
        lines = lines_of(folder)
        del lines[0]["tag"]
        write_lines(folder, lines)
    assert printed_rules(folder) == {"C1"}
