"""Finals with cut-offs (tournament/finals.py), in process: fields, cuts, stops, verify."""

from __future__ import annotations

import json
import random

import pytest

from tacocat_arena.engine import Termination
from tacocat_arena.launch.spec import ConfigError
from tacocat_arena.stats.pairs import Pentanomial, estimate
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.config import BotSpec, TournamentConfig, TournamentFormat
from tacocat_arena.tournament.finals import (
    MIN_PAIRS,
    Ended,
    finals_lines,
    finals_state,
    kept,
)
from tacocat_arena.tournament.schedule import games_planned, plan_for


def _config(names: list[str], **options: object) -> TournamentConfig:
    games = options.pop("games", 2)
    return TournamentConfig(
        bots=tuple(BotSpec(name, "builtin:random") for name in names),
        games_per_pairing=games,  # type: ignore[arg-type]
        seed=5,
        format=TournamentFormat.FINALS,
        **options,  # type: ignore[arg-type]
    )


def _result(game, winner: int | None) -> GameResult:
    reason = Termination.ROUND_CAP if winner is None else Termination.GOAL
    return GameResult(game.game_id, game.seats, game.seed, winner, reason, 3, (1, 1), (0.0, 0.0))


def _play(config: TournamentConfig, winner_of, secret: str = "s") -> tuple[object, dict]:
    """Play the finals to their end, stage by stage, each game's winner from ``winner_of``."""
    results: dict[str, GameResult] = {}
    for _ in range(200):
        state = finals_state(config, results.values(), secret=secret)
        if state.ended is not None:
            return state, results
        for game in plan_for(config, secret=secret, results=results.values()):
            if game.game_id not in results:
                results[game.game_id] = _result(game, winner_of(game))
    raise AssertionError("the finals never ended")


def _stronger(strength):
    def winner(game):
        a, b = (strength[bot] for bot in game.seats)
        return None if a == b else int(b > a)

    return winner


def test_the_cut_keeps_the_upper_part_never_fewer_than_top_plus_one() -> None:
    config = _config([f"b{i}" for i in range(9)], top=2)
    settings = config.finals
    assert [kept(n, settings) for n in (9, 5, 3, 2)] == [5, 3, 3, 2]
    assert kept(10, _config([f"b{i}" for i in range(10)], cut=0.75, top=1).finals) == 3


def test_clearly_separated_strengths_end_with_the_strong_in_the_last_stage() -> None:
    names = [f"b{i}" for i in range(10)]
    random.Random(3).shuffle(names)  # the seeding says nothing
    strength = {name: int(name[1:]) for name in names}
    state, results = _play(_config(names, top=2), _stronger(strength))
    fields = [len(stage.field) for stage in state.stages]
    assert fields == [10, 5, 3]  # ceil(10 / 2), ceil(5 / 2), then top + 1 = 3: no cut left
    assert state.ended is Ended.FIELD
    assert set(state.stages[-1].field) == {"b9", "b8", "b7"}
    assert state.order == sorted(names, key=lambda n: -strength[n])
    # Every stage a round robin of its field, games = 2 per pairing.
    assert [len(stage.games) for stage in state.stages] == [90, 20, 6]
    assert len(results) == 116 and games_planned(_config(names, top=2)) == 90
    # Each stage's field is the one before less what that stage dropped.
    for before, after in zip(state.stages, state.stages[1:], strict=False):
        assert set(after.field) == set(before.field) - set(before.dropped)


def test_until_stable_stops_once_the_top_is_decided() -> None:
    names = [f"b{i}" for i in range(6)]
    strength = {name: int(name[1:]) for name in names}
    config = _config(names, top=2, until_stable=True, games=4)
    state, _ = _play(config, _stronger(strength))
    assert state.ended is Ended.DECIDED and state.decided
    # 2 pairs a stage: b5-b4 and b4-b3 reach MIN_PAIRS (4) in stage 2.
    assert len(state.stages) == MIN_PAIRS // 2
    last = state.stages[-1]
    assert [(b.higher, b.lower) for b in last.boundaries] == [("b5", "b4"), ("b4", "b3")]
    assert all(b.pairs == 4 and b.los > 0.95 for b in last.boundaries)
    assert not last.dropped  # decided: nobody is dropped after the last stage
    # The LOS is the pairs' statistic itself: four 2-0 pairs.
    assert last.boundaries[0].los == estimate(Pentanomial((0, 0, 0, 0, 4))).los
    lines = finals_lines(state)
    assert "Decided after 2 stages" in lines[-1]
    assert "LOS 1.000 over 4 pairs (decided)" in lines[-2]
    one_pair = _play(_config(names, top=2, until_stable=True, games=2), _stronger(strength))[0]
    assert "LOS 1.000 over 1 pair (open)" in finals_lines(one_pair)[1]  # not "1 pairs"


def test_a_field_that_cannot_be_told_apart_stops_at_the_cap_undecided() -> None:
    names = [f"b{i}" for i in range(5)]
    config = _config(names, top=1, until_stable=True, max_stages=4)
    state, _ = _play(config, lambda game: None)  # every game drawn
    assert state.ended is Ended.MAX_STAGES and not state.decided
    assert [len(stage.field) for stage in state.stages] == [5, 3, 2, 2]
    assert "not decided" in finals_lines(state)[-1]


