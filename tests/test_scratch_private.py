"""A build's and a worker batch's temporary folder (``scratch.private_folder``): removed when
its ``with`` ends, and, when a killed runner could not, by the next runner's first folder of
the same kind (a SIGKILLed arena left one ``tacocat-build-*`` folder per build it was in)."""

from __future__ import annotations

from pathlib import Path

from tacocat_arena.launch.scratch import OWNER_FILE, owned_folder, private_folder


def _left_by_a_dead_runner(under: Path, kind: str) -> Path:
    folder = under / f"tacocat-{kind}-4194303-dead"
    folder.mkdir()
    (folder / OWNER_FILE).write_text("4194303 1\n")  # a pid past pid_max: never running
    (folder / "build.log").write_text("")
    return folder


def test_a_private_folder_is_gone_when_its_with_ends(tmp_path: Path) -> None:
    with private_folder("build", tmp_path) as folder:
        assert folder.is_dir() and folder.name.startswith("tacocat-build-")
        (folder / "build.log").write_text("output")
    assert not folder.exists()


def test_a_dead_runners_folder_is_removed_by_the_next_one_and_a_live_ones_kept(
    tmp_path: Path,
) -> None:
    dead = _left_by_a_dead_runner(tmp_path, "build")
    alive = owned_folder("build", tmp_path)  # this test's own process: alive
    other_kind = _left_by_a_dead_runner(tmp_path, "batch")
    with private_folder("build", tmp_path):
        assert not dead.exists()
        assert alive.is_dir()
        assert other_kind.is_dir()  # another kind's folders wait for their own kind
