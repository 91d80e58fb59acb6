"""Every ``tacocat-arena ...`` command that README.md and docs/*.md show exists as written.

For each command (in code blocks and inline code), its subcommands must exist, ``--help``
must parse for them, and every option it names must be one of that command's options: a doc
that shows ``verify --html`` (which is ``replay``'s) fails here.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from tacocat_arena.cli import main

REPO_ROOT = Path(__file__).resolve().parents[1]
DOCS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
_INLINE = re.compile(r"`([^`]+)`")  # code spans, paired from the left as Markdown does


def _blocks(text: str) -> tuple[list[str], str]:
    """The shell code blocks' lines (continuations joined) and the prose outside any block."""
    shell: list[str] = []
    prose: list[str] = []
    fence: str | None = None  # the open block's language, None outside blocks
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = line.strip().removeprefix("```") if fence is None else None
            continue
        if fence is None:
            prose.append(line)
        elif fence in ("", "sh", "bash", "console", "shell"):
            shell.append(line)
    joined = "\n".join(shell).replace("\\\n", " ")
    return joined.splitlines(), "\n".join(prose)


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
