"""``analyze``: a decision's loss against a strong reference, from what the seat knew.

A known position first (the duel that decides the showdown), then a whole game in which a
strong bot makes one deliberate, costly mistake: that decision is marked, the bot's own
decisions mostly not.  Everything in process; the CLI once, through Click's runner."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from tacocat_arena.cli import main
from tacocat_arena.engine import Attack, Duel, Game, Replace, build_view, to_record
from tacocat_arena.play.analysis import (
    Mark,
    Reference,
    ReferenceSpecError,
    accuracy_of,
    analyze_record,
    analyze_view,
    board_win,
    mark_of,
    round_stakes,
)
from tacocat_arena.play.ismcts import IsmctsPolicy
from tacocat_arena.play.local import play_game

SMALL = Reference(iterations=400, seeds=2)


def duel_for_the_showdown(seat: int):
    """Two cards each, 1 and 12 against 2 and 11: the duel card is the one given up, so the
    12 keeps the 1 (which wins the showdown) and the 1 keeps the 12 (which loses it)."""
    hands = ((1, 12), (2, 11)) if seat == 0 else ((2, 11), (1, 12))
    game = Game.from_position(hands)
    game.apply(0, Replace(()))
    game.apply(1, Replace(()))
    return build_view(game, seat)


@pytest.mark.parametrize("seat", [0, 1])
def test_giving_up_the_winning_card_in_a_known_position_is_a_blunder(seat):
    view = duel_for_the_showdown(seat)
    wrong = analyze_view(view, Duel(1), SMALL)
    assert wrong.best == Duel(12)
    assert wrong.mark is Mark.BLUNDER
    assert wrong.loss > 2 * wrong.loss_se
    # the round is worth its stake: won for sure or lost for sure, a whole round apart
    base, stake = round_stakes(view)
    assert wrong.loss == pytest.approx(2 * stake, rel=0.05)
    right = analyze_view(view, Duel(12), SMALL)
    assert right.mark is None and right.loss == 0 and right.accuracy > 99.9
    assert {v.action for v in right.values} == {Duel(1), Duel(12)}


def test_the_board_is_worth_half_at_the_centre_and_all_one_step_from_a_goal():
    covered = (False,) * 9
    assert board_win(4, covered, 0) == pytest.approx(0.5)
    assert board_win(4, covered, 0) + board_win(4, covered, 1) == pytest.approx(1.0)
    almost = tuple(i in (2, 3, 4, 5, 6, 7) for i in range(9))  # only space 1 is left
    assert board_win(1, almost, 0) == pytest.approx(0.5)  # the next round decides the game
    view = duel_for_the_showdown(0)
    base, stake = round_stakes(view)
    assert base == pytest.approx(50.0) and 0 < stake < 50


def test_marks_need_both_the_threshold_and_two_standard_errors():
    assert mark_of(16.0, 1.0) is Mark.BLUNDER
    assert mark_of(12.0, 1.0) is Mark.MISTAKE
    assert mark_of(6.0, 1.0) is Mark.INACCURACY
    assert mark_of(4.9, 0.1) is None
    assert mark_of(30.0, 16.0) is None  # a large loss inside the reference's noise
    assert accuracy_of(0.0) == pytest.approx(100.0, abs=1e-3)
    assert accuracy_of(10.0) == pytest.approx(63.6, abs=0.1)
    assert accuracy_of(100.0) == 0.0


@pytest.mark.parametrize(
    ("spec", "wrong"),
    [
        ("greedy", "the only reference is ismcts"),
        ("ismcts?iter=5", "no option 'iter'"),
        ("ismcts?seeds=0", "seeds=0 is out of range"),
        ("ismcts?iterations=many", "is not an integer"),
    ],
)
def test_a_bad_reference_is_refused_with_what_is_wrong(spec, wrong):
    with pytest.raises(ReferenceSpecError, match=wrong):
        Reference.parse(spec)
    assert str(Reference.parse("ismcts?iterations=900&seeds=3")) == (
        "ismcts?iterations=900&seeds=3&uct=0.7"
    )


class Blunders:
    """A strong bot (ISMCTS) that makes one deliberate, costly mistake: the first time it
    attacks holding two cards far apart, it attacks with the low one and keeps the high one
    for the showdown (which the lower card wins)."""

    def __init__(self, seed: int) -> None:
        self.policy = IsmctsPolicy(300, rng=random.Random(seed))
        self.blundered_at: int | None = None
        self.blunder: Attack | None = None
        self.decisions = 0

    def act(self, view):
        self.decisions += 1
        hand = view.hand
        if (
            self.blundered_at is None
            and view.kind is not None
            and view.kind.value == "attack"
            and len(hand) == 2
            and hand[1] - hand[0] >= 7
        ):
            self.blundered_at = self.decisions
            self.blunder = Attack((hand[0],))
            return self.blunder
        return self.policy.act(view)


def _game_with_one_blunder():
    for seed in range(40):
        blunders = Blunders(seed)
        game = play_game([blunders, IsmctsPolicy(300, rng=random.Random(seed))], seed=seed)
        if blunders.blundered_at is not None:
            return to_record(game), blunders
    raise AssertionError("no game of 40 reached the position")


@pytest.mark.slow  # an in-process game and its analysis: several seconds
def test_the_deliberate_mistake_is_marked_and_the_strong_bots_moves_mostly_not():
    record, blunders = _game_with_one_blunder()
    analysis = analyze_record(record, 0, Reference(iterations=1200, seeds=2))
    # the bot is asked its decisions in the record's order: its k-th is the record's k-th
    assert len(analysis.decisions) == blunders.decisions
    mistake = analysis.decisions[blunders.blundered_at - 1]
    assert mistake.kind == "attack" and mistake.played == blunders.blunder
    assert mistake.mark in (Mark.MISTAKE, Mark.BLUNDER), mistake
    assert mistake in analysis.costliest()
    others = [d for d in analysis.decisions if d is not mistake and not d.forced]
    marked = [d for d in others if d.mark is not None]
    assert len(marked) <= max(1, len(others) // 5), [(d.index, d.loss, d.loss_se) for d in marked]
    print(f"the mistake: -{mistake.loss:.1f} ± {mistake.loss_se:.1f} points {mistake.mark};")
    print(f"{len(marked)} of the {len(others)} other decisions with a choice marked")


def test_analyze_prints_every_decision_and_its_json_holds_the_values():
    path = Path(__file__).parent / "golden" / "default.json"
    spec = "ismcts?iterations=10&seeds=2"  # a tiny reference: this checks the output only
    result = CliRunner().invoke(main, ["analyze", str(path), "--seat", "0", "--reference", spec])
    assert result.exit_code == 0, result.output
    assert "accuracy" in result.output and "loss" in result.output
    result = CliRunner().invoke(
        main, ["analyze", str(path), "--seat", "1", "--reference", spec, "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["seat"] == 1 and data["reference"].startswith("ismcts?iterations=10&")
    chosen = [d for d in data["decisions"] if not d["forced"]]
    assert chosen and all(len(d["values"]) >= 2 for d in chosen)
    assert all(d["played"] in [v["action"] for v in d["values"]] for d in chosen)
    bad = CliRunner().invoke(main, ["analyze", str(path), "--reference", "ismcts?x=1"])
    assert bad.exit_code == 2 and "no option 'x'" in bad.output


def test_the_replay_page_shows_the_marks_a_loss_graph_and_the_costliest(tmp_path):
    path = Path(__file__).parent / "golden" / "default.json"
    out = tmp_path / "page.html"
    spec = "ismcts?iterations=10&seeds=2"
    result = CliRunner().invoke(
        main, ["analyze", str(path), "--seat", "1", "--reference", spec, "--html", str(out)]
    )
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert 'id="analysis"' in page and "random</span>'s decisions" in page
    bars = page.count('class="loss"') + page.count('class="loss marked"')
    assert bars == 18  # a bar per decision of the seat, forced ones too
    assert "ismcts?iterations=10&amp;seeds=2" in page


def test_the_page_lists_what_the_analysis_marked():
    from tacocat_arena.report import render_replay

    record = json.loads((Path(__file__).parent / "golden" / "default.json").read_text())
    decision = {
        "index": 7, "round": 1, "kind": "defend", "played": "defend 6", "best": "defend 8",
        "loss": 11.7, "loss_se": 0.1, "mark": "?",
    }  # fmt: skip
    analysis = {
        "seat": 1, "reference": "ismcts?iterations=6000&seeds=4", "accuracy": 87.4,
        "marks": {"?!": 0, "?": 1, "??": 0}, "costliest": [7], "decisions": [decision],
    }  # fmt: skip
    page = render_replay(record, ["greedy", "random"], analysis=analysis)
    assert "87.4%" in page and 'class="loss marked"' in page
    costliest = page[page.index('id="costliest"') :]
    assert "played <strong>defend 6</strong>, best defend 8: −11.7 ± 0.1 points" in costliest
    assert 'id="analysis"' not in render_replay(record, ["greedy", "random"])


@pytest.mark.slow  # a real browser
def test_the_marks_show_in_a_browser_and_the_page_still_steps(browser_page, tmp_path):
    path = Path(__file__).parent / "golden" / "default.json"
    out = tmp_path / "page.html"
    spec = "ismcts?iterations=200&seeds=2"
    result = CliRunner().invoke(
        main, ["analyze", str(path), "--seat", "1", "--reference", spec, "--html", str(out)]
    )
    assert result.exit_code == 0, result.output
    page = browser_page.page
    page.goto(out.resolve().as_uri())
    assert page.is_visible("#analysis") and page.is_visible(".loss-graph")
    assert page.locator(".loss-graph rect").count() == 18
    costliest = page.locator("#costliest li")
    assert 1 <= costliest.count() <= 3
    assert "points" in costliest.first.text_content()
    assert "%" in page.text_content("#accuracy")
    page.click("#next")  # the replay itself still works under the analysis
    assert "Step 2 of" in page.text_content("#step")
    browser_page.screenshot(tmp_path / "analysis.png")
    browser_page.assert_clean()


def test_the_figure_with_hindsight_is_apart_and_changes_nothing_of_the_analysis():
    """The true deal gives a figure of its own, labelled; the analysis (values, loss, mark)
    is the same to the last bit with or without it: it never reads the hidden cards."""
    from tacocat_arena.play.analysis import HINDSIGHT_LABEL, true_deal
    from tacocat_arena.play.decisions import seat_decisions

    record = json.loads((Path(__file__).parent / "golden" / "default.json").read_text())
    decisions = [d for d in seat_decisions(record, 1) if d.action is not None][:6]
    small = Reference(iterations=60, seeds=2)
    for decision in decisions:
        plain = analyze_view(decision.view, decision.action, small, index=decision.index)
        seen = analyze_view(
            decision.view, decision.action, small, index=decision.index, known=true_deal(decision)
        )
        assert plain.hindsight is None
        assert seen.values == plain.values and seen.loss == plain.loss and seen.mark == plain.mark
        if not seen.forced:
            assert seen.hindsight is not None
            shown = seen.to_json()["hindsight"]
            assert shown["label"] == HINDSIGHT_LABEL and "true deal" in shown["label"]
            assert shown["best"] in {str(v.action) for v in seen.values}
    hand, pile = true_deal(decisions[0])
    assert list(hand) == sorted(hand) and len(hand) == decisions[0].view.opponent_hand_size


def test_with_hindsight_giving_up_the_winning_card_loses_the_round_for_sure():
    view = duel_for_the_showdown(0)
    game = Game.from_position(((1, 12), (2, 11)))
    known = ((2, 11), tuple(game.draw_pile))
    wrong = analyze_view(view, Duel(1), SMALL, known=known)
    assert wrong.hindsight is not None and wrong.hindsight.best == Duel(12)
    base, stake = round_stakes(view)
    assert wrong.hindsight.loss == pytest.approx(2 * stake, rel=0.05)
