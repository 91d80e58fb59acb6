"""The room map of docs/architecture.md, checked against every module's imports.

Each module's ``import`` and ``from ... import`` statements (anywhere in the module, inside
functions too) are read with ``ast``; an import of another room must be one that room's row of
``MAY_IMPORT`` allows, so no arrow points up, and Click is imported only under ``cli/``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "tacocat_arena"

#: Which rooms each room may import (docs/architecture.md, "may import"); the package root
#: (``tacocat_arena.__version__``) is open to all.  Arrows point down: engine -> protocol ->
#: referee -> launch / stats / tournament -> report / arena / web -> cli.
_SERVER_ROOMS = frozenset(
    {"engine", "play", "protocol", "referee", "launch", "stats", "tournament", "check"}
    | {"report", "arena", "web", "grade", "human"}
)
MAY_IMPORT: dict[str, frozenset[str]] = {
    "engine": frozenset(),
    "play": frozenset({"engine"}),
    "protocol": frozenset({"engine"}),
    "referee": frozenset({"engine", "protocol"}),
    "launch": frozenset({"referee"}),
    "stats": frozenset({"engine"}),
    "tournament": frozenset({"engine", "protocol", "referee", "launch", "stats"}),
    "check": frozenset({"engine", "play", "protocol", "referee", "launch"}),
    "report": frozenset({"engine", "play", "referee", "stats", "tournament"}),
    "arena": frozenset(
        {"engine", "play", "protocol", "referee", "launch", "stats", "tournament", "check"}
    ),
    "web": frozenset({"engine", "play", "stats", "report", "arena", "human"}),
    "grade": frozenset(
        {"engine", "play", "referee", "launch", "stats", "tournament", "check", "report"}
    ),
    # A person's seat: a referee client (protobuf) and its page, in a two-bot tournament.
    "human": frozenset(
        {"engine", "protocol", "referee", "launch", "stats", "tournament", "report"}
    ),
    "envs": frozenset({"engine", "play", "launch"}),
    # bench measures everything but the command line; cli reaches every room (envs only
    # through bench, inside its command).
    "bench": _SERVER_ROOMS | {"envs"},
    "cli": _SERVER_ROOMS | {"bench"},
}

#: Rooms that nothing else imports (bench loads envs only inside its command).
IMPORTED_BY_NONE_BUT_BENCH = frozenset({"envs"})


def _modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent == PACKAGE:  # the package's __init__: its docstring and __version__
            assert path.name == "__init__.py", f"{path.name}: a module in no room"
            continue
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        yield ".".join(("tacocat_arena", *parts)), path


def _imports(module: str, path: Path) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in the file, relative ones resolved."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            name = ".".join([*base, node.module] if node.module else base)
            yield node.lineno, name
            for alias in node.names:  # the name may be a module: from tacocat_arena import cli
                yield node.lineno, f"{name}.{alias.name}"


def _room(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "tacocat_arena" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in MAY_IMPORT else None


def test_every_room_is_in_the_map() -> None:
    rooms = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert rooms - {"data"} == set(MAY_IMPORT), "a room was added or removed: update the map"


def test_no_arrow_points_up() -> None:
    wrong = []
    for module, path in _modules():
        room = _room(module)
        assert room is not None, f"{module} is in no room"
        for line, name in _imports(module, path):
            target = _room(name)
            if target is None or target == room:
                continue
            if target not in MAY_IMPORT[room]:
                wrong.append(f"{path.relative_to(PACKAGE)}:{line}: {room} imports {name}")
            elif target in IMPORTED_BY_NONE_BUT_BENCH and room != "bench":
                wrong.append(f"{path.relative_to(PACKAGE)}:{line}: {room} imports {name}")
    assert not wrong, "imports the room map does not allow:\n" + "\n".join(wrong)


def test_click_is_imported_only_under_cli() -> None:
    wrong = [
        f"{path.relative_to(PACKAGE)}:{line}"
        for module, path in _modules()
        if _room(module) != "cli"
        for line, name in _imports(module, path)
        if name == "click" or name.startswith("click.")
    ]
    assert not wrong, "Click outside cli/: " + ", ".join(wrong)


@pytest.mark.parametrize("room", sorted(MAY_IMPORT))
def test_the_map_has_no_cycle_through(room: str) -> None:
    """Following "may import" from a room never comes back to it."""
    seen: set[str] = set()
    todo = list(MAY_IMPORT[room])
    while todo:
        other = todo.pop()
        assert other != room, f"{room} may import itself through {sorted(seen)}"
        if other not in seen:
            seen.add(other)
            todo.extend(MAY_IMPORT[other])


#: The rooms that speak protobuf themselves; the others go through the referee or the wire.
SPEAK_PROTOBUF = frozenset({"protocol", "referee", "check", "bench", "human"})


def test_only_the_wire_rooms_build_protobuf_messages() -> None:
    wrong = [
        f"{path.relative_to(PACKAGE)}:{line}"
        for module, path in _modules()
        if _room(module) not in SPEAK_PROTOBUF
        for line, name in _imports(module, path)
        if name == "tacocat.v1" or name.startswith("tacocat.v1.")
    ]
    assert not wrong, (
        "generated protobuf imported outside "
        + str(sorted(SPEAK_PROTOBUF))
        + (": " + ", ".join(wrong))
    )


def test_the_bot_sdk_imports_the_engine_play_and_wire_only() -> None:
    sdk = PACKAGE.parents[1] / "client_sdk" / "tacocat_bot"
    wrong = [
        f"{path.name}:{line}: {name}"
        for path in sorted(sdk.rglob("*.py"))
        for line, name in _imports("tacocat_bot." + path.stem, path)
        if _room(name) not in (None, "engine", "play", "protocol")
    ]
    assert not wrong, "the SDK reaches into the server: " + ", ".join(wrong)


def test_the_checker_sees_an_upward_import(tmp_path: Path) -> None:
    """The walk finds imports inside functions and resolves relative ones."""
    module = tmp_path / "tacocat_arena" / "stats" / "probe.py"
    module.parent.mkdir(parents=True)
    module.write_text(
        "def f():\n    from ..tournament import runner\n    import click\n", encoding="utf-8"
    )
    found = {name for _, name in _imports("tacocat_arena.stats.probe", module)}
    assert "tacocat_arena.tournament" in found
    assert "tacocat_arena.tournament.runner" in found
    assert "click" in found


#: Rooms whose functions stay short enough to read at once (issue 22).
SHORT_FUNCTION_ROOMS = ("referee", "tournament", "arena", "web")
MAX_FUNCTION_LINES = 80


def test_no_function_in_referee_tournament_arena_or_web_is_over_80_lines() -> None:
    long = [
        f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name} ({length} lines)"
        for module, path in _modules()
        if _room(module) in SHORT_FUNCTION_ROOMS
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and (length := (node.end_lineno or node.lineno) - node.lineno + 1) > MAX_FUNCTION_LINES
    ]
    assert not long, "split these functions: " + ", ".join(long)


#: Rooms held to 60 lines a function (issue 40).
SHORTER_FUNCTION_ROOMS = ("web", "arena")


def test_no_function_in_web_or_arena_is_over_60_lines() -> None:
    long = [
        f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name} ({length} lines)"
        for module, path in _modules()
        if _room(module) in SHORTER_FUNCTION_ROOMS
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and (length := (node.end_lineno or node.lineno) - node.lineno + 1) > 60
    ]
    assert not long, "split these functions: " + ", ".join(long)
