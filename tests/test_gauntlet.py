"""Gauntlets: one bot plays every other, the others never meet; the config and the plan."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from verify_support import assert_verifies  # tests/ (pytest pythonpath)

from tacocat_arena.cli import main
from tacocat_arena.tournament.config import ConfigError, TournamentFormat, load_config
from tacocat_arena.tournament.schedule import gauntlet, plan_for, round_robin

BOTS = ["new", "a", "b", "c"]


def test_the_gauntlet_bot_meets_every_other_and_the_others_never_meet() -> None:
    plan = gauntlet("b", BOTS, 6, 7, secret="")
    meetings = Counter(frozenset(game.seats) for game in plan)
    assert meetings == {frozenset({"b", other}): 6 for other in ("new", "a", "c")}
    for other in ("new", "a", "c"):  # each deal twice, seats swapped, one after the other
        games = [game for game in plan if other in game.seats]
        for first, second in zip(games[::2], games[1::2], strict=True):
            assert first.seed == second.seed and first.seats == second.seats[::-1]


def test_a_gauntlet_deals_what_the_round_robin_deals_its_bot() -> None:
    robin = round_robin(BOTS, 4, 3, secret="")
    assert gauntlet("new", BOTS, 4, 3, secret="") == [game for game in robin if "new" in game.seats]


def test_format_gauntlet_in_a_config_plays_the_first_bot_by_default(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(
        'format = "gauntlet"\ngames = 2\n'
        + "".join(f'[[bots]]\nname = "{n}"\ncommand = "builtin:random"\n' for n in BOTS)
    )
    config = load_config(path, {}, [])
    assert config.format is TournamentFormat.GAUNTLET and config.gauntlet_name == "new"
    assert {frozenset(game.seats) for game in plan_for(config, secret="")} == {
        frozenset({"new", other}) for other in ("a", "b", "c")
    }
    flagged = load_config(
        path, {"format": TournamentFormat.GAUNTLET, "gauntlet_bot": "c"}, []
    )  # run --gauntlet c
    assert flagged.gauntlet_name == "c"
    assert flagged.fingerprint() != config.fingerprint()  # a resume cannot mix the two
    assert flagged.describe()["gauntlet_bot"] == "c"


def test_a_round_robin_keeps_its_fingerprint_and_its_plan(tmp_path: Path) -> None:
    config = load_config(None, {}, [])
    assert config.format is TournamentFormat.ROUND_ROBIN
    names = [bot.name for bot in config.bots]
    assert plan_for(config, secret="") == round_robin(
        names, config.games_per_pairing, config.seed, secret=""
    )
    assert "gauntlet" not in config.describe() and "format" not in config.describe()


@pytest.mark.parametrize(
    ("text", "overrides", "message"),
    [
        (
            'format = "ladder"\n',
            {},
            "format 'ladder' must be 'round_robin', 'gauntlet', 'swiss', 'knockout' or 'finals'",
        ),
        ('format = "gauntlet"\ngauntlet_bot = "zed"\n', {}, "'zed' is not one of the bots"),
        ('gauntlet_bot = "a"\n', {}, 'format is not "gauntlet"'),
        (
            "",
            {"format": TournamentFormat.GAUNTLET, "gauntlet_bot": "zed"},
            "'zed' is not one of the bots (new, a, b, c) (from --gauntlet)",
        ),
    ],
)
def test_bad_gauntlets_are_refused(
    tmp_path: Path, text: str, overrides: dict[str, object], message: str
) -> None:
    path = tmp_path / "t.toml"
    path.write_text(
        text + "".join(f'[[bots]]\nname = "{n}"\ncommand = "builtin:random"\n' for n in BOTS)
    )
    with pytest.raises(ConfigError) as raised:
        load_config(path, overrides, [])
    assert message in str(raised.value)


@pytest.mark.slow
def test_run_gauntlet_plays_only_its_pairings_and_reports_on_the_way(tmp_path: Path) -> None:
    out = tmp_path / "g"
    bots = [f"--bot={name}=builtin:random" for name in ("new", "a", "b")]
    args = ["run", *bots, "--gauntlet", "new", "--games", "4", "--report-every", "3"]
    args += ["--concurrency", "1", "--out", str(out)]
    result = CliRunner(env={"COLUMNS": "200"}).invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "a gauntlet of new" in result.output
    assert [line.strip() for line in result.output.splitlines() if "After " in line] == [
        "After 3 games",
        "After 6 games",
    ]
    assert "Gauntlet: new against each opponent" in result.output
    results = json.loads((out / "results.json").read_text())
    assert [(p["a"], p["b"], p["games"], p["pairs"]) for p in results["pairings"]] == [
        ("new", "a", 4, 2),
        ("new", "b", 4, 2),
    ]
    assert results["metadata"]["format"] == "gauntlet"
    assert_verifies(out)  # exactly the gauntlet's plan, every game re-verified
    assert results["metadata"]["games_played"] == 8
