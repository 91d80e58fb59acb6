"""The learning-library adapters are imported by nothing else (docs/architecture.md)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import tacocat_arena

PACKAGE = Path(tacocat_arena.__file__).parent
ROOT = PACKAGE.parents[1]


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


#: The benchmark of the wrappers (``tacocat-arena bench envs``) imports them inside its
#: functions, so only running that command loads them (checked below for the CLI).
MEASURES_ENVS = PACKAGE / "bench" / "envs.py"


def test_no_module_outside_envs_imports_envs():
    sources = [
        *PACKAGE.rglob("*.py"),
        *(ROOT / "client_sdk").rglob("*.py"),
        *(ROOT / "example_bots").glob("*.py"),
    ]
    offenders = [
        str(path.relative_to(ROOT))
        for path in sources
        if not path.is_relative_to(PACKAGE / "envs")
        and path != MEASURES_ENVS
        and any(name.startswith("tacocat_arena.envs") for name in imported_modules(path))
    ]
    assert offenders == []


@pytest.mark.slow
def test_engine_referee_tournament_and_cli_load_without_the_learning_libraries():
    code = (
        "import sys, json\n"
        "import tacocat_arena.engine, tacocat_arena.play.ismcts, tacocat_arena.referee\n"
        "import tacocat_arena.tournament.runner, tacocat_arena.cli, tacocat_arena.bench.envs\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pyspiel', 'open_spiel', 'pettingzoo', 'gymnasium', 'numpy') "
        "or m.startswith('tacocat_arena.envs'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
