"""What of the disk a sandboxed bot sees, with real runners and real bot processes in bwrap:
never the folder the runner was started from (``python -m`` puts it on the runner's
sys.path, which the sandbox once mounted as code), and built-ins that play wherever the
organizer works, a root runner's 0700 folder too.  Each runs as the test's user (root here:
its bots drop to uid 65534) and as an ordinary user (uid 65534, its bots in a user
namespace of their own)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from nobody_support import NOBODY, as_nobody, python_for_nobody  # tests/ (pytest pythonpath)

from tacocat_arena.launch import sandbox

HOSTILE = Path(__file__).parent / "hostile_bots" / "hostile_bot.py"
FINISHED = {"goal", "round_cap"}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        sandbox.bwrap_path() is None,
        reason="bubblewrap (bwrap) is not installed or cannot create namespaces here "
        "(apt-get install bubblewrap)",
    ),
]


@pytest.fixture(params=["this user", "ordinary user"])
def runner(request: pytest.FixtureRequest) -> Iterator[tuple[list[str], int, Path]]:
    """How to start ``python -m tacocat_arena.cli``: its command prefix, its uid, and a
    scratch folder outside root's 0700 temporary folder that this uid may use."""
    base = Path(tempfile.mkdtemp(prefix="tacocat-folders-"))
    base.chmod(0o755)
    try:
        if request.param == "this user":
            yield [sys.executable], os.geteuid(), base
        elif os.geteuid() != 0:
            pytest.skip("already an ordinary user (the other case)")
        else:
            yield as_nobody(python_for_nobody(base)), NOBODY, base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def folder_of(uid: int, path: Path, mode: int) -> Path:
    path.mkdir()
    os.chown(path, uid, uid)
    path.chmod(mode)
    return path


def cli(prefix: list[str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "LANG": "C.UTF-8", "COLUMNS": "300"}
    return subprocess.run(
        [*prefix, "-m", "tacocat_arena.cli", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def probes(log: Path) -> dict[str, str]:
    found = {}
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("PROBE "):
            _, what, result = line.split(" ", 2)
            found[what] = result
    return found


def games(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "games.jsonl").open()]


def test_a_bot_sees_nothing_of_the_folder_the_runner_was_started_from(
    runner: tuple[list[str], int, Path],
) -> None:
    """The organizer starts ``run`` from a folder of theirs, readable by all (as /srv/cup
    is), holding a secret; the bot, in a folder of its own, looks for it there."""
    prefix, uid, base = runner
    organizer = folder_of(uid, base / "organizer", 0o755)
    secret = organizer / "arena-secrets.toml"
    secret.write_text('organizer_token = "tok-of-the-organizer"\n')
    secret.chmod(0o644)
    bots = folder_of(uid, base / "bots", 0o755)
    shutil.copy(HOSTILE, bots / "hostile_bot.py")
    config = bots / "cup.toml"
    config.write_text(
        'games = 2\nseed = 1\nsandbox = "bwrap"\ntwins = false\nmove_timeout = 10.0\n'
        '[[bots]]\nname = "peeker"\ncommand = "python hostile_bot.py --mode peek"\n'
        f'env = {{ PEEK = "{secret}" }}\n'
        '[[bots]]\nname = "greedy"\ncommand = "builtin:greedy"\n'
    )
    out = organizer / "out"
    done = cli(prefix, "run", str(config), "--out", str(out), "--quiet", cwd=organizer)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Sandbox: bwrap for peeker, greedy" in done.stdout
    found = probes(out / "logs" / "peeker.log")
    assert found["peek-own-script"].startswith("read:"), found  # the probe can see
    assert found["peek-list"] in ("denied:FileNotFoundError", "denied:PermissionError"), found
    assert found["peek-read"] in ("denied:FileNotFoundError", "denied:PermissionError"), found
    played = games(out)
    assert len(played) == 2 and all(g["reason"] in FINISHED for g in played), played


def test_two_builtins_play_from_a_folder_only_the_runner_may_enter(
    runner: tuple[list[str], int, Path],
) -> None:
    """``play`` from a 0700 folder: a built-in runs in the installed example_bots package,
    not in the runner's folder, which a root runner's bots (uid 65534) cannot read."""
    prefix, uid, base = runner
    organizer = folder_of(uid, base / "organizer", 0o700)
    args = ["play", "builtin:random", "builtin:greedy?seed=3", "--games", "2"]
    done = cli(prefix, *args, "--out", "out", cwd=organizer)  # auto: bwrap here
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Sandbox: bwrap for " in done.stdout, done.stdout
    played = games(organizer / "out")
    assert len(played) == 2 and all(g["reason"] in FINISHED for g in played), played
