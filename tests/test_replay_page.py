"""The replay page shows, at every step, the table the engine had after that step's action.

The expected states come from the engine itself (a Game rebuilt from the record's ruleset
and seed, its actions applied one at a time), not from the page's frame builder, so the page
and the engine are checked against each other.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from browser_support import file_url
from click.testing import CliRunner
from replay_support import engine_states, read_table

from tacocat_arena.cli import main
from tacocat_arena.engine import Game, Ruleset, Termination, to_record
from tacocat_arena.engine.record import action_from_json
from tacocat_arena.play.local import play_game
from tacocat_arena.play.policies import GreedyPolicy, RandomPolicy
from tacocat_arena.report import FrameError, render_replay, replay_frames

NAMES = ("greedy", "random")


def a_record(seed: int = 4, *, forfeit: bool = False) -> dict[str, Any]:
    game = play_game([GreedyPolicy(), RandomPolicy(random.Random(1))], seed=seed)
    record = to_record(game)
    if forfeit:  # cut the game short in round 2 with a timeout of seat 1
        ruleset = Ruleset.from_dict(record["ruleset"])
        short = Game(ruleset, seed)
        for entry in record["actions"]:
            if short.round == 2 and short.decision_for(1) is not None:
                break
            seat, action = action_from_json(entry)
            short.apply(seat, action)
        short.forfeit(1, Termination.FORFEIT_TIMEOUT, "no answer within 1000 ms")
        record = to_record(short)
    return record


@pytest.mark.parametrize("forfeit", [False, True], ids=["to-a-goal", "cut-by-a-timeout"])
def test_frames_match_the_engine_after_every_action(forfeit: bool) -> None:
    record = a_record(forfeit=forfeit)
    frames = replay_frames(record, NAMES)
    assert len(frames) == len(record["events"])
    states = engine_states(record)
    assert len(states) > 10
    for index, state in states.items():
        frame = frames[index]
        assert [list(h) for h in frame.hands] == state["hands"], index
        assert list(frame.discards) == state["discards"], index
        assert frame.position == state["position"], index
        assert sorted(t.space for t in frame.tiles) == state["covered"], index
        assert list(frame.rounds_won) == state["won"], index
        assert frame.round == state["round"], index


def test_a_card_that_is_not_in_the_hand_is_named() -> None:
    record = a_record()
    attack = next(e for e in record["events"] if e["type"] == "attack")
    attack["cards"] = [99]
    with pytest.raises(FrameError, match="card 99 is not in the hand"):
        replay_frames(record, NAMES)


def test_a_substituted_move_is_told_and_changes_no_card() -> None:
    record = a_record()
    at = next(i for i, e in enumerate(record["events"]) if e["type"] == "attack")
    mark = {"type": "substituted", "round": 1, "seat": 0, "reason": "timeout"}
    record["events"].insert(at, mark)
    frames = replay_frames(record, NAMES)
    told = frames[at]
    assert "the referee moves for greedy after a failure (timeout)" in told.text[0]
    assert told.hands == frames[at - 1].hands and told.discards == frames[at - 1].discards


def test_the_page_escapes_names_and_embeds_no_seed() -> None:
    record = a_record(seed=9_876_543_210_123)
    page = render_replay(record, ["<b>x</b>", "y</script>"], game_id="g1")
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    assert "y</script>" not in page
    assert str(record["seed"]) not in page.split('id="replay-data">')[1].split("</script>")[0]


def write_page(tmp_path: Path, record: dict[str, Any], game_id: str) -> Path:
    games = tmp_path / "games.jsonl"
    games.write_text(json.dumps({"id": game_id, "seats": list(NAMES), "record": record}) + "\n")
    out = tmp_path / f"{game_id}.html"
    result = CliRunner().invoke(main, ["replay", str(games), "--game", game_id, "--html", str(out)])
    assert result.exit_code == 0, result.output
    assert str(out) in result.output
    return out


def test_replay_html_refuses_a_tampered_record(tmp_path: Path) -> None:
    record = a_record()
    record["actions"][0] = {"seat": 0, "replace": [99]}
    games = tmp_path / "games.jsonl"
    games.write_text(json.dumps({"id": "g", "seats": list(NAMES), "record": record}) + "\n")
    result = CliRunner().invoke(main, ["replay", str(games), "--html", str(tmp_path / "g.html")])
    assert result.exit_code != 0
    assert "does not re-verify" in result.output
    assert not (tmp_path / "g.html").exists()


@pytest.mark.slow
@pytest.mark.parametrize("forfeit", [False, True], ids=["to-a-goal", "cut-by-a-timeout"])
def test_clicking_through_a_whole_game_shows_the_engine_state(
    browser_page,
    tmp_path: Path,
    forfeit: bool,
) -> None:
    record = a_record(forfeit=forfeit)
    path = write_page(tmp_path, record, "greedy-random-d0")
    page = browser_page.page
    page.goto(file_url(path))
    states = engine_states(record)
    events = len(record["events"])
    shown = read_table(page)
    assert shown["index"] == 0 and "Round 1" in shown["text"]
    for index in range(events):
        if index:
            page.click("#next")
            shown = read_table(page)
        assert shown["index"] == index
        if index in states:
            state = states[index]
            for key in ("hands", "discards", "position", "covered", "won"):
                assert shown[key] == state[key], (index, key, shown, state)
        if index == events // 2:
            browser_page.screenshot(tmp_path / "replay-mid-game.png")
    assert page.is_disabled("#next")
    last = record["events"][-1]
    assert last["type"] == "game_end"
    assert ("forfeits (timeout)" in page.text_content("#log")) == forfeit
    browser_page.assert_clean()


@pytest.mark.slow
def test_keys_rounds_and_autoplay(browser_page, tmp_path: Path) -> None:
    record = a_record()
    path = write_page(tmp_path, record, "g")
    page = browser_page.page
    page.goto(file_url(path))
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert read_table(page)["index"] == 2
    page.keyboard.press("ArrowLeft")
    assert read_table(page)["index"] == 1
    page.keyboard.press("End")
    assert read_table(page)["index"] == len(record["events"]) - 1
    page.keyboard.press("Home")
    assert read_table(page)["index"] == 0
    second_deal = [i for i, e in enumerate(record["events"]) if e["type"] == "deal"][1]
    page.select_option("#round-select", "2")
    assert read_table(page)["index"] == second_deal
    page.select_option("#speed", "250")
    page.click("#play")
    page.wait_for_function(
        f"Number(document.getElementById('step').dataset.index) >= {second_deal + 3}",
        timeout=10_000,
    )
    page.click("#play")  # pause
    paused = read_table(page)["index"]
    page.wait_for_timeout(600)
    assert read_table(page)["index"] == paused
    page.goto(file_url(path) + "#step=5")
    assert read_table(page)["index"] == 4
    browser_page.assert_clean()