def test_the_stages_are_a_function_of_the_finished_games_and_the_secret_only_deals() -> None:
    names = [f"b{i}" for i in range(7)]
    rng = random.Random(11)
    verdicts: dict[tuple[str, str, int], int | None] = {}

    def coin(game):  # the same game gets the same result however often it is asked
        return verdicts.setdefault((*game.seats, game.deal), rng.choice([0, 1, None]))

    config = _config(names, top=2)
    state, results = _play(config, coin, secret="one")
    shuffled = list(results.values())
    random.Random(2).shuffle(shuffled)
    assert finals_state(config, shuffled, secret="one") == state
    # Deals differ with the secret; the fields do not (the same outcomes by the seats).
    other, _ = _play(config, coin, secret="two")
    assert [s.field for s in other.stages] == [s.field for s in state.stages]
    assert other.stages[0].games[0].seed != state.stages[0].games[0].seed
    # A stage with one game unfinished plans nothing after it.
    second = state.stages[1].games
    partial = [r for r in results.values() if r.game_id != second[-1].game_id]
    cut_short = finals_state(config, partial, secret="one")
    assert len(cut_short.stages) == 2 and cut_short.ended is None
    assert cut_short.stages[1].ranking is None


def test_finals_settings_are_checked_and_belong_to_finals() -> None:
    names = ["a", "b", "c"]
    with pytest.raises(ConfigError, match=r"cut: .* in \(0, 1\)"):
        _config(names, cut=1.0)
    with pytest.raises(ConfigError, match="top: .* 1 to 3"):
        _config(names, top=4)
    with pytest.raises(ConfigError, match="confidence"):
        _config(names, confidence=0.3)
    with pytest.raises(ConfigError, match='top is set, but format is not "finals"'):
        TournamentConfig(bots=tuple(BotSpec(n, "builtin:random") for n in names), top=2)
    # The settings make the fingerprint: a resumed run cannot change them.
    assert _config(names, top=1).fingerprint() != _config(names, top=2).fingerprint()


def test_verify_re_derives_every_stage_and_catches_a_changed_field(tmp_path) -> None:
    from tacocat_arena.tournament import plan_check

    names = [f"b{i}" for i in range(6)]
    strength = {name: int(name[1:]) for name in names}
    config = _config(names, top=1)
    secret = "cd" * 16
    state, results = _play(config, _stronger(strength), secret=secret)
    metadata = {
        **config.describe(),
        "complete": True,
        "deal_secret": secret,
        "games_planned": len(results),
        "games_played": len(results),
    }
    (tmp_path / "results.json").write_text(json.dumps({"metadata": metadata}), encoding="utf-8")
    derived = plan_check.config_from_metadata(metadata)
    assert derived.finals == config.finals and derived.fingerprint() == config.fingerprint()
    games = [
        (r.game_id, r.seats, {"seed": r.seed, "winner": r.winner, "players": list(r.seats)})
        for r in results.values()
    ]

    def s1(games):
        found = plan_check.check_plan(tmp_path, games)
        assert not found.unchecked
        return [f for f in found.found if f[1] == "S1"]

    assert s1(games) == []
    # Stage 1's results flipped: the field of stage 2 would have been the weak half.
    flipped = [
        (gid, seats, {**rec, "winner": 1 - rec["winner"]} if gid.startswith("f1-") else rec)
        for gid, seats, rec in games
    ]
    found = s1(flipped)
    assert any("is not a game of the plan" in text for _, _, text in found)
    # A stage-2 game of a bot that stage 1 dropped, in place of a kept one's.
    dropped, keeper = state.stages[0].dropped[0], state.stages[1].field[-1]
    forged = []
    for gid, seats, rec in games:
        if gid.startswith("f2-") and keeper in seats:
            seats = tuple(dropped if bot == keeper else bot for bot in seats)
            gid = "-".join(["f2", *seats, gid.rsplit("-", 1)[1]])
        forged.append((gid, seats, {**rec, "players": list(seats)}))
    found = s1(forged)
    assert any("a planned game is missing" in text for _, _, text in found)


def test_a_prior_events_top_n_enter_the_finals(tmp_path) -> None:
    from tacocat_arena.tournament.knockout import first_entrants, reseeded

    names = [f"b{i}" for i in range(6)]
    standings = [{"bot": name} for name in ["b4", "b2", "b0", "b5", "b1", "b3"]]
    (tmp_path / "results.json").write_text(json.dumps({"swiss": {"standings": standings}}))
    config = first_entrants(reseeded(_config(names), tmp_path), 3)
    assert [bot.name for bot in config.bots] == ["b4", "b2", "b0"]
    assert config.finals.top == 3 and config.fingerprint() != _config(names).fingerprint()
    with pytest.raises(ConfigError, match="--entrants 7: an event of 6 bots takes 2 to 6"):
        first_entrants(_config(names), 7)
