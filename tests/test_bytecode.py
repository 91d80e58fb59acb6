"""The bytecode of the code a Python bot imports is compiled once by the runner
(launch/bytecode.py): a sandboxed bot (uid 65534, the installation read-only) cannot write
its caches, and without them every start compiled the SDK, protocol and engine again."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from tacocat_arena.launch import bytecode


def test_every_module_of_the_bot_code_has_fresh_bytecode_after_one_compile() -> None:
    checked = bytecode.compile_bot_code.__wrapped__()
    names = {folder.name for folder in checked}
    # A checkout (editable install): all five; a pip install: none (pip compiled them).
    assert names in ({"tacocat_bot", "tacocat", "engine", "protocol", "example_bots"}, set())
    for folder in checked:
        # example_bots is compiled at its top only (its modules are there; node_modules below).
        sources = folder.glob("*.py") if folder.name == "example_bots" else folder.rglob("*.py")
        for source in sources:
            cache = Path(importlib.util.cache_from_source(str(source)))
            assert cache.is_file(), source
            assert cache.stat().st_mtime >= source.stat().st_mtime - 1, source
            assert cache.stat().st_mode & 0o004, f"{cache} is not readable by uid 65534"


def test_the_installations_own_folders_are_left_to_pip() -> None:
    assert bytecode._installed(Path(sys.prefix) / "lib" / "site-packages")
    assert not bytecode._installed(Path("/nowhere/tacocat_bot"))
