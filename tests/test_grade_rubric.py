"""The rubric of ``tacocat-arena grade``: the default one, and errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tacocat_arena.grade.grader import read_secret, secret_id, tier_secret, write_secret
from tacocat_arena.grade.outputs import VISIBILITIES, gradescope_dict
from tacocat_arena.grade.rubric import Method, RubricError, load_rubric, parse_rubric
from tacocat_arena.stats.pairs import score_to_elo

TEST_RUBRIC = Path(__file__).parent / "grade_bots" / "test_rubric.toml"


def minimal(**tier: object) -> dict[str, object]:
    base: dict[str, object] = {
        "name": "t",
        "opponent": "builtin:random",
        "points": 10,
        "threshold": 0.5,
    }
    base.update(tier)
    return {"conformance": {"points": 5}, "tiers": [base]}


def test_the_default_rubric_loads_and_is_worth_100_points() -> None:
    rubric = load_rubric(None)
    assert rubric.max_points == 100
    assert [tier.opponent.partition("?")[0] for tier in rubric.tiers] == [
        "builtin:random",
        "builtin:greedy",
        "builtin:search",
    ]
    assert rubric.decision_time is not None and rubric.no_forfeits_points is not None
    assert all(tier.method is Method.SPRT for tier in rubric.tiers)


def test_a_tier_sprt_tests_elo_of_the_threshold_against_it_plus_the_margin() -> None:
    tier = parse_rubric(minimal(threshold=0.35, margin=100)).tiers[0]
    assert tier.sprt.elo0 == pytest.approx(score_to_elo(0.35))
    assert tier.sprt.elo1 == pytest.approx(score_to_elo(0.35) + 100)
    assert tier.games == 40  # the default cap


def test_the_pairs_method_plays_its_pairs() -> None:
    tier = load_rubric(TEST_RUBRIC).tiers[0]
    assert tier.method is Method.PAIRS and tier.pairs == 8 and tier.games == 16


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ({"conformance": {"points": 5}, "tier": []}, "tier: unknown key"),
        ({"tiers": []}, "[conformance] is required"),
        ({"conformance": {"points": 5, "bonus": 1}}, "conformance.bonus: unknown key"),
        (minimal(oponent="builtin:greedy"), "tiers[0].oponent: unknown key"),
        (minimal(opponent="python bot.py"), "tiers[0].opponent: must be a baseline spec"),
        (minimal(opponent="builtin:chess"), "tiers[0].opponent: "),
        (minimal(opponent="builtin:search?budget=-3"), "tiers[0].opponent: "),
        (minimal(threshold=1.5), "tiers[0].threshold: must be in"),
        (minimal(threshold="half"), "tiers[0].threshold: must be a number"),
        (minimal(points=-1), "tiers[0].points: must be in"),
        (minimal(method="vibes"), 'tiers[0].method: must be "sprt" or "pairs"'),
        (minimal(method="pairs"), "tiers[0].pairs: required"),
        (minimal(method="pairs", pairs=3, margin=50), "tiers[0].margin: only for"),
        (minimal(pairs=3), "tiers[0].pairs: only for"),
        (minimal(max_games=7), "tiers[0].max_games: must be even"),
        (minimal(alpha=0.9), "tiers[0].alpha: must be in"),
        ({**minimal(), "sandbox": "docker"}, "sandbox: must be one of"),
        ({**minimal(), "move_timeout": 0}, "move_timeout: must be in"),
        ({**minimal(), "decision_time": {"points": 5}}, "decision_time.mean_ms: required"),
        ({**minimal(), "no_forfeits": {"points": 5, "x": 1}}, "no_forfeits.x: unknown key"),
    ],
)
def test_a_bad_rubric_names_the_key(data: dict[str, object], named: str) -> None:
    with pytest.raises(RubricError) as caught:
        parse_rubric(data)
    assert named in str(caught.value)


def test_two_tiers_with_one_folder_name_are_refused() -> None:
    tier = {"opponent": "builtin:random", "points": 10, "threshold": 0.5}
    data = {
        "conformance": {"points": 5},
        "tiers": [{**tier, "name": "Beats random"}, {**tier, "name": "beats  random!"}],
    }
    with pytest.raises(RubricError, match="both named like 'beats-random'"):
        parse_rubric(data)


def test_a_rubric_file_error_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "r.toml"
    path.write_text("[conformance]\npoints = 5\n[[tiers]]\nname = 'x'\n", encoding="utf-8")
    with pytest.raises(RubricError, match=r"rubric .*r.toml: tiers\[0\].opponent"):
        load_rubric(path)


def test_the_secret_is_kept_private_and_read_back(tmp_path: Path) -> None:
    write_secret(tmp_path / "secret.txt", "a" * 32)
    assert (tmp_path / "secret.txt").stat().st_mode & 0o777 == 0o600
    assert read_secret(tmp_path) == read_secret(tmp_path / "secret.txt") == "a" * 32
    assert secret_id("a" * 32) != secret_id("b" * 32)
    tiers = load_rubric(None).tiers
    assert len({tier_secret("a" * 32, tier.slug) for tier in tiers}) == len(tiers)
    assert "a" * 32 not in {tier_secret("a" * 32, tier.slug) for tier in tiers}


def test_gradescope_results_refuse_an_unknown_visibility() -> None:
    grade = {"items": [], "points": 0, "max_points": 0, "rubric": "r", "seconds": 1}
    assert gradescope_dict(grade)["visibility"] in VISIBILITIES
    with pytest.raises(ValueError, match="visibility"):
        gradescope_dict(grade, "public")
