"""The trees a ``bench ... --against REV`` compares: this checkout and a git worktree of REV.

Each tree is measured by a child process running a function of one of bench/'s files (this
tree's file, so both trees are driven by the same code) with the measured tree first on
``sys.path`` (``Child``), or, where the processes it starts must import that tree too (a
``serve`` and its sandboxed bots), in a virtual environment of the tree's own
(``own_environments``).  The worktree lives in a temporary folder for the length of the run;
what a comparison measured is a ``Comparison``.

This module imports nothing of ``tacocat_arena``, and a bench file a child runs imports it
only inside the functions the parent calls: the other tree may not have it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

T = TypeVar("T")

#: The repository bench/ belongs to, when it is run from a checkout (not an installation).
ROOT = Path(__file__).resolve().parents[3]

#: What starts a child's answer on its stdout (a library may print on import: pygame does).
ANSWER = "@bench-child "

#: What a child runs: the measured tree first on the path, a bench file run as a module (run
#: as a script from its own folder, the file would put bench/ first on the path), then one of
#: its functions for each request read from stdin (a JSON list of arguments), answered in
#: JSON on stdout, until stdin ends.  Its first answer names the package it imported.
CHILD = f"""
import json, runpy, sys
tree, script, function = sys.argv[1:4]
if tree:
    sys.path[:0] = [tree + '/server', tree + '/client_sdk', tree]
names = runpy.run_path(script, run_name='__bench_child__')
import tacocat_arena
print({ANSWER!r} + json.dumps(tacocat_arena.__file__), flush=True)
for line in sys.stdin:
    print({ANSWER!r} + json.dumps(names[function](*json.loads(line))), flush=True)
"""


class BenchError(Exception):
    """The comparison cannot be made (no checkout, unknown commit, a child that failed)."""


@dataclass(frozen=True)
class Comparison(Generic[T]):
    """What a ``bench ... --against REV`` measured: how the figures name this tree and the
    other, each tree's figures in the order they were taken (in turns, ``in_turns``), and the
    machine's load around them (what the pairs of figures shared)."""

    this: str
    other: str
    mine: tuple[T, ...]
    theirs: tuple[T, ...]
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]

    def ratios(self, figure: Callable[[T], float]) -> list[float]:
        """Each round's ``figure`` of this tree over the other's: a pair measured seconds
        apart shares the machine's load more than two medians do."""
        return [figure(a) / figure(b) for a, b in zip(self.mine, self.theirs, strict=True)]


def this_tree() -> Path | None:
    """This checkout, or None when the package is installed (no tree to put on a path)."""
    return ROOT if (ROOT / "server" / "tacocat_arena").is_dir() else None


def child_environment(tree: Path | None) -> dict[str, str]:
    """A child's environment: ``tree`` on PYTHONPATH (so the processes the child starts, the
    bots of ``bench referee``, import the same tree), none of ours otherwise."""
    environment = dict(os.environ, PYGAME_HIDE_SUPPORT_PROMPT="1", PYTHONUNBUFFERED="1")
    environment.pop("PYTHONPATH", None)
    if tree is not None:
        environment["PYTHONPATH"] = os.pathsep.join(
            str(tree / part) for part in ("server", "client_sdk", ".")
        )
    return environment


def git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise BenchError(f"git {' '.join(args)}: {done.stderr.strip() or done.returncode}")
    return done.stdout.strip()


def describe_this(this: Path | None) -> str:
    """This tree as a header names it: the folder, its commit, whether it has changes."""
    if this is None:
        return "the installed package"
    try:
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except BenchError:
        return str(this)
    return f"{this} at {head}{' with uncommitted changes' if dirty else ''}"


@contextmanager
def worktree(rev: str | None) -> Iterator[tuple[str, Path] | None]:
    """A detached git worktree of ``rev`` in a temporary folder (removed after) and how the
    figures name it, or None without ``rev``."""
    if rev is None:
        yield None
        return
    if this_tree() is None:
        raise BenchError("--against needs a git checkout of tacocat-arena (this is installed)")
    try:
        commit = git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except BenchError:
        raise BenchError(f"--against {rev}: no such commit in {ROOT}") from None
    with tempfile.TemporaryDirectory(prefix="tacocat-bench-") as folder:
        path = Path(folder) / "tree"
        git("worktree", "add", "--detach", "--quiet", str(path), commit)
        try:
            yield f"{rev} ({commit[:7]})", path
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)],
                capture_output=True,
            )


