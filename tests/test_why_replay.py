"""``replay GAME --bot COMMAND``: a recorded game's decisions asked again of a bot.

The decisions of a seat are listed in process (``play.decisions``); the end-to-end tests run
the real CLI, which starts real bot processes as ``run`` does, over loopback gRPC."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tacocat_arena.check.replay import Verdict, allowance_of, is_same, recorded_text
from tacocat_arena.engine import Duel, Replace
from tacocat_arena.play.decisions import Answered, seat_decisions

REPO_ROOT = Path(__file__).resolve().parents[1]
GOLDEN = REPO_ROOT / "tests" / "golden"
CRASH_BOT = "python tests/bots/crash_on_defend_bot.py"


def golden(name: str) -> dict:
    return json.loads((GOLDEN / name).read_text())


@pytest.mark.parametrize("seat", [0, 1])
def test_every_recorded_action_of_the_seat_is_one_decision_taken_where_it_was(seat):
    record = golden("default.json")
    decisions = seat_decisions(record, seat)
    entries = [i for i, entry in enumerate(record["actions"]) if entry["seat"] == seat]
    assert [d.index for d in decisions] == entries
    for decision in decisions:
        view = decision.view
        assert view.seat == seat and view.kind is decision.kind
        decision.game.copy().apply(seat, decision.action)  # legal where it was played
        assert decision.answered is Answered.OWN


def test_the_second_half_of_a_simultaneous_decision_is_asked_with_both_pending():
    record = golden("default.json")
    (first_replace, *_) = seat_decisions(record, 1)
    assert first_replace.kind.value == "replace" and len(first_replace.game.pending) == 2
    duels = [d for d in seat_decisions(record, 1) if d.kind.value == "duel"]
    assert duels and all(len(d.game.pending) == 2 for d in duels)


def test_a_forfeit_while_asked_is_a_decision_and_says_so():
    decisions = seat_decisions(golden("forfeit-crash.json"), 0)
    last = decisions[-1]
    assert last.answered is Answered.FORFEIT and last.action is None
    assert recorded_text(last).startswith("forfeit (crash:")
    assert not is_same(Duel(3), last)


def test_a_substituted_decision_names_what_the_bot_sent():
    decisions = seat_decisions(golden("default-action.json"), 1)
    substituted = [d for d in decisions if d.answered is Answered.SUBSTITUTED]
    assert substituted
    texts = [recorded_text(d) for d in substituted]
    assert any("the bot sent {'duel': 99}" in text for text in texts), texts


def test_a_replace_is_the_same_in_any_order_and_the_allowance_is_the_records():
    (first, *_) = seat_decisions(golden("default.json"), 0)
    assert isinstance(first.played, Replace)
    assert is_same(Replace(tuple(reversed(first.played.cards))), first)
    assert allowance_of(golden("forfeit-crash.json"), None) == 1000
    assert allowance_of(golden("forfeit-crash.json"), 250) == 250
    assert allowance_of({}, None) == 2000


def test_only_failed_verdicts_fail_the_replay():
    failed = {v for v in Verdict if v.failed}
    assert failed == {
        Verdict.FALLBACK,
        Verdict.ILLEGAL,
        Verdict.MALFORMED,
        Verdict.TIMEOUT,
        Verdict.GONE,
    }


def _replay(*args: str) -> tuple[int, dict]:
    done = subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", "replay", *args, "--json"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.mark.slow
def test_a_crash_on_one_request_kind_is_reproduced_and_the_fixed_build_answers_it():
    game = str(GOLDEN / "default.json")
    code, report = _replay(game, "--bot", CRASH_BOT, "--seat", "0")
    assert code == 1 and report["failed"]
    verdicts = [d["verdict"] for d in report["decisions"]]
    crashed = verdicts.index("gone")
    assert report["decisions"][crashed]["kind"] == "defend"
    assert set(verdicts[:crashed]) == {"same"}  # a greedy bot until then
    assert set(verdicts[crashed + 1 :]) == {"not asked"}
    assert report["exit_code"] == 3 and "about to die on a defence" in report["log_tail"]

    code, fixed = _replay(game, "--bot", f"{CRASH_BOT} fixed", "--seat", "greedy")
    assert code == 0 and not fixed["failed"]
    assert {d["verdict"] for d in fixed["decisions"]} == {"same"}
    assert len(fixed["decisions"]) == len(report["decisions"])


@pytest.mark.slow
def test_a_raising_bot_shows_each_fallback_with_its_error():
    code, report = _replay(
        str(GOLDEN / "default.json"), "--bot", "python tests/bots/raising_bot.py", "--seat", "0"
    )
    assert code == 1
    raised = [d for d in report["decisions"] if d["verdict"] == "fallback"]
    assert raised and all(d["kind"] == "attack" for d in raised)
    assert all("IndexError" in d["detail"] for d in raised)


def test_a_process_output_is_shown_up_to_its_cap_from_its_end(tmp_path):
    from tacocat_arena.arena.failures import OUTPUT_CAP, tail

    log = tmp_path / "bot.log"
    log.write_bytes(b"a" * 100 + b"b" * OUTPUT_CAP)
    text, cut = tail(log)
    assert cut and text == "b" * OUTPUT_CAP
    log.write_bytes(b"short\n")
    assert tail(log) == ("short\n", False)
    assert tail(tmp_path / "none.log") == ("", False)


def test_an_arena_game_is_named_by_its_page_or_its_api_address():
    import click

    from tacocat_arena.cli.why import api_url, game_file

    assert api_url("http://h:8000/games/L000001a") == "http://h:8000/api/games/L000001a"
    assert api_url("https://h/api/games/E1-3/?x=1") == "https://h/api/games/E1-3"
    with pytest.raises(click.ClickException, match="not a game of an arena"):
        api_url("http://h:8000/players/dan")
    with pytest.raises(click.ClickException, match="no such file"):
        with game_file("no/such/file.json", None):
            pass


def test_a_failures_request_reads_whole_for_seat_0_and_an_empty_hand() -> None:
    """protobuf's JSON leaves out fields at their default value: seat 0's request came
    without ``seat`` (the owner-page test failed whenever the crashing bot sat first)."""
    from tacocat.v1 import arena_pb2 as pb
    from tacocat_arena.arena.failures import request_json

    shown = request_json(pb.DecisionRequest(game_id="L000001a", view=pb.SeatView(seat=0)))
    assert shown["view"]["seat"] == 0
    assert shown["view"]["hand"] == []
