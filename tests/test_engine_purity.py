"""The engine is pure: standard library only, no transport, storage, clock or global RNG."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import tacocat_arena.engine as engine_package

ENGINE_DIR = Path(engine_package.__file__).parent
ENGINE_FILES = sorted(ENGINE_DIR.glob("*.py"))

#: Modules the engine must never pull in (transport, CLI, storage, network, clock, threads).
FORBIDDEN = [
    "grpc",
    "google.protobuf",
    "click",
    "rich",
    "sqlite3",
    "socket",
    "ssl",
    "asyncio",
    "threading",
    "subprocess",
    "selectors",
    "concurrent.futures",
    "http",
    "urllib.request",
    "time",
    "secrets",
    "uuid",
    "tacocat.v1",
    "tacocat_arena.referee",
    "tacocat_arena.tournament",
    "tacocat_arena.cli",
]
#: Standard-library modules that are I/O, clocks or global randomness: not for the engine.
FORBIDDEN_STDLIB_IMPORTS = {
    "time",
    "datetime",
    "socket",
    "sqlite3",
    "threading",
    "asyncio",
    "subprocess",
    "os",
    "sys",
    "secrets",
    "uuid",
    "logging",
    "io",
    "shutil",
    "tempfile",
}

SCRIPT = """
import json, sys
before = set(sys.modules)
import tacocat_arena.engine
print(json.dumps(sorted(set(sys.modules) - before)))
"""


@pytest.mark.slow
def test_importing_engine_imports_no_transport_storage_or_clock() -> None:
    """Importing tacocat_arena.engine in a fresh interpreter loads none of FORBIDDEN."""
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = set(json.loads(result.stdout))
    for name in FORBIDDEN:
        hits = [m for m in loaded if m == name or m.startswith(name + ".")]
        assert not hits, f"importing the engine imported {hits}"


def _imports(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                found.append(("tacocat_arena.engine." + (node.module or ""), node.lineno))
            else:
                found.append((node.module or "", node.lineno))
    return found


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda p: p.name)
def test_engine_modules_import_only_the_standard_library(path: Path) -> None:
    """Each engine module imports only the standard library and the engine itself."""
    for module, line in _imports(path):
        top = module.split(".")[0]
        if module == "tacocat_arena.engine" or module.startswith("tacocat_arena.engine."):
            continue
        assert top in sys.stdlib_module_names or top == "__future__", (
            f"{path.name}:{line} imports {module}, which is not the standard library"
        )
        assert top not in FORBIDDEN_STDLIB_IMPORTS, (
            f"{path.name}:{line} imports {module}: no clock, I/O or process state in the engine"
        )


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda p: p.name)
def test_engine_uses_no_global_random_state(path: Path) -> None:
    """The engine's randomness is a seeded random.Random; never the module-level functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "random"
        ):
            assert node.attr == "Random", f"{path.name}:{node.lineno} uses random.{node.attr}"
        if isinstance(node, ast.ImportFrom) and node.module == "random":
            names = {alias.name for alias in node.names}
            assert names <= {"Random"}, f"{path.name}:{node.lineno} imports {names} from random"
