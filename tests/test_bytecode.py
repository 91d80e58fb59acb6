"""The bytecode of the code a Python bot imports is compiled once by the runner
(launch/bytecode.py): a sandboxed bot (uid 65534, the installation read-only) cannot write
its caches, and without them every start compiled the SDK, protocol and engine again."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tacocat_arena.launch import bytecode


def test_every_module_of_the_bot_code_has_fresh_bytecode_after_one_compile() -> None:
    checked = bytecode.compile_bot_code.__wrapped__()
    names = {folder.name for folder in checked}
    # A checkout (editable install): all of them; a pip install: none (pip compiled them).
    every = {"tacocat_bot", "tacocat", "engine", "protocol", "play", "launch", "example_bots"}
    assert names in (every, set())
    for folder in checked:
        # example_bots is compiled at its top only (its modules are there; node_modules below).
        sources = folder.glob("*.py") if folder.name == "example_bots" else folder.rglob("*.py")
        for source in sources:
            cache = Path(importlib.util.cache_from_source(str(source)))
            assert cache.is_file(), source
            assert cache.stat().st_mtime >= source.stat().st_mtime - 1, source
            assert cache.stat().st_mode & 0o004, f"{cache} is not readable by uid 65534"


#: Every example bot's module, and the built-ins' entry point (``python -m example_bots``).
BOT_MODULES = (
    "example_bots.random_bot",
    "example_bots.greedy_bot",
    "example_bots.search_bot",
    "example_bots.ismcts_bot",
    "example_bots.__main__",
    "example_bots.builtin",
)


@pytest.mark.slow
def test_every_module_a_bot_imports_from_the_checkout_is_compiled() -> None:
    """What the example bots really import, read from a fresh interpreter: each module from
    outside the installation (whose bytecode pip wrote) has fresh bytecode once the runner
    compiled ``BOT_CODE``, so no start compiles it (a package left out of ``BOT_CODE``, as
    ``play`` was, fails here)."""
    bytecode.compile_bot_code.__wrapped__()
    code = (
        "import importlib, sys\n"
        "for name in sys.argv[1:]:\n    importlib.import_module(name)\n"
        "print('\\n'.join(sorted({getattr(m, '__file__', None) or '' for m in "
        "list(sys.modules.values())})))"
    )
    # -B: it writes no bytecode of its own, as a sandboxed bot cannot.
    done = subprocess.run([sys.executable, "-B", "-c", code, *BOT_MODULES], capture_output=True,
                          text=True, timeout=120, check=True)  # fmt: skip
    ours = [Path(line) for line in done.stdout.split() if line.endswith(".py")]
    ours = [source for source in ours if not bytecode._installed(source.resolve().parent)]
    assert any(source.name == "policies.py" for source in ours) or not ours, ours
    for source in ours:
        cache = Path(importlib.util.cache_from_source(str(source)))
        assert cache.is_file() and cache.stat().st_mtime >= source.stat().st_mtime - 1, source


def test_the_installations_own_folders_are_left_to_pip() -> None:
    assert bytecode._installed(Path(sys.prefix) / "lib" / "site-packages")
    assert not bytecode._installed(Path("/nowhere/tacocat_bot"))
