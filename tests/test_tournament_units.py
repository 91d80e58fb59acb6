"""Unit tests of the tournament's plan, config and database (no processes, no network)."""

from __future__ import annotations

import itertools
import sqlite3
import sys
from collections import Counter
from pathlib import Path

import pytest

from tacocat_arena.engine import DEFAULT_RULESET
from tacocat_arena.launch.bots import BotProcess, Launch
from tacocat_arena.launch.sandbox import Limits, SandboxMode
from tacocat_arena.referee.settings import DEFAULT_GRACE_MS, FailurePolicy
from tacocat_arena.report.outputs import write_outputs
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.config import (
    BotSpec,
    ConfigError,
    TournamentConfig,
    load_config,
)
from tacocat_arena.tournament.schedule import deal_seed, round_robin
from tacocat_arena.tournament.storage import StorageError, TournamentStore

NO_OVERRIDES: dict[str, object] = {}
BOTS = ["alpha", "beta", "gamma", "delta"]


# -- schedule ----------------------------------------------------------------------------------
@pytest.mark.parametrize("games", [2, 4, 10])
def test_every_pair_meets_games_per_pairing_times(games: int) -> None:
    plan = round_robin(BOTS, games, 5, secret="")
    pairs = Counter(frozenset(game.seats) for game in plan)
    assert set(pairs) == {frozenset(p) for p in itertools.combinations(BOTS, 2)}
    assert all(count == games for count in pairs.values())
    assert len(plan) == 6 * games
    assert len({game.game_id for game in plan}) == len(plan)


def test_each_deal_is_played_twice_with_seats_swapped_one_after_the_other() -> None:
    plan = round_robin(BOTS, 6, 5, secret="")
    by_seed: dict[int, list] = {}
    for game in plan:
        by_seed.setdefault(game.seed, []).append(game)
    assert len(by_seed) == len(plan) // 2  # no seed is shared between deals or pairings
    for games in by_seed.values():
        assert len(games) == 2
        first, second = games
        assert second.seats == first.seats[::-1]
        assert first.deal == second.deal
    # The two games of a deal are adjacent.
    for first, second in zip(plan[::2], plan[1::2], strict=True):
        assert first.seed == second.seed and second.seats == first.seats[::-1]


def test_plan_is_deterministic_and_the_seed_changes_every_deal() -> None:
    assert round_robin(BOTS, 4, 5, secret="") == round_robin(BOTS, 4, 5, secret="")
    one = {game.seed for game in round_robin(BOTS, 4, 5, secret="")}
    other = {game.seed for game in round_robin(BOTS, 4, 6, secret="")}
    assert not one & other
    assert deal_seed(5, ("alpha", "beta"), 0, secret="") != deal_seed(
        5, ("alpha", "beta"), 1, secret=""
    )
    assert deal_seed(5, ("alpha", "beta"), 0, secret="") != deal_seed(
        5, ("alpha", "gamma"), 0, secret=""
    )
    assert all(0 <= game.seed < 2**64 for game in round_robin(BOTS, 10, 5, secret=""))


def test_plan_is_ordered_deal_by_deal_and_balances_seats() -> None:
    plan = round_robin(BOTS, 4, 5, secret="")
    assert [game.deal for game in plan] == sorted(game.deal for game in plan)
    assert [game.deal for game in plan[:12]] == [0] * 12
    seat0 = Counter(game.seats[0] for game in plan)
    assert all(seat0[bot] == 6 for bot in BOTS)  # half of each bot's 12 games
    # Who opens a deal alternates between deals, pairing by pairing.
    openers = {(frozenset(g.seats), g.deal): g.seats[0] for g in reversed(plan)}
    for pair in itertools.combinations(BOTS, 2):
        assert openers[frozenset(pair), 0] != openers[frozenset(pair), 1]


def test_bot_names_that_would_share_game_ids_are_refused() -> None:
    bots = [BotSpec(name, "builtin:random") for name in ("a-b", "c", "a", "b-c")]
    with pytest.raises(ConfigError, match="share game ids"):
        TournamentConfig(tuple(bots))
    TournamentConfig(tuple(bots[:2]))  # dashes alone are fine


def test_odd_games_per_pairing_is_not_a_plan() -> None:
    with pytest.raises(ValueError, match="even"):
        round_robin(BOTS, 3, 1, secret="")


# -- config ------------------------------------------------------------------------------------
def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


TWO_BOTS = """
[[bots]]
name = "a"
command = "builtin:random"

[[bots]]
name = "b"
command = "python bots/b.py --level 'very hard'"
"""


