"""A root organizer's build writes its package folder (issue 34, point 11): the build runs as
uid 65534, so the folder is lent to that uid and given back after, as it was, with what the
build made readable by the bot and writable by no one else, and no link ever followed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tacocat_arena.launch import sandbox

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="lending a folder is a root runner's")


def test_a_lent_folder_comes_back_as_it_was_with_the_builds_output_readable(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "package"
    folder.mkdir(mode=0o755)
    os.chown(folder, 1234, 1234)
    (folder / "secret.txt").write_text("mine")
    os.chmod(folder / "secret.txt", 0o640)
    os.chown(folder / "secret.txt", 1234, 1234)
    victim = tmp_path / "victim"
    victim.write_text("not the build's")
    os.chown(victim, 4321, 4321)
    lent = sandbox.lend_folder(folder)
    assert lent is not None
    for path in (folder, folder / "secret.txt"):
        assert path.lstat().st_uid == sandbox.SANDBOX_UID
    # What a hostile build does as uid 65534: set-id programs, private folders, links out,
    # a FIFO, and a changed mode on a file of the package.
    made = folder / "build" / "bot"
    made.parent.mkdir(mode=0o700)
    made.write_text("#!/bin/sh\n")
    (folder / "out").symlink_to(victim)
    os.mkfifo(folder / "pipe")
    os.chmod(folder / "secret.txt", 0o666)
    for path in (made.parent, made):
        os.chown(path, sandbox.SANDBOX_UID, sandbox.SANDBOX_UID)
    os.chmod(made, 0o6777)
    assert made.stat().st_mode & stat.S_ISUID
    sandbox.reclaim_folder(lent)
    mode = stat.S_IMODE
    assert (folder.stat().st_uid, mode(folder.stat().st_mode)) == (1234, 0o755)
    secret = (folder / "secret.txt").stat()
    assert (secret.st_uid, secret.st_gid, mode(secret.st_mode)) == (1234, 1234, 0o640)
    assert (made.parent.stat().st_uid, mode(made.parent.stat().st_mode)) == (1234, 0o755)
    assert (made.stat().st_uid, mode(made.stat().st_mode)) == (1234, 0o755)  # no set-id
    assert (folder / "out").lstat().st_uid == 1234 and (folder / "out").is_symlink()
    assert victim.stat().st_uid == 4321  # the link was never followed
    assert not (folder / "pipe").exists()


def test_an_ordinary_runner_lends_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "runs_as_root", lambda: False)
    assert sandbox.lend_folder(tmp_path) is None
    sandbox.reclaim_folder(None)
