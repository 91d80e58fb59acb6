"""``tacocat-arena run`` end to end: the real CLI in a subprocess, real bot processes.

Each test writes a small TOML config into ``tmp_path`` and runs
``python -m tacocat_arena.cli run CONFIG`` from another folder, so the tests also check that
relative paths in a config (the bots' commands, ``out``) mean the config's folder.  What needs
no process of the command's own runs it in this process (``cli_support.invoke_cli``: a
process would only add its half second of start; the bots are still processes): a config
refused before any bot starts, a bot that exits at once or crashes, the resume of a complete
tournament.  One refusal (a missing command) stays a process, as do the small tournament, the
demo, kill -9 and Ctrl-C.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from cli_support import invoke_cli  # tests/ (pytest pythonpath)
from verify_support import assert_verifies

from tacocat_arena.engine import replay
from tacocat_arena.report.tables import STANDINGS_COLUMNS
from tacocat_arena.tournament.schedule import round_robin

TINY_BOT = Path(__file__).parent / "tournament_bots" / "tiny_bot.py"


# -- helpers ---------------------------------------------------------------------------------
def write_config(
    folder: Path,
    bots: dict[str, str],
    *,
    options: dict[str, dict] | None = None,
    **settings: object,
) -> Path:
    """A config file in ``folder`` with ``bots`` (name -> command), per-bot ``options`` (name ->
    keys of its [[bots]] entry, JSON-compatible values) and top-level ``settings``."""
    lines = [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    for name, command in bots.items():
        lines += ["", "[[bots]]", f"name = {json.dumps(name)}", f"command = {json.dumps(command)}"]
        for key, value in (options or {}).get(name, {}).items():
            lines.append(f"{key} = {json.dumps(value)}")
    path = folder / "tournament.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def cli_argv(*args: object) -> list[str]:
    return [sys.executable, "-m", "tacocat_arena.cli", "run", *map(str, args)]


def run_cli(*args: object, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``tacocat-arena run ARGS`` to the end (quiet, wide console so lines don't wrap)."""
    env = dict(os.environ, COLUMNS="300")
    return subprocess.run(
        cli_argv(*args, "--quiet"),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def elsewhere(tmp_path: Path) -> Path:
    """A working directory that is not the config's folder."""
    folder = tmp_path / "elsewhere"
    folder.mkdir(exist_ok=True)
    return folder


def read_games(out: Path) -> list[dict]:
    with open(out / "games.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def read_standings(out: Path) -> tuple[list[str], dict[str, dict[str, str]]]:
    with open(out / "standings.csv", newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
        return list(reader.fieldnames or []), {row["bot"]: row for row in rows}


def db_rows(out: Path) -> dict[str, tuple]:
    """Every committed game row of the tournament database, by game id (read-only)."""
    path = out / "tournament.sqlite"
    if not path.exists():
        return {}
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        # Columns by name (the store gains columns: fallbacks0/1): id, seats, seed, the
        # record and when it was committed.
        query = "SELECT game_id, seat0, seat1, seed, record, finished_at FROM games"
        return {row[0]: row for row in db.execute(query)}
    except sqlite3.OperationalError:  # the table is not created yet
        return {}
    finally:
        db.close()


def finished_pairs(rows: dict[str, tuple]) -> tuple[set[str], str | None]:
    """Ids of the games of every duplicate pair both of whose games are committed (seed in
    column 3, seats in 1 and 2), and the id of the last game committed."""
    pairs: dict[tuple[int, tuple[str, ...]], list[str]] = {}
    for game_id, row in rows.items():
        pairs.setdefault((row[3], tuple(sorted(row[1:3]))), []).append(game_id)
    done = {game_id for ids in pairs.values() if len(ids) == 2 for game_id in ids}
    last = max(rows.values(), key=lambda row: row[5])[0] if rows else None
    return done, last


def check_games_log(out: Path, rows: dict[str, tuple]) -> None:
    """games.jsonl of an interrupted tournament holds each finished pair once, nothing else
    (kill -9 may land between a pair's second commit and its append: that last pair alone
    may be missing, and --resume appends it)."""
    lines = read_games(out) if (out / "games.jsonl").exists() else []
    ids = [line["id"] for line in lines]
    assert len(ids) == len(set(ids))  # never a line twice
    done, last = finished_pairs(rows)
    missing = done - set(ids)
    assert set(ids) <= done  # no game whose twin (same deal, seats swapped) is not played
    assert not missing or last in missing and len(missing) == 2, (missing, last)
    for line in lines:
        assert json.loads(rows[line["id"]][4]) == line["record"]


def processes_with(token: str) -> list[int]:
    """Pids of live processes whose command line contains ``token`` (Linux /proc)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if token.encode() in cmdline:
            pids.append(int(entry))
    return pids


def wait_no_processes(token: str, timeout: float = 15.0) -> list[int]:
    """Wait for every process tagged ``token`` to exit; return (and kill) those left."""
    deadline = time.monotonic() + timeout
    while (left := processes_with(token)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return left


def check_complete_outputs(
    out: Path, bots: list[str], games_per_pairing: int, seed: int
) -> list[dict]:
    """Check every output file of a finished tournament against the plan and each other.

    The deals are re-derived from the config seed and the secret that results.json publishes
    once the tournament is complete: anyone can verify them afterwards."""
    secret = json.loads((out / "results.json").read_text())["metadata"]["deal_secret"]
    assert len(secret) == 32
    plan = round_robin(bots, games_per_pairing, seed, secret=secret)
    assert {g.seed for g in plan}.isdisjoint(
        g.seed for g in round_robin(bots, games_per_pairing, seed, secret="")
    )
    pairings = len(bots) * (len(bots) - 1) // 2
    games = read_games(out)
    assert_verifies(out)  # every game, line and the plan, as `tacocat-arena verify` checks

    # games.jsonl: every planned game exactly once, with the planned seats and seed.
    assert len(games) == len(plan) == pairings * games_per_pairing
    ids = Counter(game["id"] for game in games)
    assert set(ids) == {planned.game_id for planned in plan}
    assert all(count == 1 for count in ids.values())
    by_id = {planned.game_id: planned for planned in plan}
    for game in games:
        planned = by_id[game["id"]]
        assert tuple(game["seats"]) == planned.seats
        assert game["seed"] == planned.seed
        record = game["record"]
        assert record["seed"] == planned.seed
        if "unplayed" in record:  # a bot past its restarts: the game was never dealt
            continue
        replayed = replay(record)  # raises RecordError if the record does not check out
        assert replayed.outcome is not None
        assert replayed.outcome.winner == game["winner"]
        assert replayed.outcome.termination.value == game["reason"]
        assert record["result"] == game["result"] == replayed.outcome.result()

    # standings.csv: the columns, and every count recomputed from games.jsonl.
    columns, standings = read_standings(out)
    assert (
        columns
        == list(STANDINGS_COLUMNS)
        == [
            "rank",
            "bot",
            "games",
            "wins",
            "losses",
            "draws",
            "score",
            "elo",
            "elo_err",
            "forfeits",
            "errors",
            "mean_decision_ms",
        ]
    )
    assert set(standings) == set(bots)
    tally = {bot: Counter() for bot in bots}
    cross = {a: {b: Counter() for b in bots if b != a} for a in bots}
    for game in games:
        for seat, bot in enumerate(game["seats"]):
            opponent = game["seats"][1 - seat]
            outcome = (
                "draws"
                if game["winner"] is None
                else ("wins" if game["winner"] == seat else "losses")
            )
            tally[bot][outcome] += 1
            cross[bot][opponent][outcome] += 1
            forfeited = game["reason"] in {"timeout", "illegal_action", "disconnect", "crash"}
            if forfeited and game["winner"] == 1 - seat:
                tally[bot]["forfeits"] += 1
    for bot in bots:
        row = standings[bot]
        assert int(row["games"]) == (len(bots) - 1) * games_per_pairing
        for key in ("wins", "losses", "draws", "forfeits"):
            assert int(row[key]) == tally[bot][key], (bot, key)
        assert int(row["wins"]) + int(row["losses"]) + int(row["draws"]) == int(row["games"])
        assert float(row["score"]) == tally[bot]["wins"] + 0.5 * tally[bot]["draws"]
        assert row["elo"] and row["elo_err"]
    assert sum(int(r["wins"]) for r in standings.values()) == sum(
        int(r["losses"]) for r in standings.values()
    )
    assert sum(int(r["games"]) for r in standings.values()) == 2 * len(plan)
    by_score = sorted(bots, key=lambda bot: -float(standings[bot]["score"]))
    ranks = [int(standings[bot]["rank"]) for bot in by_score]
    assert ranks == sorted(ranks)

    # crosstable.csv: each cell is the row bot's w-l-d against the column bot.
    with open(out / "crosstable.csv", newline="", encoding="utf-8") as handle:
        table = list(csv.reader(handle))
    assert table[0] == ["bot", *bots, "score"]
    assert [line[0] for line in table[1:]] == bots
    for line in table[1:]:
        row_bot = line[0]
        for col_bot, cell in zip(bots, line[1:-1], strict=True):
            if col_bot == row_bot:
                assert cell == ""
                continue
            c = cross[row_bot][col_bot]
            points = c["wins"] + 0.5 * c["draws"]
            text = str(int(points)) if points.is_integer() else f"{points:.1f}"
            assert cell == f"{c['wins']}-{c['losses']}-{c['draws']} ({text})"
        assert float(line[-1]) == float(standings[row_bot]["score"])

    # results.json and report.md: complete, and about every bot.
    results = json.loads((out / "results.json").read_text())
    assert results["metadata"]["complete"] is True
    assert results["metadata"]["games_planned"] == results["metadata"]["games_played"] == len(plan)
    assert results["metadata"]["seed"] == seed
    assert {row["bot"] for row in results["standings"]} == set(bots)
    for row in results["standings"]:
        assert row["wins"] == tally[row["bot"]]["wins"]
    report = (out / "report.md").read_text()
    for bot in bots:
        assert bot in report
    return games


# -- a small tournament ----------------------------------------------------------------------
@pytest.mark.slow
def test_small_tournament_outputs_agree_with_the_plan_and_each_other(tmp_path: Path) -> None:
    shutil.copy(TINY_BOT, tmp_path / "tiny_bot.py")  # run by a path relative to the config
    bots = {"rnd": "builtin:random", "greedy": "builtin:greedy", "tiny": "python tiny_bot.py"}
    config = write_config(tmp_path, bots, games=4, seed=7, concurrency=4, out="results")

    done = run_cli(config, cwd=elsewhere(tmp_path))

    assert done.returncode == 0, done.stderr
    out = tmp_path / "results"  # relative to the config's folder, not the working directory
    names = {p.name for p in out.iterdir()} - {"tournament.sqlite-wal", "tournament.sqlite-shm"}
    assert names == {
        "standings.csv",
        "crosstable.csv",
        "games.jsonl",
        "results.json",
        "report.md",
        "report.html",
        "commitment.json",
        "replays",
        "tournament.sqlite",
        "logs",
    }
    games = check_complete_outputs(out, list(bots), games_per_pairing=4, seed=7)
    assert len(games) == 12
    assert all(game["reason"] in {"goal", "round_cap"} for game in games), [
        (g["id"], g["reason"], g["detail"]) for g in games
    ]
    # Two processes per bot (twins): A plays the first game of each duplicate pair, B the other.
    logs = sorted(p.name for p in (out / "logs").iterdir())
    assert logs == ["greedy.log", "greedy~B.log", "rnd.log", "rnd~B.log", "tiny.log", "tiny~B.log"]
    assert "12 games played" in done.stdout
    assert len(db_rows(out)) == 12


@pytest.mark.slow
def test_demo_tournament_runs_without_a_config(tmp_path: Path) -> None:
    """The demo's bots and seed (no config), with 2 games a pairing instead of its 10: what
    is checked is that the demo config is found and played to complete outputs, which holds
    for any number of games (its settings are test_newcomer_cli's
    test_the_docs_quote_the_demo_configs_real_settings); the search bot's 10 games a pairing
    were most of this test's CPU."""
    done = run_cli("--games", 2, "--out", tmp_path / "demo", cwd=tmp_path, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "Tournament: 3 bots (random, greedy, search), 2 games per pairing" in done.stdout
    check_complete_outputs(tmp_path / "demo", ["random", "greedy", "search"], 2, 2026)


# -- kill -9 and --resume --------------------------------------------------------------------
@pytest.mark.slow
def test_kill_9_then_resume_plays_each_planned_game_exactly_once(tmp_path: Path) -> None:
    token = f"tacocat-test-{uuid.uuid4().hex}"  # in every bot's command line, to find them
    bots = {
        "rnd": f"python -m example_bots.random_bot {token}",
        "greedy": f"python -m example_bots.greedy_bot {token}",
    }
    # 20 games: the 10 first games of the pairs (instances A), then their twins (B); the kill
    # comes at the first finished pair, in B's half, with most of it still to play.
    config = write_config(tmp_path, bots, games=20, seed=11, concurrency=2, out="out")
    out = tmp_path / "out"
    cwd = elsewhere(tmp_path)
    plan = round_robin(list(bots), 20, 11, secret="")

    cli = subprocess.Popen(
        cli_argv(config, "--quiet"),
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        # Twins play a batch's first games, then its second ones: kill once a pair is done.
        while not finished_pairs(db_rows(out))[0]:
            assert cli.poll() is None, "the tournament ended before it could be killed"
            assert time.monotonic() < deadline, "no duplicate pair was committed within 120 s"
            time.sleep(0.02)
    finally:
        os.killpg(cli.pid, signal.SIGKILL)
        cli.wait()
    # The bots run in their own sessions: they must notice the broken stream and exit.
    assert wait_no_processes(token) == [], "bot processes outlived the killed tournament"

    before = db_rows(out)
    assert 3 <= len(before) < len(plan)
    assert set(before) <= {planned.game_id for planned in plan}
    check_games_log(out, before)  # every finished duplicate pair, appended as it finished
    assert finished_pairs(before)[0], "no duplicate pair finished before the kill"

    # The refusals need no process of their own (refused before any bot starts).
    refused = invoke_cli("run", config, "--quiet", cwd=cwd)
    assert refused.returncode != 0
    assert "--resume" in refused.stderr and "already holds" in refused.stderr

    other = invoke_cli("run", config, "--seed", 12, "--resume", "--quiet", cwd=cwd)
    assert other.returncode != 0
    assert "another tournament" in other.stderr
    assert db_rows(out) == before  # the refused runs changed nothing

    resumed = run_cli(config, "--resume", cwd=cwd)
    assert resumed.returncode == 0, resumed.stderr
    assert f"({len(before)} were already done)" in resumed.stdout
    after = db_rows(out)
    assert len(after) == len(plan)
    assert set(after) == {planned.game_id for planned in plan}
    for game_id, row in before.items():
        assert after[game_id] == row  # games committed before the kill are untouched
    check_complete_outputs(out, list(bots), 20, 11)
    assert wait_no_processes(token) == []

    # Resuming a complete tournament plays nothing and rewrites the same tables (in process:
    # no bot starts).
    again = invoke_cli("run", config, "--resume", "--quiet", cwd=cwd)
    assert again.returncode == 0, again.stderr
    assert db_rows(out) == after


@pytest.mark.slow
def test_ctrl_c_saves_the_finished_games_and_says_how_to_resume(tmp_path: Path) -> None:
    token = f"tacocat-test-{uuid.uuid4().hex}"
    bots = {
        "rnd": f"python -m example_bots.random_bot {token}",
        "greedy": f"python -m example_bots.greedy_bot {token}",
    }
    config = write_config(tmp_path, bots, games=20, seed=5, concurrency=2, out="out")
    out = tmp_path / "out"
    cli = subprocess.Popen(
        cli_argv(config, "--quiet"),
        cwd=elsewhere(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, COLUMNS="300"),
        start_new_session=True,
        # A shell may start background jobs with SIGINT ignored; Ctrl-C needs the default.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 120
        while not finished_pairs(db_rows(out))[0]:  # the first pair ends in the second half
            assert cli.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        cli.send_signal(signal.SIGINT)
        stdout, stderr = cli.communicate(timeout=30)
    finally:
        if cli.poll() is None:
            os.killpg(cli.pid, signal.SIGKILL)
    assert cli.returncode == 130, stderr
    saved = len(db_rows(out))
    assert f"Interrupted. {saved} finished games are saved" in stdout
    assert "--resume" in stdout
    assert wait_no_processes(token) == []  # the bots were stopped
    metadata = json.loads((out / "results.json").read_text())["metadata"]
    assert metadata["complete"] is False and "seed" not in metadata  # not revealed yet
    assert metadata["games_played"] == saved and metadata["games_planned"] == 20
    rows = db_rows(out)
    check_games_log(out, rows)
    assert len(read_games(out)) == len(finished_pairs(rows)[0])  # Ctrl-C: nothing missing
    assert "not complete" in assert_verifies(out).unchecked  # its plan: not yet checkable

    resumed = run_cli(config, "--resume", cwd=elsewhere(tmp_path))
    assert resumed.returncode == 0, resumed.stderr
    check_complete_outputs(out, list(bots), 20, 5)


# -- broken bots -----------------------------------------------------------------------------
@pytest.mark.slow
def test_missing_bot_command_is_a_clear_error(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {"ghost": "no-such-bot-command --fast", "good": "builtin:random"},
        games=2,
        out="out",
    )
    done = run_cli(config, cwd=elsewhere(tmp_path))
    assert done.returncode != 0
    assert "ghost" in done.stderr and "command not found" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_bot_that_exits_at_once_is_a_clear_error_with_its_stderr(tmp_path: Path) -> None:
    """The command in process (``invoke_cli``): what is checked is its message and that the
    folder is left usable; the bots are processes."""
    command = "python -c \"import sys; print('boom', file=sys.stderr); sys.exit(3)\""
    config = write_config(tmp_path, {"good": "builtin:random", "dud": command}, games=2, out="out")
    done = invoke_cli("run", config, "--quiet", cwd=elsewhere(tmp_path))
    assert done.returncode != 0
    assert "'dud'" in done.stderr
    assert "exited with code 3" in done.stderr
    assert "boom" in done.stderr  # the tail of the bot's log
    assert "Traceback" not in done.stderr

    # The failed start played no game, so the corrected config may use the same folder.
    config = write_config(
        tmp_path, {"good": "builtin:random", "dud": "builtin:greedy"}, games=2, out="out"
    )
    fixed = invoke_cli("run", config, "--quiet", cwd=elsewhere(tmp_path))
    assert fixed.returncode == 0, fixed.stderr
    assert len(read_games(tmp_path / "out")) == 2


@pytest.mark.slow
def test_bot_that_crashes_mid_tournament_is_restarted(tmp_path: Path) -> None:
    """The command in process (``invoke_cli``), the bots processes: the crash and restart are
    the bot's."""
    shutil.copy(TINY_BOT, tmp_path / "tiny_bot.py")
    bots = {
        "greedy": "builtin:greedy",
        # Crashes in its 13th decision, once: the flag file stops the restarted process from
        # crashing again.  An instance plays 3 games, at most 2 at once, of about 18 decisions
        # each: the 13th comes within the first two, so a third game always needs the restart
        # (at the 31st, under load the crash could come in an instance's last game and no
        # restart followed: seen as "start #2" in neither log).
        "crashy": "python tiny_bot.py --crash-after 12 --crash-flag crashed.flag",
    }
    # The bot writes its flag into its folder: read-only in the sandbox unless it says so.
    writable = {"crashy": {"writable_dir": True}}
    tmp_path.chmod(0o777)  # and a root runner's bot is uid 65534 (sandbox.unreachable_by_bot)
    config = write_config(
        tmp_path, bots, options=writable, games=6, seed=3, concurrency=2, out="out"
    )
    done = invoke_cli("run", config, "--quiet", cwd=elsewhere(tmp_path), env={"COLUMNS": "300"})
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    assert (tmp_path / "crashed.flag").exists()  # the bot's cwd is the config's folder
    games = check_complete_outputs(out, list(bots), 6, 3)
    crashed = [game for game in games if game["reason"] == "crash"]
    assert crashed, [(g["id"], g["reason"]) for g in games]
    for game in crashed:
        seat = game["seats"].index("crashy")
        assert game["winner"] == 1 - seat
        assert "crashy" in game["detail"]
        assert "exited with code 1" in game["detail"]  # how the process ended
        assert game["rounds"] >= 1  # a game in progress, not an unplayed one
    assert sum(game["reason"] == "goal" for game in games) >= 1
    # One of its two instances (A plays first games of pairs, B their twins) crashed once.
    logs = [(out / "logs" / f"{name}.log").read_text() for name in ("crashy", "crashy~B")]
    assert sum("--- start #2" in log for log in logs) == 1
    assert not any("--- start #3" in log for log in logs)
    assert sum(log.count("--- exited with code 1") for log in logs) == 1
    assert "exited with code 1" in done.stdout  # and the run's summary says so


# -- invalid configs -------------------------------------------------------------------------
BOTS = {"a": "builtin:random", "b": "builtin:greedy"}


@pytest.mark.parametrize(
    ("settings", "extra", "args", "message"),
    [
        ({}, "", ["--games", 3], "games: must be an even number"),
        ({"games": 5}, "", [], "games: must be an even number"),
        ({"gmaes": 4}, "", [], "unknown key 'gmaes'"),
        ({}, '[[bots]]\nname = "a"\ncommand = "builtin:search"\n', [], "repeated: a"),
        ({}, "[ruleset]\nmax_rounds = 0\n", [], "max_rounds"),
        ({}, "[ruleset]\ncolour = 1\n", [], "colour: unknown ruleset field"),
        ({"failure_policy": "retry"}, "", [], "failure_policy 'retry'"),
        ({}, '[[bots]]\nname = "c"\ncommand = "builtin:genius"\n', [], "unknown 'builtin:genius'"),
    ],
    ids=[
        "odd-games-flag",
        "odd-games",
        "unknown-key",
        "duplicate-name",
        "bad-ruleset-value",
        "unknown-ruleset-field",
        "bad-failure-policy",
        "unknown-builtin",
    ],
)
def test_invalid_config_is_refused_with_a_message(
    tmp_path: Path, settings: dict, extra: str, args: list, message: str
) -> None:
    config = write_config(tmp_path, BOTS, out="out", **settings)
    config.write_text(config.read_text() + "\n" + extra)
    done = invoke_cli("run", config, *args, "--quiet", cwd=elsewhere(tmp_path))
    assert done.returncode != 0
    assert message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()  # refused before anything was written