def test_defaults_of_a_minimal_config(tmp_path: Path) -> None:
    config = load_config(write(tmp_path / "t.toml", TWO_BOTS), NO_OVERRIDES, ())
    assert [bot.name for bot in config.bots] == ["a", "b"]
    assert config.games_per_pairing == 10
    assert config.seed == 1
    assert config.concurrency == 4
    assert config.move_timeout_s == 1.0
    assert config.time_bank_s == 0.0
    assert config.grace_ms == DEFAULT_GRACE_MS == 100
    assert config.failure_policy is FailurePolicy.FORFEIT
    assert config.ruleset == DEFAULT_RULESET
    assert config.connect_timeout_s == 30.0
    assert config.max_restarts == 3
    assert config.base_dir == tmp_path
    assert config.out == tmp_path / "tacocat-results"  # relative to the config's folder


def test_every_key_is_read(tmp_path: Path) -> None:
    text = (
        """
games = 6
seed = 99
concurrency = 2
move_timeout = 0.25
time_bank = 3
grace_ms = 50
failure_policy = "default_action"
out = "/somewhere/else"
connect_timeout = 5
max_restarts = 0

[ruleset]
max_rounds = 20
tie_rule = "arrow"
"""
        + TWO_BOTS
    )
    config = load_config(write(tmp_path / "t.toml", text), NO_OVERRIDES, ())
    assert (config.games_per_pairing, config.seed, config.concurrency) == (6, 99, 2)
    assert (config.move_timeout_s, config.time_bank_s, config.grace_ms) == (0.25, 3.0, 50)
    assert config.failure_policy is FailurePolicy.DEFAULT_ACTION
    assert config.out == Path("/somewhere/else")
    assert (config.connect_timeout_s, config.max_restarts) == (5.0, 0)
    assert config.ruleset.max_rounds == 20 and config.ruleset.tie_rule.value == "arrow"
    clock = config.referee_settings.clock
    assert (clock.decision_ms, clock.bank_ms, clock.grace_ms) == (250, 3000, 50)


def test_ruleset_table_takes_the_rules_defaults(tmp_path: Path) -> None:
    text = TWO_BOTS + "\n[ruleset]\nhand_sizes = [4, 5, 6, 5, 4]\n"
    config = load_config(write(tmp_path / "t.toml", text), NO_OVERRIDES, ())
    assert config.ruleset.hand_sizes == (4, 5, 6, 5, 4)
    assert [sorted(a) for a in config.ruleset.arrows] == [[1], [1], [0, 1], [0], [0]]
    assert config.ruleset.deck == DEFAULT_RULESET.deck
    with pytest.raises(ConfigError, match="ruleset must be a table"):
        load_config(write(tmp_path / "u.toml", 'ruleset = "short"\n' + TWO_BOTS), NO_OVERRIDES, ())


def test_flags_override_the_file_and_bot_flags_replace_its_bots(tmp_path: Path) -> None:
    path = write(tmp_path / "t.toml", "games = 6\nseed = 3\n" + TWO_BOTS)
    overrides = {"games_per_pairing": 2, "seed": None, "concurrency": 9, "out": Path("o")}
    config = load_config(path, overrides, ("x=builtin:greedy", "y = python y.py"))
    assert config.games_per_pairing == 2  # the flag wins
    assert config.seed == 3  # None: not given, the file's value stays
    assert config.concurrency == 9
    assert config.out == Path("o")  # a flag's path is relative to the working directory
    assert [(b.name, b.command) for b in config.bots] == [
        ("x", "builtin:greedy"),
        ("y", "python y.py"),
    ]