class Child:
    """A child process measuring one tree: ``function`` of the bench file ``script`` answers
    each request (see ``CHILD``)."""

    def __init__(
        self,
        tree: Path | None,
        script: str,
        function: str,
        *,
        needed: bool = True,
        python: str | None = None,
    ) -> None:
        self.tree = tree
        # ``python``: another interpreter (one whose environment imports ``tree``: the bots
        # the child starts run with it, and this one's editable install would send them here).
        interpreter = python or sys.executable
        self.command = [interpreter, "-c", CHILD, str(tree or ""), script, function]
        self.needed = needed
        self.process: subprocess.Popen[str] | None = None
        self.errors = tempfile.TemporaryFile("w+")  # a file: a pipe nobody reads could fill

    def __enter__(self) -> Child:
        if not self.needed:
            return self
        self.process = subprocess.Popen(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errors,
            text=True,
            cwd=self.tree,
            env=child_environment(self.tree),
        )
        package = self._answer()
        if self.tree is not None and not Path(package).is_relative_to(self.tree):
            raise BenchError(f"the child measuring {self.tree} imported {package} instead")
        return self

    def ask(self, *arguments: object) -> Any:
        """Run the child's function once with ``arguments`` (JSON values); its answer."""
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(json.dumps(arguments) + "\n")
        self.process.stdin.flush()
        return self._answer()

    def _answer(self) -> Any:
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith(ANSWER):
                return json.loads(line[len(ANSWER) :])
        self.process.wait()
        self.errors.seek(0)
        raise BenchError(
            f"the child measuring {self.tree or 'this tree'} failed:\n{self.errors.read()}"
        )

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            # The end of its requests ends it (its exit handlers remove what it made); a
            # child that does not end soon is killed.
            try:
                self.process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.communicate()
        self.errors.close()


@contextmanager
def compared(against: str, script: str, function: str) -> Iterator[tuple[str, str, Child, Child]]:
    """How the figures name this tree and a worktree of ``against``, and a child measuring
    each with ``function`` of ``script``, for the length of the comparison."""
    this = this_tree()
    with worktree(against) as other, Child(this, script, function) as mine:
        if other is None:  # never: a revision always gives a worktree
            raise BenchError("--against needs a revision")
        with Child(other[1], script, function) as theirs:
            yield describe_this(this), other[0], mine, theirs


def tree_python(tree: Path, folder: Path) -> str:
    """A virtual environment in ``folder`` whose Python imports ``tree`` (its server,
    client_sdk and top folders, from a ``.pth`` file) and then this environment's
    site-packages, and no editable install's finder; its interpreter's path.  Raises
    ``BenchError`` if it imports anything of ours from elsewhere."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True,
        capture_output=True,
    )  # fmt: skip
    python = folder / "bin" / "python"
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    ours = {sysconfig.get_paths()[key] for key in ("purelib", "platlib")}
    lines = [str(tree / "server"), str(tree / "client_sdk"), str(tree), *sorted(ours)]
    (folder / "lib" / version / "site-packages" / "tacocat-bench-tree.pth").write_text(
        "".join(f"{line}\n" for line in lines)
    )
    probe = "import tacocat_arena, tacocat_bot, example_bots, tacocat; print(" + ", ".join(
        f"{name}.__path__[0]" for name in ("tacocat_arena", "tacocat_bot", "example_bots",
                                           "tacocat")
    ) + ", sep='\\n')"  # fmt: skip
    done = subprocess.run(
        [str(python), "-c", probe], capture_output=True, text=True, cwd=folder,
        env=tree_env(), timeout=120,
    )  # fmt: skip
    paths = done.stdout.split()
    if done.returncode != 0 or not all(Path(p).is_relative_to(tree) for p in paths):
        raise BenchError(f"the environment of {tree} imports {paths or done.stderr[-500:]}")
    return str(python)


def tree_env() -> dict[str, str]:
    """The environment of a process run by a tree's own Python (``tree_python``): ours
    without a module path of its own."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


@contextmanager
def own_environments(
    against: str,
) -> Iterator[tuple[str, str, dict[str, Path], dict[str, str]]]:
    """How the figures name this tree and a worktree of ``against``, and each tree's folder
    and the Python of a virtual environment of its own (``tree_python``), keyed ``"this"``
    and ``"against"``, for the length of the comparison."""
    with (
        worktree(against) as other,
        tempfile.TemporaryDirectory(prefix="tacocat-bench-venvs-") as folder,
    ):
        this = this_tree()
        if this is None or other is None:  # never: worktree() refused both
            raise BenchError("--against needs a revision and a git checkout of tacocat-arena")
        trees = {"this": this, "against": other[1]}
        pythons = {key: tree_python(tree, Path(folder) / key) for key, tree in trees.items()}
        yield describe_this(this), other[0], trees, pythons


def in_turns(index: int, mine: T, theirs: T) -> tuple[T, T]:
    """Which goes first in round ``index`` (a child, a tree): each in half the rounds."""
    return (mine, theirs) if index % 2 == 0 else (theirs, mine)
