"""Swiss pairing (tournament/swiss.py) and its standings (stats/tiebreaks.py), in process."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from tacocat_arena.engine import Termination
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.stats.tiebreaks import BYE_POINTS, MatchScore, swiss_standings
from tacocat_arena.tournament.config import swiss_max_rounds as max_rounds
from tacocat_arena.tournament.swiss import History, pair_round, swiss_rounds


def _result(game_id: str, seats: tuple[str, str], winner: int | None) -> GameResult:
    reason = Termination.ROUND_CAP if winner is None else Termination.GOAL
    return GameResult(game_id, seats, 1, winner, reason, 3, (1, 1), (0.0, 0.0))


def _simulate(bots: list[str], rounds: int, games: int, strength: dict[str, float], seed: int):
    """Play a Swiss to its end with games won by the stronger bot (ties by a coin)."""
    rng = random.Random(seed)
    results: dict[str, GameResult] = {}
    while True:
        state = swiss_rounds(bots, rounds, games, 7, results.values(), secret="s")
        if state.finished == rounds:
            return state, results
        for game in state.games[-1]:
            a, b = game.seats
            if strength[a] == strength[b]:
                winner: int | None = rng.choice((0, 1, None))
            else:
                winner = 0 if strength[a] > strength[b] else 1
            results[game.game_id] = _result(game.game_id, game.seats, winner)


@pytest.mark.parametrize("size", [2, 3, 7, 8, 16, 33])
def test_no_repeat_meetings_and_at_most_one_bye_each(size: int) -> None:
    bots = [f"b{i}" for i in range(size)]
    strength = {bot: random.Random(size).random() // 0.25 for bot in bots}  # ties galore
    rounds = min(max_rounds(size), 7)
    state, _ = _simulate(bots, rounds, 2, strength, size)
    meetings = Counter(frozenset((p.a, p.b)) for r in state.rounds for p in r.pairings)
    assert max(meetings.values()) == 1
    byes = Counter(r.bye for r in state.rounds if r.bye is not None)
    assert len(byes) == (rounds if size % 2 else 0)
    assert all(count == 1 for count in byes.values())
    for played in state.rounds:  # every bot once per round
        seen = [x for p in played.pairings for x in (p.a, p.b)] + [played.bye] * bool(played.bye)
        assert sorted(seen) == sorted(bots)


def test_a_full_round_robin_by_swiss_rounds() -> None:
    """As many rounds as the field allows: every bot meets every other exactly once."""
    bots = [f"b{i}" for i in range(8)]
    state, _ = _simulate(bots, 7, 2, dict.fromkeys(bots, 1.0), 3)
    assert {frozenset((p.a, p.b)) for r in state.rounds for p in r.pairings} == {
        frozenset((x, y)) for x in bots for y in bots if x < y
    }


def test_score_groups_pair_winners_with_winners() -> None:
    bots = [f"b{i}" for i in range(8)]
    history = History(
        points={b: (1.0 if i < 4 else 0.0) for i, b in enumerate(bots)},
        met=frozenset(frozenset((bots[i], bots[i + 4])) for i in range(4)),
        byes=frozenset(),
        roles={b: ("A" if i < 4 else "B",) for i, b in enumerate(bots)},
    )
    played = pair_round(bots, 2, history)
    # S1 [b0 b1] against S2 [b2 b3] in the winners' group, the same in the losers'; both of
    # a match were A (or both B) in round 1, so in an even round the lower ranked is A.
    assert [(p.a, p.b) for p in played.pairings] == [
        ("b2", "b0"),
        ("b3", "b1"),
        ("b6", "b4"),
        ("b7", "b5"),
    ]
    fresh = History(dict.fromkeys(bots, 0.0), frozenset(), frozenset(), {b: () for b in bots})
    first_round = pair_round(bots, 1, fresh)
    assert [(p.a, p.b) for p in first_round.pairings] == [
        ("b0", "b4"),
        ("b1", "b5"),
        ("b2", "b6"),
        ("b3", "b7"),
    ]


def test_a_balance_alternates() -> None:
    bots = [f"b{i}" for i in range(10)]
    state, _ = _simulate(bots, 6, 2, {b: float(i % 3) for i, b in enumerate(bots)}, 1)
    a_count = Counter(p.a for r in state.rounds for p in r.pairings)
    b_count = Counter(p.b for r in state.rounds for p in r.pairings)
    assert all(abs(a_count[bot] - b_count[bot]) <= 2 for bot in bots)


def test_deterministic_and_a_function_of_the_finished_rounds_only() -> None:
    bots = [f"b{i}" for i in range(9)]
    strength = {b: float(i) for i, b in enumerate(bots)}
    one, results = _simulate(bots, 5, 4, strength, 5)
    two, _ = _simulate(bots, 5, 4, strength, 5)
    assert one.rounds == two.rounds and one.plan == two.plan
    # Games of an unfinished round 3 (a resumed run's) change nothing of rounds 1-3.
    round3 = {game.game_id for game in one.games[2]}
    kept_back = sorted(round3)[:3]
    partial = [
        r
        for gid, r in results.items()
        if not gid.startswith(("r4-", "r5-")) and gid not in kept_back
    ]
    again = swiss_rounds(bots, 5, 4, 7, partial, secret="s")
    assert again.rounds == one.rounds[:3] and again.finished == 2
    # The secret changes the deals, never the pairings.
    other = swiss_rounds(bots, 5, 4, 7, partial, secret="t")
    assert other.rounds[0] == one.rounds[0]
    assert [g.seed for g in other.games[0]] != [g.seed for g in one.games[0]]


def test_strong_bots_rank_on_top() -> None:
    bots = [f"b{i}" for i in range(32)]
    strength = {b: float((i * 7) % 32) for i, b in enumerate(bots)}  # seeding hides strength
    state, _ = _simulate(bots, 7, 2, strength, 2)
    rows = swiss_standings(bots, state.scores, state.byes, strength)
    top = {row.bot for row in rows[:4]}
    strongest = set(sorted(bots, key=lambda b: -strength[b])[:4])
    assert len(top & strongest) >= 3
    assert rows[0].bot == max(bots, key=lambda b: strength[b])


def test_tiebreaks() -> None:
    bots = ["a", "b", "c", "d", "e"]
    matches = [
        MatchScore(1, "a", "b", 2, 0),
        MatchScore(1, "c", "d", 1, 1),
        MatchScore(2, "a", "c", 0, 2),
        MatchScore(2, "b", "e", 2, 0),
    ]
    rows = {row.bot: row for row in swiss_standings(bots, matches, [(1, "e"), (2, "d")], {})}
    assert rows["a"].points == 1.0 and rows["c"].points == 1.5
    assert rows["d"].points == 0.5 + BYE_POINTS and rows["d"].byes == 1
    assert rows["a"].buchholz == rows["b"].points + rows["c"].points  # 1 + 1.5
    assert rows["a"].sonneborn_berger == rows["b"].points * 1.0
    assert rows["c"].sonneborn_berger == rows["d"].points * 0.5 + rows["a"].points * 1.0
    order = [row.bot for row in swiss_standings(bots, matches, [(1, "e"), (2, "d")], {})]
    assert order[0] == "c"
    # a and b: 1 point each, a's Buchholz (b 1 + c 1.5) beats b's (a 1 + e 1).
    assert order.index("a") < order.index("b")


def _swiss_folder(tmp_path, bots: list[str], rounds: int):
    """A complete Swiss event's results.json (as ``write_outputs`` states it) and its games
    as ``verify`` reads them (id, names, record), every game won by the stronger bot."""
    import json

    from tacocat_arena.tournament.config import BotSpec, TournamentConfig, TournamentFormat

    config = TournamentConfig(
        bots=tuple(BotSpec(name, "builtin:random") for name in bots),
        games_per_pairing=2,
        seed=9,
        format=TournamentFormat.SWISS,
        rounds=rounds,
    )
    strength = {bot: float(i % 4) for i, bot in enumerate(bots)}
    results: dict[str, GameResult] = {}
    secret = "ab" * 16
    while (
        state := swiss_rounds(bots, rounds, 2, 9, results.values(), secret=secret)
    ).finished < rounds:
        for game in state.games[-1]:
            a, b = game.seats
            winner = None if strength[a] == strength[b] else int(strength[b] > strength[a])
            results[game.game_id] = GameResult(
                game.game_id,
                game.seats,
                game.seed,
                winner,
                Termination.ROUND_CAP if winner is None else Termination.GOAL,
                3,
                (1, 1),
                (0.0, 0.0),
            )
    metadata = {
        **config.describe(),
        "complete": True,
        "deal_secret": secret,
        "games_planned": len(results),
        "games_played": len(results),
    }
    (tmp_path / "results.json").write_text(json.dumps({"metadata": metadata}), encoding="utf-8")
    games = [
        (r.game_id, r.seats, {"seed": r.seed, "winner": r.winner, "players": list(r.seats)})
        for r in results.values()
    ]
    return state, games


def test_verify_re_derives_every_round_and_catches_a_changed_pairing(tmp_path) -> None:
    from tacocat_arena.tournament import plan_check

    def check_plan(folder, games):  # S1, the plan (these records hold no clock for S2)
        found = plan_check.check_plan(folder, games)
        return plan_check.PlanCheck(found.unchecked, [f for f in found.found if f[1] == "S1"])

    bots = [f"b{i}" for i in range(7)]
    state, games = _swiss_folder(tmp_path, bots, 4)
    assert check_plan(tmp_path, games) == check_plan(tmp_path, games)
    assert check_plan(tmp_path, games).found == [] and not check_plan(tmp_path, games).unchecked
    # Round 3 paired otherwise: two of its matches swap opponents (a-b, c-d -> a-d, c-b), every
    # game keeping its deal seed; the round's results then give round 4 as played.
    first, second = state.rounds[2].pairings[:2]
    swap = {first.b: second.b, second.b: first.b}

    def changed(game_id: str, seats: tuple[str, str]) -> tuple[str, tuple[str, str]]:
        if not game_id.startswith("r3-") or not {first.a, second.a} & set(seats):
            return game_id, seats
        new = tuple(swap.get(bot, bot) for bot in seats)
        return "-".join(["r3", *new, game_id.rsplit("-", 1)[1]]), new

    forged = []
    for game_id, seats, record in games:
        new_id, new_seats = changed(game_id, seats)
        forged.append((new_id, new_seats, {**record, "players": list(new_seats)}))
    found = check_plan(tmp_path, forged).found
    assert any("is not a game of the plan" in text for _, _, text in found)
    assert any("a planned game is missing" in text for _, _, text in found)
    # A changed result of round 1 re-pairs the rounds after it: the stored ones are caught.
    flipped = [
        (
            gid,
            seats,
            {**rec, "winner": 1 - rec["winner"]}
            if gid.startswith("r1-") and rec["winner"] is not None
            else rec,
        )
        for gid, seats, rec in games
    ]
    assert check_plan(tmp_path, flipped).found