def test_no_config_is_the_demo() -> None:
    config = load_config(None, NO_OVERRIDES, ())
    assert [(b.name, b.command) for b in config.bots] == [
        ("random", "builtin:random"),
        ("greedy", "builtin:greedy"),
        ("search", "builtin:search"),
    ]
    assert (config.games_per_pairing, config.seed, config.concurrency) == (10, 2026, 3)
    assert config.base_dir == Path.cwd() and config.out == Path("tacocat-results")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("games = 3\n" + TWO_BOTS, "games: must be an even number"),
        ("games = '4'\n" + TWO_BOTS, "games must be an integer"),
        ("games = true\n" + TWO_BOTS, "games must be an integer"),
        ("move_timeout = 'fast'\n" + TWO_BOTS, "move_timeout must be a number"),
        ("move_timeout = -1\n" + TWO_BOTS, "move_timeout: must be in [0, 3600]"),
        ("time_bank = -1\n" + TWO_BOTS, "time_bank: must be >= 0"),
        ("grace_ms = -5\n" + TWO_BOTS, "grace_ms: must be >= 0"),
        ("concurrency = 0\n" + TWO_BOTS, "concurrency: must be >= 1"),
        ("seed = -1\n" + TWO_BOTS, "seed: must be an integer in [0, 2**63)"),
        ("max_restarts = -1\n" + TWO_BOTS, "max_restarts: must be >= 0"),
        ("log_limit_kib = 0\n" + TWO_BOTS, "log_limit_kib: must be >= 4, got 0"),
        ("log_limit_kib = 3\n" + TWO_BOTS, "log_limit_kib: must be >= 4, got 3"),
        ("failure_policy = 'retry'\n" + TWO_BOTS, "failure_policy 'retry' must be"),
        ("speed = 3\n" + TWO_BOTS, "unknown key 'speed'"),
        ("games = \n" + TWO_BOTS, "is not valid TOML"),
        (TWO_BOTS + "\n[ruleset]\nmax_rounds = 0\n", "[ruleset] max_rounds"),
        (TWO_BOTS + "\n[ruleset]\ncolour = 'red'\n", "colour: unknown ruleset field"),
        (TWO_BOTS + '\n[[bots]]\nname = "a"\ncommand = "builtin:greedy"\n', "repeated: a"),
        (
            TWO_BOTS + '\n[[bots]]\nname = "c"\ncommand = "x"\nlevel = 3\n',
            "entry 'c': unknown key 'level'",
        ),
        (TWO_BOTS + '\n[[bots]]\nname = "c d"\ncommand = "x"\n', "bot name 'c d'"),
        (TWO_BOTS + '\n[[bots]]\nname = "c"\ncommand = ""\n', "the command is empty"),
        (TWO_BOTS + '\n[[bots]]\nname = "c"\ncommand = "x \'y"\n', "cannot parse command"),
        (TWO_BOTS + '\n[[bots]]\nname = "c"\ncommand = "builtin:x"\n', "unknown 'builtin:x'"),
        ('[[bots]]\nname = "a"\ncommand = "builtin:random"\n', "at least two bots"),
    ],
)
def test_invalid_configs_name_the_problem(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        load_config(write(tmp_path / "t.toml", text), NO_OVERRIDES, ())
    assert message in str(error.value)


def test_missing_config_file_and_bad_bot_flag(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(tmp_path / "nope.toml", NO_OVERRIDES, ())
    with pytest.raises(ConfigError, match="expected NAME=COMMAND"):
        load_config(None, NO_OVERRIDES, ("just-a-name",))
    with pytest.raises(ConfigError, match="even number"):
        load_config(None, {"games_per_pairing": 5}, ())


def test_bot_commands_become_argument_lists(tmp_path: Path) -> None:
    assert BotSpec("a", "builtin:greedy").argv() == [
        sys.executable,
        "-m",
        "example_bots.greedy_bot",
    ]
    assert BotSpec("b", "python bots/b.py --level 'very hard'").argv() == [
        "python",
        "bots/b.py",
        "--level",
        "very hard",
    ]
    launch = Launch(
        identity="b",
        token="t",
        log_path=tmp_path / "b.log",
        cwd=tmp_path,
        mode=SandboxMode.NONE,
        limits=Limits(),
        tcp_address="127.0.0.1:1",
    )
    process = BotProcess(BotSpec("b", "python3 b.py"), launch)
    assert process.argv() == [sys.executable, "b.py"]  # 'python' is the running Python
    assert BotProcess(BotSpec("c", "./c --x"), launch).argv() == ["./c", "--x"]
    assert BotProcess(BotSpec("d", "./d --x", args=("--level", "3")), launch).argv() == [
        "./d",
        "--x",
        "--level",
        "3",
    ]


def test_a_sandboxed_launch_without_its_socket_is_refused(tmp_path: Path) -> None:
    """Not an assert (gone under ``python -O``): without its socket a sandboxed bot would be
    handed the TCP address, a way out of the sandbox."""

    def launch(mode: SandboxMode, socket_path: Path | None = None) -> Launch:
        log = tmp_path / "b.log"
        return Launch("b", "t", log, tmp_path, mode, Limits(), "127.0.0.1:1", socket_path)

    with pytest.raises(ValueError, match="needs its Unix socket"):
        launch(SandboxMode.BWRAP)
    with pytest.raises(ValueError, match="resolve the sandbox mode"):
        launch(SandboxMode.AUTO)
    sandboxed = launch(SandboxMode.BWRAP, tmp_path / "b.sock")
    assert sandboxed.socket_path == tmp_path / "b.sock"


def test_fingerprint_covers_what_decides_the_games() -> None:
    bots = (BotSpec("a", "builtin:random"), BotSpec("b", "builtin:greedy"))
    base = TournamentConfig(bots)
    same = [
        TournamentConfig(bots, concurrency=16),
        TournamentConfig(bots, out=Path("elsewhere")),
        TournamentConfig(bots, connect_timeout_s=5),
        TournamentConfig(bots, max_restarts=0),
        TournamentConfig(bots, grace_ms=500),
    ]
    different = [
        TournamentConfig(bots, seed=2),
        TournamentConfig(bots, games_per_pairing=12),
        TournamentConfig(bots[::-1]),
        TournamentConfig((bots[0], BotSpec("b", "builtin:search"))),
        TournamentConfig(bots, move_timeout_s=2.0),
        TournamentConfig(bots, time_bank_s=1.0),
        TournamentConfig(bots, failure_policy=FailurePolicy.DEFAULT_ACTION),
        TournamentConfig(bots, ruleset=DEFAULT_RULESET.with_overrides({"max_rounds": 9})),
    ]
    assert all(config.fingerprint() == base.fingerprint() for config in same)
    assert len({config.fingerprint() for config in [base, *different]}) == 1 + len(different)
    assert base.describe()["fingerprint"] == base.fingerprint()


# -- storage -----------------------------------------------------------------------------------
def result(game_id: str, seed: int = 1, winner: int | None = 0) -> GameResult:
    reason = "goal" if winner is not None else "round_cap"
    return GameResult(game_id, ("a", "b"), seed, winner, reason, 3, (10, 11), (5.0, 6.5))


def test_fresh_folder_is_claimed_then_refused_without_resume(tmp_path: Path) -> None:
    store = TournamentStore(tmp_path / "out")
    assert store.claim("f1", resume=False) == 0
    assert store.claim("f1", resume=False) == 0  # no games yet: a fresh start is fine
    store.save(result("g1"), "", {"r": 1})
    with pytest.raises(StorageError, match="--resume"):
        store.claim("f1", resume=False)
    assert store.claim("f1", resume=True) == 1
    store.close()


def test_a_folder_with_games_of_another_config_is_refused(tmp_path: Path) -> None:
    store = TournamentStore(tmp_path)
    store.claim("f1", resume=False)
    store.save(result("g1"), "", {})
    for resume in (False, True):
        with pytest.raises(StorageError, match="another tournament"):
            store.claim("f2", resume=resume)
    assert store.claim("f1", resume=True) == 1
    store.close()


def test_a_folder_without_games_is_taken_over_by_a_corrected_config(tmp_path: Path) -> None:
    """A run whose bot failed to start leaves a database without games: fixing the command
    changes the fingerprint, and the next run must not be refused."""
    store = TournamentStore(tmp_path)
    store.claim("f1", resume=False)
    assert store.claim("f2", resume=False) == 0
    store.save(result("g1"), "", {})
    with pytest.raises(StorageError, match="another tournament"):
        store.claim("f1", resume=True)  # now bound to f2
    store.close()


def test_resume_on_an_empty_folder_starts_fresh(tmp_path: Path) -> None:
    store = TournamentStore(tmp_path)
    assert store.claim("f1", resume=True) == 0
    store.close()


def test_saved_games_survive_reopening_and_cannot_be_saved_twice(tmp_path: Path) -> None:
    big_seed = 2**64 - 5  # deal seeds use all 64 bits; SQLite integers are signed
    store = TournamentStore(tmp_path)
    store.claim("f", resume=False)
    store.save(result("g1", seed=big_seed), "a detail", {"seed": big_seed, "actions": []})
    store.save(result("g2", seed=2**63, winner=None), "", {"x": [1, None]})
    store.save(result("g3", seed=7, winner=1), "", {})
    with pytest.raises(sqlite3.IntegrityError):
        store.save(result("g1"), "", {})
    store.close()

    again = TournamentStore(tmp_path)
    assert again.claim("f", resume=True) == 3
    assert again.finished_ids() == {"g1", "g2", "g3"}
    assert again.results() == [
        result("g1", seed=big_seed),
        result("g2", seed=2**63, winner=None),
        result("g3", 7, 1),
    ]
    rows = list(again.rows())
    assert rows[0] == (result("g1", seed=big_seed), "a detail", {"seed": big_seed, "actions": []})
    assert rows[1][2] == {"x": [1, None]}
    again.close()


def test_outputs_of_an_unfinished_tournament_hide_the_seed_and_the_records(tmp_path: Path) -> None:
    import json

    config = TournamentConfig(
        (BotSpec("a", "builtin:random"), BotSpec("b", "builtin:greedy")),
        games_per_pairing=2,
        seed=42,
        out=tmp_path,
    )
    store = TournamentStore(tmp_path)
    store.claim(config.fingerprint(), resume=False)
    store.save(result("a-b-d0"), "", {})
    write_outputs(config, store, complete=False, planned=2)
    metadata = json.loads((tmp_path / "results.json").read_text())["metadata"]
    assert "seed" not in metadata and metadata["complete"] is False
    assert not (tmp_path / "games.jsonl").exists()
    store.save(result("b-a-d0", winner=1), "", {})
    write_outputs(config, store, complete=True, planned=2)
    metadata = json.loads((tmp_path / "results.json").read_text())["metadata"]
    assert metadata["seed"] == 42 and metadata["games_played"] == 2
    lines = (tmp_path / "games.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["a-b-d0", "b-a-d0"]
    store.close()
