"""A root runner plays a bot whose folder uid 65534 cannot read (issue 37, point 5).

Any Docker container runs as root with the bot in /root (0700): the bot, dropped to uid 65534
in its sandbox, could not read its own folder and every start failed with "chmod o+rx".  Now
the folder is copied into the run's private scratch, readable by that uid and capped in size,
said once with its size, and its hash is recorded in results.json.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tacocat_arena.launch import folder, sandbox
from tacocat_arena.launch.sandbox import SandboxMode
from tacocat_arena.launch.spec import BotSpec

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(
    not sandbox.runs_as_root(), reason="the copy is for a root runner (uid 65534 bots)"
)


def private_bot(where: Path) -> Path:
    """A bot folder only root may read: 0700, its script 0600."""
    own = where / "priv"
    own.mkdir()
    shutil.copy2(REPO / "example_bots" / "greedy_bot.py", own / "my_bot.py")
    (own / "data").mkdir()
    (own / "data" / "book.txt").write_text("opening book\n")
    for path in (own / "my_bot.py", own / "data" / "book.txt"):
        path.chmod(0o600)
    (own / "data").chmod(0o700)
    own.chmod(0o700)
    return own


def test_an_unreadable_folder_is_copied_readable_with_its_paths_moved(tmp_path: Path) -> None:
    own = private_bot(tmp_path)
    spec = BotSpec.checked("mine", f"python {own / 'my_bot.py'}")
    placement = folder.Placement(own, ("python", str(own / "my_bot.py")))
    scratch = tmp_path / "scratch"
    moved, snapshot = folder.readable_copy(spec, placement, SandboxMode.BWRAP, scratch)
    assert snapshot is not None and moved.folder == snapshot.folder != own
    assert moved.argv == ("python", str(snapshot.folder / "my_bot.py"))
    assert sandbox.unreachable_by_bot(moved.folder, write=False) is None
    for path in (moved.folder / "my_bot.py", moved.folder / "data" / "book.txt"):
        assert path.stat().st_mode & stat.S_IROTH
    assert snapshot.files == 2 and snapshot.size > 0 and len(snapshot.sha256) == 64
    # The hash is the copied code's: the same again, another after a change.
    again = folder.readable_copy(spec, placement, SandboxMode.BWRAP, scratch)[1]
    assert again is not None and again.sha256 == snapshot.sha256
    (own / "data" / "book.txt").write_text("another book\n")
    changed = folder.readable_copy(spec, placement, SandboxMode.BWRAP, scratch)[1]
    assert changed is not None and changed.sha256 != snapshot.sha256


def test_no_copy_over_the_cap_nor_without_the_sandbox_nor_for_a_readable_folder(
    tmp_path: Path,
) -> None:
    own = private_bot(tmp_path)
    spec = BotSpec.checked("mine", "python my_bot.py")
    placement = folder.Placement(own, ("python", "my_bot.py"))
    scratch = tmp_path / "scratch"
    over = folder.readable_copy(spec, placement, SandboxMode.BWRAP, scratch, cap_bytes=10)
    assert over == (placement, None)  # the start then says chmod o+rx, as before
    assert folder.readable_copy(spec, placement, SandboxMode.NONE, scratch) == (placement, None)
    own.chmod(0o755)
    assert folder.readable_copy(spec, placement, SandboxMode.BWRAP, scratch) == (placement, None)
    assert not scratch.exists()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_run_plays_a_private_folder_and_records_the_copy_s_hash(tmp_path: Path) -> None:
    own = private_bot(tmp_path)
    out = tmp_path / "out"
    done = subprocess.run(
        [
            sys.executable, "-m", "tacocat_arena.cli", "run",
            "--bot", f"mine=python {own / 'my_bot.py'}", "--bot", "greedy=builtin:greedy",
            "--games", "4", "--out", str(out), "--sandbox", "bwrap", "--quiet",
        ],  # fmt: skip
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    said = " ".join(done.stdout.split())
    assert said.count("so it plays a private copy") == 1, said  # once, for both twins
    assert "2 files" in said and "KiB" in said
    metadata = json.loads((out / "results.json").read_text())["metadata"]
    digest = metadata["bot_folder_sha256"]["mine"]
    assert f"sha256 {digest[:16]}" in said
    standings = (out / "standings.csv").read_text().splitlines()
    assert any(line.split(",")[1:3] == ["mine", "4"] for line in standings), standings
    assert os.stat(own).st_mode & 0o777 == 0o700  # the bot's own folder is left as it was


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_check_plays_a_private_folder_from_a_copy_said_once(tmp_path: Path) -> None:
    own = private_bot(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", "check", f"python {own / 'my_bot.py'}",
         "--sandbox", "bwrap"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    said = " ".join((done.stdout + done.stderr).split())
    assert said.count("so it plays a private copy") == 1, said
    assert "2 files" in said and "KiB" in said and "sha256 " in said
    assert "checks passed" in said and "failed" not in said
    assert os.stat(own).st_mode & 0o777 == 0o700


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_run_on_workers_copies_a_private_folder_once_and_records_its_hash(tmp_path: Path) -> None:
    own = private_bot(tmp_path)
    out = tmp_path / "out"
    done = subprocess.run(
        [
            sys.executable, "-m", "tacocat_arena.cli", "run",
            "--bot", f"mine=python {own / 'my_bot.py'}", "--bot", "greedy=builtin:greedy",
            "--games", "20", "--out", str(out), "--sandbox", "bwrap", "--quiet",
            "--workers", "2",
        ],  # fmt: skip
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    said = " ".join(done.stdout.split())
    # Once for the run, not once per batch (10 duplicate pairs: 2 batches on 2 workers).
    assert said.count("so it plays a private copy") == 1, said
    metadata = json.loads((out / "results.json").read_text())["metadata"]
    digest = metadata["bot_folder_sha256"]["mine"]
    assert f"sha256 {digest[:16]}" in said
    standings = (out / "standings.csv").read_text().splitlines()
    assert any(line.split(",")[1:3] == ["mine", "20"] for line in standings), standings
    assert os.stat(own).st_mode & 0o777 == 0o700
