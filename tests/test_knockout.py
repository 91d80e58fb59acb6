"""Knockout brackets (tournament/knockout.py) and their report, in process."""

from __future__ import annotations

import json
import random

import pytest

from tacocat_arena.engine import Termination
from tacocat_arena.launch.spec import ConfigError
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.config import BotSpec, TournamentConfig, TournamentFormat
from tacocat_arena.tournament.knockout import (
    Decided,
    bracket_lines,
    bracket_positions,
    knockout_state,
    reseeded,
)
from tacocat_arena.tournament.schedule import games_planned, plan_for


def _config(names: list[str], **options: object) -> TournamentConfig:
    return TournamentConfig(
        bots=tuple(BotSpec(name, "builtin:random") for name in names),
        games_per_pairing=2,
        format=TournamentFormat.KNOCKOUT,
        **options,
    )


def _play(config: TournamentConfig, winner_of) -> tuple[object, dict[str, GameResult]]:
    """Play the bracket to its end, each game's winner seat from ``winner_of(game)``."""
    results: dict[str, GameResult] = {}
    for _ in range(100):
        state = knockout_state(config, results.values(), secret="k")
        if state.champion is not None:
            return state, results
        for game in plan_for(config, secret="k", results=results.values()):
            if game.game_id not in results:
                winner = winner_of(game)
                reason = Termination.ROUND_CAP if winner is None else Termination.GOAL
                results[game.game_id] = GameResult(
                    game.game_id, game.seats, game.seed, winner, reason, 3, (1, 1), (0.0, 0.0)
                )
    raise AssertionError("the bracket never ended")


def test_bracket_positions_keep_the_top_two_seeds_apart() -> None:
    assert bracket_positions(8) == [0, 7, 3, 4, 1, 6, 2, 5]
    order = bracket_positions(16)
    assert sorted(order) == list(range(16))
    assert order.index(0) < 8 <= order.index(1)  # 1 and 2 in different halves


@pytest.mark.parametrize("size", [2, 3, 5, 8, 13])
def test_the_stronger_bot_always_goes_through(size: int) -> None:
    names = [f"b{i}" for i in range(size)]
    strength = {name: random.Random(size).random() + i for i, name in enumerate(reversed(names))}
    state, results = _play(
        _config(names), lambda g: int(strength[g.seats[1]] > strength[g.seats[0]])
    )
    assert state.champion == max(names, key=strength.__getitem__)
    matches = [m for matches in state.rounds for m in matches if m.low is not None]
    assert len(matches) == size - 1  # one match per bot knocked out
    assert len(results) == games_planned(_config(names))  # nobody was level
    byes = [m for m in state.rounds[0] if m.low is None]
    assert {m.high for m in byes} == set(names[: len(byes)])  # the top seeds' byes


def test_a_level_match_is_extended_pair_by_pair_then_goes_to_the_higher_seed() -> None:
    names = ["a", "b", "c", "d"]
    # Every deal split (each bot wins its seat-0 game): level after any number of pairs.
    state, results = _play(_config(names, extra_pairs=3), lambda game: 0)
    for match in (m for matches in state.rounds for m in matches):
        assert match.pairs == 1 + 3 and match.decided is Decided.SEED
        assert match.winner == match.high
    assert state.champion == "a"
    assert len(results) == 3 * 2 * 4

    # A match won in its first extra pair stops there.
    def decide(game):
        return 1 if game.game_id == "k1-a-d-d1" else 0  # a loses its seat-0 game of deal 1

    state, _ = _play(_config(names, extra_pairs=3), decide)
    first = next(m for m in state.rounds[0] if m.high == "a")
    assert first.pairs == 2 and first.decided is Decided.EXTENSION and first.winner == "d"


def test_the_bracket_is_a_function_of_the_results_and_reseeding_reorders(tmp_path) -> None:
    names = [f"b{i}" for i in range(6)]
    config = _config(names)
    state, results = _play(config, lambda g: int(g.seats[1] < g.seats[0]))
    again = knockout_state(config, list(results.values()), secret="other")
    assert [[(m.high, m.low, m.winner) for m in r] for r in again.rounds] == [
        [(m.high, m.low, m.winner) for m in r] for r in state.rounds
    ]
    assert "Champion: b0" in bracket_lines(state)
    assert json.loads(json.dumps(state.as_dict()))["champion"] == "b0"
    (tmp_path / "results.json").write_text(
        json.dumps({"swiss": {"standings": [{"bot": n} for n in reversed(names)]}})
    )
    assert [b.name for b in reseeded(config, tmp_path).bots] == list(reversed(names))
    (tmp_path / "results.json").write_text("{}")
    with pytest.raises(ConfigError, match="holds no standings"):
        reseeded(config, tmp_path)


def test_extra_pairs_belong_to_a_knockout() -> None:
    with pytest.raises(ConfigError, match='format is not "knockout"'):
        TournamentConfig(bots=(BotSpec("a", "x"), BotSpec("b", "y")), extra_pairs=2)
