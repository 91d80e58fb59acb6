"""A runner killed with -9 leaves its temporary folder; the next start removes it, and never
the folder of a runner still alive (``launch/scratch.py``).  Real ``tacocat-arena run``
processes, killed as a crash or an OOM killer would."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tacocat_arena.launch.scratch import owned_folder

pytestmark = pytest.mark.slow

CONFIG = """
games = {games}
[[bots]]
name = "a"
command = "builtin:random"
[[bots]]
name = "b"
command = "builtin:random"
"""


def _run(folder: Path, tmp: Path, games: int, out: str) -> subprocess.Popen[bytes]:
    config = folder / f"{out}.toml"
    config.write_text(CONFIG.format(games=games))
    return subprocess.Popen(
        [sys.executable, "-m", "tacocat_arena.cli", "run", str(config), "--out",
         str(folder / out), "--sandbox", "none", "--quiet"],
        env=dict(os.environ, TMPDIR=str(tmp)), start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def test_the_folder_of_a_runner_killed_with_9_is_removed_at_the_next_start(
    tmp_path: Path,
) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    killed = _run(tmp_path, tmp, 2000, "long")
    deadline = time.monotonic() + 60
    while not (left := list(tmp.glob(f"tacocat-run-{killed.pid}-*"))):
        assert time.monotonic() < deadline and killed.poll() is None, "no folder appeared"
        time.sleep(0.1)
    os.killpg(killed.pid, signal.SIGKILL)  # the runner and its bots, no cleanup possible
    killed.wait(10)
    assert left[0].is_dir()
    alive = owned_folder("run", under=tmp)  # this test's process: alive, so kept
    again = _run(tmp_path, tmp, 2, "short")
    assert again.wait(120) == 0
    assert not left[0].exists()
    assert alive.is_dir()
    assert not list(tmp.glob(f"tacocat-run-{again.pid}-*"))  # a runner that ends cleans up
