"""Every ``tacocat-arena ...`` command that README.md and docs/*.md show exists as written,
and the concrete ones run, in the order a reader meets them, in one clone.

For each command (in code blocks and inline code), its subcommands must exist, ``--help``
must parse for them, and every option it names must be one of that command's options: a doc
that shows ``verify --html`` (which is ``replay``'s) fails here.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from node_support import node_dependencies

from tacocat_arena.cli import main

REPO_ROOT = Path(__file__).resolve().parents[1]
DOCS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
_INLINE = re.compile(r"`([^`]+)`")  # code spans, paired from the left as Markdown does


def _blocks(text: str) -> tuple[list[str], str]:
    """The shell code blocks' lines (continuations joined) and the prose outside any block.
    In a block that shows a session (`$ ` prompts), only the prompted lines are commands:
    the rest is their output (human-seat.md's "Results in DIR (tacocat-arena verify ...)"
    was run as `verify '...;'`)."""
    shell: list[str] = []
    prose: list[str] = []
    block: list[str] = []
    fence: str | None = None  # the open block's language, None outside blocks
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            if fence is not None and fence in ("", "sh", "bash", "console", "shell"):
                joined = "\n".join(block).replace("\\\n", " ").splitlines()
                session = any(line.lstrip().startswith("$ ") for line in joined)
                shell += [ln for ln in joined if not session or ln.lstrip().startswith("$ ")]
            fence = line.strip().removeprefix("```") if fence is None else None
            block = []
            continue
        if fence is None:
            prose.append(line)
        else:
            block.append(line)
    return shell, "\n".join(prose)


def _shown_commands() -> list[tuple[str, str]]:
    """(where, command) for every command the docs show."""
    found: list[tuple[str, str]] = []
    for path in DOCS:
        where = path.relative_to(REPO_ROOT).as_posix()
        lines, prose = _blocks(path.read_text(encoding="utf-8"))
        for line in lines:
            line = line.strip().removeprefix("$ ")
            start = line.find("tacocat-arena ")
            if start >= 0 and not line[:start].rstrip().endswith(("#", "-m")):
                found.append((where, line[start:]))
        for match in _INLINE.finditer(prose):
            span = " ".join(match.group(1).split())
            if span.startswith("tacocat-arena "):
                found.append((where, span))
    return found


def _words(command: str) -> list[str]:
    """The command's words, up to a comment, a pipe or a second command."""
    command = re.split(r"\s(?:#|\|\||&&|\||;|>)\s?", command + " ", maxsplit=1)[0]
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _chain(words: list[str]) -> tuple[list[str], click.Command, list[str]]:
    """The subcommands named, the command they lead to, and the words after them."""
    command: click.Command = main
    names: list[str] = []
    rest = words[1:]
    while isinstance(command, click.Group) and rest and rest[0] in command.commands:
        names.append(rest[0])
        command = command.commands[rest.pop(0)]
    return names, command, rest


COMMANDS = _shown_commands()


def test_every_code_fence_stands_on_a_line_of_its_own() -> None:
    """A fence after text (game-record.md's example ended `}```) closes nothing: the rest of
    the page rendered as code, and this file read its blocks shifted by one."""
    for path in DOCS:
        lines = path.read_text(encoding="utf-8").splitlines()
        glued = [n for n, line in enumerate(lines, 1) if "```" in line.strip()[3:]]
        assert not glued, f"{path.name}: lines {glued} hold a fence after other text"
        fences = sum(line.lstrip().startswith("```") for line in lines)
        assert fences % 2 == 0, f"{path.name}: {fences} fences, one is not closed"


def test_the_docs_show_commands() -> None:
    assert len(COMMANDS) > 40, COMMANDS  # the extraction finds them


@pytest.mark.parametrize(("where", "shown"), COMMANDS, ids=[f"{w}: {c}" for w, c in COMMANDS])
def test_each_shown_command_exists_with_its_options(where: str, shown: str) -> None:
    words = [w.strip("[]") for w in _words(shown)]
    names, command, rest = _chain(words)
    if isinstance(command, click.Group) and rest and not rest[0].startswith("-"):
        if not re.fullmatch(r"[A-Z_.]+|\.\.\.|[a-z]+\.\.\.", rest[0]):  # NAME / ... stand-ins
            pytest.fail(f"{where}: `{shown}`: no subcommand {rest[0]!r} of {names or 'main'}")
    result = CliRunner().invoke(main, [*names, "--help"])
    assert result.exit_code == 0, f"{where}: `{shown}`: {result.output}"
    options = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
    for word in rest:
        if word.startswith("--"):
            option = word.split("=", 1)[0]
            assert option in options | {"--help"}, (
                f"{where}: `{shown}`: {option} is not an option of "
                f"`tacocat-arena {' '.join(names)}` ({', '.join(sorted(options))})"
            )


# -- the commands run, in the order a reader meets them, in one clone (issue 37, point 3) ------
#: The subcommands that the sequence runs (serve, submit, grade and bench have their own
#: end-to-end tests: a server to stop, an arena to submit to, minutes of grading; why-lose.md's
#: analyze runs here, with a lighter reference: ``LIGHTER``).
RUN_IN_SEQUENCE = frozenset({"run", "play", "check", "verify", "replay", "analyze"})

#: A word standing for what the reader fills in: such a command is a form, not an example.
_STAND_IN = re.compile(r"^(?:[A-Z][A-Z0-9_.]*|\.\.\.|.*\[.*)$")

