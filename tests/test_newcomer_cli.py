"""What a newcomer trips over, through the real CLI in a subprocess (issue 14).

Each test is one thing that went wrong for a new user, run as they ran it: a clear
``Error:`` line instead of a traceback, nothing left behind by a refused command, tables that
say what they mean.  What needs no process of its own (a refusal before any bot starts, a
match whose records are checked) runs the command in this process (``in_process``, Click's
runner: a process adds half a second of CPU to start); what a process alone shows (a
terminal's width, a bot's output on the command's own, a signal) runs it as one (``arena``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import invoke_cli  # tests/ (pytest pythonpath)
from verify_support import assert_verifies


def arena(
    *args: object, cwd: Path, timeout: float = 120, **env: str
) -> subprocess.CompletedProcess[str]:
    """``tacocat-arena ARGS`` in a subprocess, output captured (so stdout is not a terminal)."""
    environment = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", *map(str, args)],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def in_process(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``tacocat-arena ARGS`` in this process in ``cwd``, as ``arena`` would run it."""
    return invoke_cli(*args, cwd=cwd, env={"COLUMNS": None})


@pytest.mark.slow
def test_serve_on_a_port_in_use_is_a_one_line_error(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text('alice = "alice-secret"\nbob = "bob-secret-1"\n')
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = arena("serve", "--port", port, "--tokens", tokens, "--wait", 1, cwd=tmp_path)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert f"Error: cannot listen on 127.0.0.1:{port}: the port is already in use" in done.stderr


def test_a_second_referee_on_the_same_port_is_refused_not_sharing_it() -> None:
    import asyncio

    from tacocat_arena.referee import ListenError, Referee, RefereeSettings, start_server

    async def scenario() -> None:
        first, port = await start_server(Referee({}, RefereeSettings()), "127.0.0.1", 0)
        try:
            with pytest.raises(ListenError, match=f"127.0.0.1:{port}"):
                await start_server(Referee({}, RefereeSettings()), "127.0.0.1", port)
        finally:
            await first.stop(None)

    asyncio.run(scenario())


# -- point 10: config messages name the key, the entry and the file ------------------------
BOTS_TOML = '[[bots]]\nname = "a"\ncommand = "builtin:random"\n\n[[bots]]\nname = "b"\n'


@pytest.mark.parametrize(
    ("text", "args", "message"),
    [
        (
            BOTS_TOML + 'command = "builtin:greedy"\noptions = "--fast"\n',
            [],
            "tournament.toml: [[bots]] entry 'b': unknown key 'options'; a bot has name and "
            "command",
        ),
        (
            "games = 2.0\n" + BOTS_TOML + 'command = "builtin:greedy"\n',
            [],
            "tournament.toml: games must be a whole number written without a decimal point "
            "(e.g. games = 2), got 2.0",
        ),
        (
            BOTS_TOML
            + 'command = "builtin:greedy"\n[ruleset]\nhand_sizes = [1, 3, 4, 5, 4, 3, 2]\n',
            [],
            "tournament.toml [ruleset] hand_sizes[0] (space 1): must be >= 2",
        ),
        (
            "move_timeout = -1\n" + BOTS_TOML + 'command = "builtin:greedy"\n',
            [],
            "tournament.toml: move_timeout: must be",
        ),
        (
            BOTS_TOML + 'command = "builtin:greedy"\n',
            ["--time-bank", "-2"],
            "time_bank: must be >= 0 seconds, got -2.0 (from --time-bank)",
        ),
        (
            BOTS_TOML + 'command = "builtin:genius"\n',
            [],
            "tournament.toml: bot 'b': unknown 'builtin:genius'",
        ),
    ],
    ids=["extra-bot-key", "float-games", "hand-sizes-from-0", "negative-timeout", "flag", "bot"],
)
def test_config_errors_name_the_file_the_key_and_the_entry(
    tmp_path: Path, text: str, args: list[object], message: str
) -> None:
    (tmp_path / "tournament.toml").write_text('out = "out"\n' + text)
    done = in_process("run", "tournament.toml", "--quiet", *args, cwd=tmp_path)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert message in " ".join(done.stderr.split()), done.stderr
    assert not (tmp_path / "out").exists()


# -- point 9: a refused command leaves nothing behind ---------------------------------------
def test_play_with_an_unknown_bot_fails_before_any_progress_or_folder(tmp_path: Path) -> None:
    done = in_process("play", "random", "nosuch", cwd=tmp_path)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "'nosuch' is neither an example bot (random, greedy, search" in done.stderr
    assert "games" not in done.stdout and "Tournament" not in done.stdout  # no progress bar
    assert list(tmp_path.iterdir()) == []  # no tacocat-results/matches/<ts>/


def test_run_with_a_missing_command_fails_before_writing_anything(tmp_path: Path) -> None:
    done = in_process(
        "run",
        "--bot",
        "a=builtin:random",
        "--bot",
        "b=nosuch-bot --fast",
        "--out",
        "out",
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert "bot 'b': command not found: 'nosuch-bot'" in done.stderr
    assert done.stdout == ""
    assert list(tmp_path.iterdir()) == []


# -- point 4: no clock, and a debug mode -----------------------------------------------------
SLOW_BOT = """
import sys, time
from tacocat_bot import Bot, run

class Slow(Bot):
    name = "slow"
    duels = 0

    def duel(self, view):
        self.duels += 1
        if self.duels == 1:  # far past the config's 0.2 s clock
            print("slow bot: thinking hard", file=sys.stderr, flush=True)
            time.sleep(1.0)
        return view.hand[0]

run(Slow())
"""


@pytest.mark.slow
def test_debug_mode_has_no_clock_plays_one_game_at_a_time_and_shows_the_bots_output(
    tmp_path: Path,
) -> None:
    (tmp_path / "slow.py").write_text(SLOW_BOT)
    (tmp_path / "t.toml").write_text(
        'move_timeout = 0.2\nconcurrency = 4\ngames = 2\nout = "out"\n'
        '[[bots]]\nname = "slow"\ncommand = "python slow.py"\n'
        '[[bots]]\nname = "greedy"\ncommand = "builtin:greedy"\n'
    )
    done = arena("run", "t.toml", "--debug", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "concurrency 1, no clock" in " ".join(done.stdout.split())
    assert "slow bot: thinking hard" in done.stdout + done.stderr  # on the terminal ...
    assert "thinking hard" not in (tmp_path / "out" / "logs" / "slow.log").read_text()  # not log
    assert "game 1/2: slow-greedy-d0" in done.stdout and "game 2/2:" in done.stdout
    assert "by timeout" not in done.stdout
    assert_verifies(tmp_path / "out")  # the records state the clock the games had: none


@pytest.mark.slow
def test_move_timeout_0_means_no_limit(tmp_path: Path) -> None:
    done = in_process(
        "play",
        "random",
        "greedy",
        "--games",
        "2",
        "--move-timeout",
        "0",
        "--out",
        "out",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "concurrency 4, no clock" in " ".join(done.stdout.split())
    assert_verifies(tmp_path / "out")


# -- points 5 and 6: SIGTERM is Ctrl-C; partial tables say so ------------------------------
@pytest.mark.slow
def test_sigterm_saves_partial_tables_and_says_how_to_resume(tmp_path: Path) -> None:
    import json
    import signal
    import time
    import uuid

    from test_tournament_cli import db_rows, wait_no_processes

    token = f"tacocat-test-{uuid.uuid4().hex}"
    (tmp_path / "t.toml").write_text(
        'games = 40\nseed = 5\nconcurrency = 2\nout = "out"\n'
        f'[[bots]]\nname = "rnd"\ncommand = "python -m example_bots.random_bot {token}"\n'
        f'[[bots]]\nname = "greedy"\ncommand = "python -m example_bots.greedy_bot {token}"\n'
    )
    out = tmp_path / "out"
    cli = subprocess.Popen(
        [sys.executable, "-m", "tacocat_arena.cli", "run", "t.toml", "--quiet"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while len(db_rows(out)) < 2:
            assert cli.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        cli.send_signal(signal.SIGTERM)
        stdout, stderr = cli.communicate(timeout=30)
    finally:
        if cli.poll() is None:
            os.killpg(cli.pid, signal.SIGKILL)
    assert cli.returncode == 143, stderr
    assert "Traceback" not in stderr
    saved = len(db_rows(out))
    assert f"Interrupted (SIGTERM). {saved} finished games are saved" in " ".join(stdout.split())
    said = " ".join(stdout.split())
    # The command as typed (its options make the tournament), --out the folder it used.
    assert f"Resume with: tacocat-arena run t.toml --quiet --out {out} --resume" in said
    assert f"Standings (partial: {saved} of 40 games)" in said
    assert wait_no_processes(token) == []  # the bots were stopped
    assert json.loads((out / "results.json").read_text())["metadata"]["complete"] is False
    assert f"**Partial**: {saved} of 40 planned games" in (out / "report.md").read_text()
    assert "not complete" in assert_verifies(out).unchecked


# -- point 13: tables explained, not wrapped when stdout is a file ------------------------
@pytest.mark.slow
def test_tables_have_a_legend_and_do_not_wrap_when_stdout_is_not_a_terminal(
    tmp_path: Path,
) -> None:
    one, two = "a_really_long_bot_name_number_one", "another_long_bot_name_number_two"
    done = arena(
        "run",
        "--bot",
        f"{one}=builtin:random",
        "--bot",
        f"{two}=builtin:greedy",
        "--games",
        "2",
        "--out",
        "out",
        "--quiet",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert f"Tournament: 2 bots ({one}, {two}), 2 games per pairing" in lines[0]
    assert_verifies(tmp_path / "out")
    rows = [line for line in lines if line.startswith("│")]
    assert len(rows) == 5  # two standings rows, two crosstable rows, one pair row; unwrapped
    assert all(line.rstrip().endswith("│") and (one in line or two in line) for line in rows)
    assert max(map(len, lines)) > 80
    legend = " ".join(done.stdout.split())
    assert "Forf: games lost by forfeit" in legend
    assert "ms/dec: mean time per decision" in legend
    assert "0-10-0 (0) is ten losses" in legend
    assert "LOS: how likely A is the stronger" in legend
    assert lines[-2].startswith("2 games played in") and lines[-2].endswith("report.html")
    assert lines[-1] == f"Open the report in a browser: {Path('out') / 'report.html'}"


# -- point 15: --strict makes a bot's exception fatal ---------------------------------------
@pytest.mark.slow
def test_strict_stops_a_bot_at_its_first_exception(tmp_path: Path) -> None:
    (tmp_path / "buggy.py").write_text(
        "from tacocat_bot import Bot, run\n\n"
        "class Buggy(Bot):\n"
        "    def duel(self, view):\n"
        "        raise KeyError('no such card')\n\n"
        "run(Buggy())\n"
    )
    done = in_process(
        "play",
        "python buggy.py",
        "greedy",
        "--games",
        "2",
        "--strict",
        "--out",
        "out",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    import json

    games = [json.loads(line) for line in (tmp_path / "out" / "games.jsonl").open()]
    assert [game["reason"] for game in games] == ["crash", "crash"]
    assert_verifies(tmp_path / "out")
    log = (tmp_path / "out" / "logs" / "buggy.log").read_text()
    assert "KeyError: 'no such card'" in log and "played duel" not in log


# -- point 14: the search bot's ms/decision is measured, not guessed ------------------------
@pytest.mark.slow
def test_bench_search_prints_ms_per_decision_by_kind(tmp_path: Path) -> None:
    done = in_process("bench", "search", "--games", "2", "--budget", "10", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "search bot, budget 10, 2 games against greedy (in process)"
    table = {line.split()[0]: line.split()[1:] for line in lines[2:] if line[:1].isalpha()}
    assert {"duel", "all"} <= set(table)  # every game has duels
    decisions = int(table["all"][0])
    assert decisions == sum(
        int(row[0]) for kind, row in table.items() if kind not in ("all", "load")
    )
    assert float(table["all"][1]) > 0


# -- point 12: the README's own example works as written -----------------------------------
@pytest.mark.slow
def test_the_readmes_bot_example_runs_as_written_with_the_venvs_command(tmp_path: Path) -> None:
    import shlex

    repo = Path(__file__).resolve().parent.parent
    readme = (repo / "README.md").read_text()
    block = readme.split("# your bot against the examples")[1].split("```")[0]
    commands = [shlex.split(line) for line in block.replace("\\\n", " ").splitlines()[1:]]
    commands = [words for words in commands if words and not words[0].startswith("#")]
    assert [words[0] for words in commands] == ["cp", ".venv/bin/tacocat-arena"]
    (tmp_path / "example_bots").symlink_to(repo / "example_bots")
    subprocess.run(commands[0], cwd=tmp_path, check=True)
    run = commands[1][1:]
    run[run.index("--games") + 1] = "2"  # the same command, fewer games
    done = arena(*run, "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Tournament: 3 bots (mine, greedy, search)" in done.stdout


def test_the_docs_quote_the_demo_configs_real_settings() -> None:
    import tomllib

    repo = Path(__file__).resolve().parent.parent
    demo = tomllib.loads((repo / "server/tacocat_arena/data/demo.toml").read_text())
    tournaments = (repo / "docs/tournaments.md").read_text()
    demo_row = next(line for line in tournaments.splitlines() if "data/demo.toml`" in line)
    for key in ("games", "seed", "concurrency", "move_timeout"):
        assert f"`{key} = {demo[key]}`" in demo_row, key
    assert f"`concurrency = {demo['concurrency']}`" in tournaments.split("--bot` without")[1]
    sdk = " ".join((repo / "docs/sdk.md").read_text().split())
    assert f"{demo['move_timeout']:g} s in the demo config" in sdk
