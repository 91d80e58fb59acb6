"""A round-robin event between connected bots deals each game on its own (issue 34 pt 9).

A connected bot is one process: on one deal played twice it remembers the first game's hands
and knows its opponent's in the second.  Events follow the ladder's setting
(``LadderSettings.independent_deals``, ``serve --independent-deals/--duplicate-deals``): in
process, the plan's deal numbers and seeds come from ``deals.pairing_deals`` and ``run``'s seed
function, and ``verify`` checks them (A1); end to end, the remembering bot predicts no hand in
an event on independent deals and most of them on duplicate ones (the control).
"""

from __future__ import annotations

import json
from pathlib import Path

import arena_support
import pytest
from arena_support import add_players, start_bot

from tacocat_arena.arena.deals import Deals, event_deals, event_secret, pairing_deals
from tacocat_arena.arena.events import EventSettings, _plan
from tacocat_arena.arena.store import ArenaStore
from tacocat_arena.arena.verify_arena import _events, check_deals
from tacocat_arena.cli.run import verify_any
from tacocat_arena.tournament.schedule import deal_seed

REMEMBERING = Path(__file__).resolve().parent / "bots" / "remembering_bot.py"
SECRET = "s" * 32


def test_pairing_deals_numbers_one_deal_twice_or_two_of_their_own() -> None:
    assert pairing_deals(5, Deals.DUPLICATE) == (5, 5)
    assert pairing_deals(5, Deals.INDEPENDENT) == (5, 6)
    assert event_deals(None) is Deals.DUPLICATE  # an event stored before the setting
    assert event_deals("independent") is Deals.INDEPENDENT


def test_an_events_independent_plan_gives_every_game_a_deal_of_its_own() -> None:
    settings = EventSettings(name="cup", games_per_pairing=4)
    entrants = ["ann", "ben", "cat"]
    duplicate = _plan(entrants, settings, 42, SECRET, Deals.DUPLICATE)
    independent = _plan(entrants, settings, 42, SECRET, Deals.INDEPENDENT)
    assert [g.seats for g in independent] == [g.seats for g in duplicate]  # same games, order
    assert len({g.seed for g in duplicate}) == 6  # 3 pairings x 2 deals, each played twice
    assert len({g.seed for g in independent}) == 12  # every game its own deal
    for game in independent:
        pairing = next(p for p in (("ann", "ben"), ("ann", "cat"), ("ben", "cat"))
                       if set(p) == set(game.seats))  # fmt: skip
        assert game.seed == deal_seed(42, pairing, game.deal, secret=SECRET)
        assert game.game_id == f"cup:{game.seats[0]}-{game.seats[1]}-d{game.deal}"
    ann_ben = [g for g in independent if set(g.seats) == {"ann", "ben"}]
    assert sorted(g.deal for g in ann_ben) == [0, 1, 2, 3]
    assert ann_ben[0].seats == ann_ben[1].seats[::-1]  # still two by two, seats swapped
    # A late joiner's games do not change the others' deals.
    grown = _plan([*entrants, "dan"], settings, 42, SECRET, Deals.INDEPENDENT)
    assert grown[: len(independent)] == independent


def test_verify_refuses_an_independent_events_games_sharing_a_deal() -> None:
    """A1 reads how the event dealt: two games of one deal are a duplicate pair's, which an
    event on independent deals never plays (the check can fail: the duplicate event passes)."""
    key = event_secret(SECRET, "cup")
    same = deal_seed(7, ("ann", "ben"), 0, secret=key)
    rows = [("cup:ann-ben-d0", "cup", 0, ("ann", "ben"), same),
            ("cup:ben-ann-d0", "cup", 1, ("ben", "ann"), same)]  # fmt: skip
    assert _events(rows, 7, SECRET, {"cup": Deals.DUPLICATE}) == []
    found = _events(rows, 7, SECRET, {"cup": Deals.INDEPENDENT})
    assert [p.rule for p in found] == ["A1"] and "independently" in found[0].message, found
    other = deal_seed(7, ("ann", "ben"), 1, secret=key)
    rows[1] = ("cup:ben-ann-d1", "cup", 1, ("ben", "ann"), other)
    assert _events(rows, 7, SECRET, {"cup": Deals.INDEPENDENT}) == []


@pytest.mark.slow
@pytest.mark.parametrize("deals", ["--independent-deals", "--duplicate-deals"])
def test_a_remembering_bot_predicts_no_hand_in_an_event_on_independent_deals(
    tmp_path: Path, cleanup: list, deals: str
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "ann", "ben")
    arena = arena_support.start_arena(
        folder, "--round-robin", "--games", "8", "--start-after", "2", "--per-bot", "1",
        "--move-timeout", "5", deals,
    )  # fmt: skip
    cleanup.append(arena)
    logs = {name: tmp_path / f"{name}.jsonl" for name in ("ann", "ben")}
    for name in ("ann", "ben"):
        cleanup.append(start_bot(name, tokens[name], arena.address, tmp_path,
                                 script=REMEMBERING, env={"REMEMBER_LOG": str(logs[name])},
                                 reconnect=False))  # fmt: skip
    out = arena.wait(180)
    assert arena.process.returncode == 0 and "is over: 8 games" in out, out
    kind = "independent" if deals == "--independent-deals" else "duplicate"
    assert f"8 games on {kind} deals" in out, out
    store = ArenaStore(folder)
    tried = right = 0
    kinds = set()
    for name, log in logs.items():
        for line in log.read_text().splitlines():
            entry = json.loads(line)
            found = store.game(entry["game"])
            assert found is not None, entry
            stored, record = found
            kinds.add(record["event"]["deals"])
            if entry["predicted"] is None:
                continue
            seat = stored.result.seats.index(name)
            deal = next(e for e in record["events"] if e["type"] == "deal" and e["round"] == 1)
            tried += 1
            right += deal["hands"][1 - seat] == entry["predicted"]
    store.close()
    print(f"event {deals}: {right} of {tried} hands predicted")  # the figure, with -s
    assert tried >= 6 and kinds == {kind}, (tried, kinds)
    if kind == "independent":
        assert right == 0, (right, tried)
    else:
        assert right >= tried // 3, (right, tried)  # every second game is a twin
    verified = verify_any(folder)  # A1: the event's deals re-derived as it dealt them
    assert verified.ok and verified.games == 8, verified.problems
    assert check_deals(folder / "arena.sqlite") == []