#: Documented commands the sequence leaves out, each with why (matched as a substring).
NOT_IN_SEQUENCE = {
    "--cluster tcp://10.0.0.5:8786": "needs a Dask scheduler at that address (test_executors "
    "runs a local cluster)",
    "examples/trained_bot.py": "needs examples/agent.npz, minutes of training first "
    "(tests/test_training_example.py trains one briefly and plays it in a real run)",
    "--game g17": "g17 stands for a game of the reader's own results",
    "lost.json": "lost.json is a record the reader saved from their own games",
    "play human": "a person plays it in a browser (test_human_seat.py plays it in Chromium); "
    "here nobody would answer and each decision would wait out its 120 s",
    "--debug": "debug mode gives the bots this terminal (a person at a breakpoint)",
    "http://arena.example:8000": "stands for the reader's own arena (test_why_owner "
    "replays a real arena's game by its address)",
}


#: Added to a documented command that runs a costly default (matched as a substring): the
#: sequence checks that the command runs as written, not what its default costs.  analyze's
#: default reference (6,000 playouts x 4 seeds) is ~23 s of CPU on the golden game, the
#: costliest command of the sequence (why-lose.md: "analysed in 90.7 s"); the same command
#: runs with why-lose.md's own lighter reference, its other words unchanged
#: (test_why_analysis checks what a reference finds, in process).
LIGHTER = {
    "tacocat-arena analyze ": ("--reference", "ismcts?iterations=300&seeds=2"),
}

#: Documented commands whose documented exit code is not 0 (matched as a substring).
EXIT_CODES = {
    "crash_on_defend_bot.py": 1,  # why-lose.md: a bot that crashes; 1 "when a request was failed"
}


def _sequence() -> list[tuple[str, list[str]]]:
    """(where, words) of every concrete command of the docs' shell blocks, README first."""
    found = []
    for path in DOCS:
        where = path.relative_to(REPO_ROOT).as_posix()
        for line in _blocks(path.read_text(encoding="utf-8"))[0]:
            line = line.strip().removeprefix("$ ")
            start = line.find("tacocat-arena ")
            if start < 0 or line[:start].rstrip().endswith(("#", "-m", ":")):
                continue
            words = _words(line[start:])
            if len(words) < 2 or words[1] not in RUN_IN_SEQUENCE:
                continue
            if any(_STAND_IN.match(word.strip("`(),.;")) for word in words[2:]):
                continue
            if any(skip in " ".join(words) for skip in NOT_IN_SEQUENCE):
                continue
            found.append((where, words))
    return found


#: The installed command (the virtual environment's, beside this interpreter).
TACOCAT_ARENA = str(Path(sys.executable).parent / "tacocat-arena")


def _clone(into: Path) -> None:
    """What a fresh clone holds (the tracked files), plus the Node example's node_modules
    that protocol.md's `npm ci` installs, when this checkout has them."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO_ROOT / name
        if source.is_file() and not source.is_symlink():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    modules = _node_modules()
    if modules is not None:
        shutil.copytree(modules, into / "example_bots" / "node" / "node_modules", symlinks=True)


def _node_modules() -> Path | None:
    """The Node example's installed node_modules, installed first (under node_support's
    lock) when node and npm are here; None without them. Copying the checkout's folder as
    it stood raced `npm ci` in another test worker (a half-installed folder was copied)."""
    try:
        return node_dependencies() / "node_modules"
    except pytest.skip.Exception:
        return None


def test_the_sequence_finds_the_commands_a_reader_runs() -> None:
    shown = [" ".join(words) for _, words in _sequence()]
    assert "tacocat-arena run" in shown  # the README's demo, first
    assert shown[0] == "tacocat-arena run", shown
    assert any(s.startswith("tacocat-arena run --bot mine=") for s in shown), shown
    assert any("examples/league.toml" in s for s in shown), shown
    assert any(s.startswith("tacocat-arena analyze tests/golden") for s in shown), shown
    assert not any(" ...;" in s or s.startswith("tacocat-arena play human") for s in shown)


@pytest.mark.slow
def test_every_documented_command_runs_in_order_in_one_clone(tmp_path: Path) -> None:
    """README then docs/*.md, each concrete `run`, `play`, `check`, `verify` and `replay`
    of a shell block, one after another in one copy of the repository: none may fail (the
    demo's tacocat-results/ refused the next documented `run --bot ...`, issue 37)."""
    clone = tmp_path / "clone"
    _clone(clone)
    shutil.copy2(clone / "example_bots" / "greedy_bot.py", clone / "my_bot.py")  # README's cp
    node_ready = (clone / "example_bots" / "node" / "node_modules").is_dir()
    ran = []
    for where, words in _sequence():
        if not node_ready and any("node" in word.split() for word in words):
            continue  # Node's example needs `npm ci` (test_node_bot.py installs it)
        shown = shlex.join(words)
        lighter = [
            word
            for part, extra in LIGHTER.items()
            if part in f"{shown} " and extra[0] not in words
            for word in extra
        ]
        done = subprocess.run(
            # The installed command, as the docs write it: `python -m` in the clone's root
            # would import the clone's example_bots (the current folder comes first).
            [TACOCAT_ARENA, *words[1:], *lighter],
            cwd=clone,
            capture_output=True,
            text=True,
            timeout=900,
            stdin=subprocess.DEVNULL,
        )
        code = next((c for part, c in EXIT_CODES.items() if part in shown), 0)
        assert done.returncode == code, f"{where}: `{shown}`:\n{done.stdout}\n{done.stderr}"
        ran.append(shlex.join([*words, *lighter]))
    print("ran in order:", *ran, sep="\n  ")
    assert len(ran) >= 8, ran
