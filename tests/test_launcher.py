"""One launcher: what passes ``check`` plays in ``run``, from any folder, in the same sandbox.

A bot's folder is its ``dir``, else the folder of the file its command names, else the
config's folder (launch/folder.py); a command naming a path the sandbox will not show is
refused before any game, naming the path, the sandbox and both fixes.  The CLI runs in a
subprocess, started from a folder other than the bot's, as a newcomer starts it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tacocat_arena.launch import folder, sandbox
from tacocat_arena.launch.builtins import builtins_folder
from tacocat_arena.launch.sandbox import SandboxMode
from tacocat_arena.launch.spec import BotSpec

REPO_ROOT = Path(__file__).resolve().parents[1]
GREEDY = REPO_ROOT / "example_bots" / "greedy_bot.py"
NODE_DIR = REPO_ROOT / "example_bots" / "node"

needs_bwrap = pytest.mark.skipif(
    sandbox.bwrap_path() is None, reason="bubblewrap (bwrap) is not installed or cannot run here"
)


def _cli(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _bot_elsewhere(tmp_path: Path) -> tuple[Path, Path]:
    """A Python bot in a folder of its own, and another folder to start the CLI from."""
    bot_dir = tmp_path / "bots" / "mine"
    bot_dir.mkdir(parents=True)
    shutil.copy(GREEDY, bot_dir / "mine.py")
    start = tmp_path / "elsewhere"
    start.mkdir()
    return bot_dir / "mine.py", start


# -- the folder rule ---------------------------------------------------------------------------
@pytest.mark.slow
def test_a_command_naming_a_file_elsewhere_runs_in_that_files_folder(tmp_path: Path) -> None:
    script, start = _bot_elsewhere(tmp_path)
    placed = folder.place(BotSpec("mine", "python ../bots/mine/mine.py --fast"), start)
    assert placed.folder == script.parent
    assert placed.argv == ("python", str(script), "--fast")  # its paths made absolute
    data = script.parent / "data.txt"
    data.write_text("x")
    venv_python = tmp_path / "venv" / "bin" / "python"  # a link, as a venv's is
    venv_python.parent.mkdir(parents=True)
    venv_python.symlink_to(sys.executable)
    command = f"{venv_python} ../bots/mine/mine.py --data=../bots/mine/data.txt"
    placed = folder.place(BotSpec("mine", command), start)
    assert placed.folder == script.parent
    # The link is kept (resolved, it would be the base Python, without the venv's packages),
    # and an option keeps its name.
    assert placed.argv == (str(venv_python), str(script), f"--data={data}")


def test_a_given_dir_or_a_file_in_the_base_folder_keeps_the_command(tmp_path: Path) -> None:
    script, start = _bot_elsewhere(tmp_path)
    given = BotSpec("mine", "python ../bots/mine/mine.py", dir=start)
    assert folder.place(given, start) == folder.Placement(start, ("python", "../bots/mine/mine.py"))
    here = folder.place(BotSpec("mine", "python mine.py"), script.parent)
    assert here == folder.Placement(script.parent, ("python", "mine.py"))
    builtin = folder.place(BotSpec("greedy", "builtin:greedy"), start)
    assert builtin.folder == builtins_folder()  # never the organizer's current folder
    assert builtin.folder in sandbox.code_paths()  # code every sandbox mounts anyway
    mine = folder.place(BotSpec("greedy", "builtin:greedy", dir=start), start)
    assert mine.folder == start  # a dir given is the dir
    writable = BotSpec("greedy", "builtin:greedy", writable_dir=True)
    with pytest.raises(folder.FolderError, match="writable_dir .* a built-in without a dir"):
        folder.preflight(writable, folder.place(writable, start), SandboxMode.BWRAP)


def test_preflight_names_the_path_the_sandbox_and_both_fixes(tmp_path: Path) -> None:
    script, start = _bot_elsewhere(tmp_path)
    spec = BotSpec("mine", "python ../bots/mine/mine.py", dir=start)
    placed = folder.place(spec, start)
    with pytest.raises(folder.FolderError) as caught:
        folder.preflight(spec, placed, SandboxMode.BWRAP)
    message = str(caught.value)
    assert str(script) in message and "sandbox (bwrap)" in message
    assert f'dir = "{tmp_path}"' in message and "--sandbox none" in message
    folder.preflight(spec, placed, SandboxMode.NONE)  # unsandboxed, the host's disk is seen


# -- check and run, from another folder, in bwrap ----------------------------------------------
@needs_bwrap
@pytest.mark.slow
def test_a_python_bot_elsewhere_passes_check_in_bwrap_and_plays_run(tmp_path: Path) -> None:
    script, start = _bot_elsewhere(tmp_path)
    command = "python ../bots/mine/mine.py"
    checked = _cli("check", command, "--sandbox", "bwrap", cwd=start)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "in sandbox bwrap, as a tournament runs it" in checked.stdout
    as_json = _cli("check", command, "--json", cwd=start)  # auto: bwrap here, said in the JSON
    assert json.loads(as_json.stdout)["sandbox"] == "bwrap", as_json.stderr
    out = tmp_path / "out"
    played = _cli(
        "run", "--bot", f"mine={command}", "--bot", "greedy=builtin:greedy", "--games", "2",
        "--sandbox", "bwrap", "--out", str(out), "--quiet", cwd=start,
    )  # fmt: skip
    assert played.returncode == 0, played.stdout + played.stderr
    assert "Sandbox: bwrap for mine, greedy" in played.stdout
    assert len((out / "games.jsonl").read_text().splitlines()) == 2


@needs_bwrap
@pytest.mark.slow
def test_a_path_outside_the_bots_dir_is_refused_before_any_game(tmp_path: Path) -> None:
    script, start = _bot_elsewhere(tmp_path)
    config = start / "match.toml"
    config.write_text(
        'games = 2\nout = "out"\nsandbox = "bwrap"\n'
        '[[bots]]\nname = "mine"\ncommand = "python ../bots/mine/mine.py"\ndir = "."\n'
        '[[bots]]\nname = "greedy"\ncommand = "builtin:greedy"\n'
    )
    # From the bot's folder, which ``python -m`` puts on the runner's sys.path: never shown
    # as the arena's code (sandbox.code_paths), so the script above it is not either.
    done = _cli("run", str(config), cwd=start)
    assert done.returncode != 0
    assert f"its command names {script}, which the sandbox (bwrap) does not show" in done.stderr
    assert "dir = " in done.stderr and "--sandbox none" in done.stderr
    assert not (start / "out").exists()  # before any game: nothing written
    checked = _cli("check", "python ../bots/mine/mine.py", "--sandbox", "bwrap", cwd=start)
    assert checked.returncode == 0, checked.stdout + checked.stderr  # no dir: the file's folder


@needs_bwrap
@pytest.mark.slow
def test_play_runs_a_script_named_alone_in_bwrap(tmp_path: Path) -> None:
    """docs/sdk.md's ``play mine.py "builtin:search?budget=30"`` (it failed with
    ``bwrap: execvp mine.py: No such file or directory``)."""
    script, _ = _bot_elsewhere(tmp_path)
    done = _cli(
        "play", "mine.py", "builtin:search?budget=30", "--games", "2", "--out",
        str(tmp_path / "out"), cwd=script.parent,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Sandbox: bwrap for mine" in done.stdout


@needs_bwrap
@pytest.mark.slow
def test_the_node_bot_copied_elsewhere_passes_check_and_plays_run(tmp_path: Path) -> None:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node or npm is not on PATH (install Node.js 18+ to test example_bots/node)")
    copy = tmp_path / "bots" / "node"
    shutil.copytree(NODE_DIR, copy, ignore=shutil.ignore_patterns("node_modules"))
    installed = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error", "--prefer-offline"],
        cwd=copy, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if installed.returncode != 0:
        pytest.skip(f"`npm ci` failed: {installed.stderr[-300:]}")
    start = tmp_path / "elsewhere"
    start.mkdir()
    command = "node ../bots/node/bot.js"
    checked = _cli("check", command, "--sandbox", "bwrap", "--json", cwd=start)
    failed = {r["name"] for r in json.loads(checked.stdout)["results"] if r["status"] == "fail"}
    assert not failed, checked.stdout
    played = _cli(
        "run", "--bot", f"node={command}", "--bot", "greedy=builtin:greedy", "--games", "2",
        "--sandbox", "bwrap", "--out", str(tmp_path / "out"), "--quiet", cwd=start,
    )  # fmt: skip
    assert played.returncode == 0, played.stdout + played.stderr


def test_the_no_bwrap_warning_is_said_once_for_all_bots(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under ``auto`` without bwrap, the paragraph was printed once per bot (3 times)."""
    from tacocat_arena.tournament.config import load_config
    from tacocat_arena.tournament.runner import sandbox_modes

    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    config = load_config(None, {}, ("a=builtin:random", "b=builtin:greedy", "c=builtin:search"))
    notices: list[str] = []
    modes = sandbox_modes(config, notices.append)
    assert set(modes.values()) == {SandboxMode.NONE}
    assert sum("bubblewrap (bwrap) is not available" in n for n in notices) == 1, notices
    assert any(n.startswith("Sandbox: none for a, b, c") for n in notices), notices
