"""The ruleset: DECIDED defaults, TOML loading, validation (RULES-SPEC C2-C4, P10, W2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tacocat_arena.engine import DEFAULT_RULESET, Ruleset, RulesetError, TieRule


def test_defaults_are_the_decided_values() -> None:
    """C2, C3, C4, P10, W2: every default is RULES-SPEC's DECIDED value."""
    r = Ruleset()
    assert dict(r.deck) == {
        1: 2,
        2: 3,
        3: 3,
        4: 3,
        5: 4,
        6: 4,
        7: 4,
        8: 4,
        9: 3,
        10: 3,
        11: 3,
        12: 2,
    }
    assert r.deck_size == 38
    assert r.hand_sizes == (4, 5, 6, 7, 6, 5, 4)
    assert r.arrows == ({1}, {1}, {1}, {0, 1}, {0}, {0}, {0})
    assert r.tie_rule is TieRule.REPLAY_ROUND
    assert r.max_rounds == 50
    assert r.centre == 4 and r.spaces == 7
    assert r == DEFAULT_RULESET and hash(r) == hash(DEFAULT_RULESET)


def test_toml_load(tmp_path: Path) -> None:
    """A ruleset loads from TOML; missing fields take the defaults; arrows follow C4."""
    path = tmp_path / "rules.toml"
    path.write_text(
        'tie_rule = "arrow"\n'
        "max_rounds = 9\n"
        "hand_sizes = [3, 4, 5, 4, 3]\n"
        '[deck]\n"1" = 4\n"2" = 4\n"3" = 4\n"4" = 4\n"5" = 4\n',
        encoding="utf-8",
    )
    r = Ruleset.from_toml(path)
    assert r.tie_rule is TieRule.ARROW
    assert r.max_rounds == 9
    assert r.hand_sizes == (3, 4, 5, 4, 3)
    assert r.arrows == ({1}, {1}, {0, 1}, {0}, {0})
    assert r.deck_size == 20 and r.centre == 3


def test_toml_load_empty_file_is_default(tmp_path: Path) -> None:
    """An empty TOML file is the default ruleset."""
    path = tmp_path / "empty.toml"
    path.write_text("", encoding="utf-8")
    assert Ruleset.from_toml(path) == DEFAULT_RULESET


def test_toml_syntax_error_is_a_ruleset_error(tmp_path: Path) -> None:
    """A TOML syntax error is reported as a RulesetError."""
    path = tmp_path / "broken.toml"
    path.write_text("max_rounds = = 3\n", encoding="utf-8")
    with pytest.raises(RulesetError):
        Ruleset.from_toml(path)


def test_toml_invalid_field_names_the_field(tmp_path: Path) -> None:
    """A TOML file breaking a constraint fails at load, naming the field."""
    path = tmp_path / "bad.toml"
    path.write_text("max_rounds = 0\n", encoding="utf-8")
    with pytest.raises(RulesetError, match="max_rounds"):
        Ruleset.from_toml(path)


INVALID: list[Any] = [
    pytest.param({"hand_sizes": [4, 5, 10, 5, 4]}, "hand_sizes", id="C3-4h-exceeds-deck"),
    pytest.param({"hand_sizes": [4, 1, 4]}, "hand_sizes", id="C3-h-below-2"),
    pytest.param({"hand_sizes": [4, 5, 5, 4]}, "hand_sizes", id="S1-even-number-of-spaces"),
    pytest.param({"hand_sizes": []}, "hand_sizes", id="S1-no-spaces"),
    pytest.param({"arrows": [[1], [0, 1], [0]]}, "arrows", id="C4-arrows-wrong-length"),
    pytest.param(
        {"arrows": [[1], [1], [1], [0, 2], [0], [0], [0]]}, "arrows", id="C4-arrow-invalid-seat"
    ),
    pytest.param({"arrows": [[1], [1], [1], [], [0], [0], [0]]}, "arrows", id="C4-no-arrow"),
    pytest.param({"colour": "red"}, "colour", id="unknown-field"),
    pytest.param({"tie_rule": "coin_flip"}, "tie_rule", id="P10-bad-tie-rule"),
    pytest.param({"max_rounds": 0}, "max_rounds", id="W2-max-rounds-zero"),
    pytest.param({"max_rounds": -3}, "max_rounds", id="W2-max-rounds-negative"),
    pytest.param({"max_rounds": 2.5}, "max_rounds", id="W2-max-rounds-float"),
    pytest.param({"deck": {"1": -1, "2": 40}}, "deck", id="C2-negative-count"),
    pytest.param({"deck": {"0": 10, "2": 40}}, "deck", id="C2-value-zero"),
    pytest.param({"deck": {"x": 10}}, "deck", id="C2-non-integer-value"),
    pytest.param({"deck": {}}, "deck", id="C2-empty-deck"),
    pytest.param({"deck": {"1": 20}}, "hand_sizes", id="C3-deck-too-small-for-hands"),
]


@pytest.mark.parametrize("data,field", INVALID)
def test_invalid_rulesets_name_the_field(data: dict[str, Any], field: str) -> None:
    """Invalid rulesets fail with a RulesetError whose message names the field."""
    with pytest.raises(RulesetError) as info:
        Ruleset.from_dict(data)
    assert field in str(info.value)


def test_invalid_ruleset_via_constructor() -> None:
    """The constructor validates too (no invalid Ruleset value can exist)."""
    with pytest.raises(RulesetError, match="max_rounds"):
        Ruleset(max_rounds=0)
    with pytest.raises(RulesetError, match="hand_sizes"):
        Ruleset(hand_sizes=(10,) * 7)


def test_hand_size_bound_is_inclusive() -> None:
    """C3: 4*h == deck size is allowed; 4*h > deck size is not."""
    deck = {"1": 10, "2": 10}  # 20 cards
    assert Ruleset.from_dict({"deck": deck, "hand_sizes": [5]}).hand_sizes == (5,)
    with pytest.raises(RulesetError, match="hand_sizes"):
        Ruleset.from_dict({"deck": deck, "hand_sizes": [6]})


ROUND_TRIPS = [
    DEFAULT_RULESET,
    Ruleset(tie_rule=TieRule.ARROW, max_rounds=7),
    Ruleset.from_dict(
        {"hand_sizes": [2, 3, 2], "arrows": [[0], [0, 1], [1]], "deck": {"1": 3, "2": 3, "9": 6}}
    ),
]


@pytest.mark.parametrize("ruleset", ROUND_TRIPS)
def test_to_dict_from_dict_round_trip(ruleset: Ruleset) -> None:
    """to_dict/from_dict round trip exactly (and through JSON)."""
    import json

    assert Ruleset.from_dict(ruleset.to_dict()) == ruleset
    assert Ruleset.from_dict(json.loads(json.dumps(ruleset.to_dict()))) == ruleset


def test_with_overrides_validates() -> None:
    """with_overrides applies TOML-style fields and validates them."""
    assert DEFAULT_RULESET.with_overrides({"max_rounds": 3}).max_rounds == 3
    with pytest.raises(RulesetError, match="tie_rule"):
        DEFAULT_RULESET.with_overrides({"tie_rule": "nope"})
