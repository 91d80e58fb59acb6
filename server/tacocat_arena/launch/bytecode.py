"""The bytecode of what a Python bot imports from the arena's installation, compiled once.

A Python module without an up-to-date ``__pycache__`` entry is compiled from source each time
it is imported, and a sandboxed bot cannot write one: it runs as uid 65534 and sees the
installation read-only.  pip compiles what it installs into site-packages (grpcio, protobuf),
but an editable install or a checkout has only what something happened to write, and nothing
at all where ``PYTHONDONTWRITEBYTECODE`` is set (as on the project's own machine): every start
of the example bot compiled the SDK, the generated protocol, the engine and the bot again,
about 26 ms of CPU (``bench sandbox``; docs/submissions.md, "How fast").  So the runner
compiles that code (``BOT_CODE``) once per process, before its first Python bot starts:
``compileall`` writes only what is missing or older than its source, so after the first
time it costs a stat and a header read a file (a few ms).  Where the installation is not
writable (installed by someone else), nothing is written and nothing fails.

Only the arena's own code: a bot package's modules are its author's, in a folder the arena
does not write, and a program's main script is never cached by Python anyway.
"""

from __future__ import annotations

import compileall
import contextlib
import functools
import importlib.util
import sys
from pathlib import Path

#: The packages of the installation a Python bot imports (the SDK, the protocol it speaks,
#: the engine parts the SDK uses, the policies the greedy, search and ISMCTS bots play, the
#: built-ins' descriptions ``python -m example_bots builtin:...`` parses, the example bots),
#: with how deep their folders are walked (example_bots holds the Node example's
#: node_modules: its modules are all at the top).  Without ``play`` a greedy or search bot's
#: start compiled its policies every time: ~25 ms of CPU of ~150 (tests/test_bytecode.py
#: checks that every module an example bot imports from outside the installation is here).
BOT_CODE = (
    ("tacocat_bot", 10),
    ("tacocat", 10),
    ("tacocat_arena.engine", 10),
    ("tacocat_arena.protocol", 10),
    ("tacocat_arena.play", 10),
    ("tacocat_arena.launch", 0),
    ("example_bots", 0),
)


def _installed(folder: Path) -> bool:
    """Whether ``folder`` is in this Python's installation or environment (pip compiled it)."""
    prefixes = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    return any(folder == p or p in folder.parents for p in prefixes)


@functools.cache
def compile_bot_code() -> tuple[Path, ...]:
    """Compile ``BOT_CODE``'s stale or missing bytecode (see the module docstring), once per
    process; the folders it checked (none in a pip-installed arena)."""
    checked: list[Path] = []
    for name, depth in BOT_CODE:
        with contextlib.suppress(ImportError, ValueError):
            spec = importlib.util.find_spec(name)
            if spec is None or not spec.submodule_search_locations:
                continue
            for location in spec.submodule_search_locations:
                folder = Path(location).resolve()
                if _installed(folder) or not folder.is_dir():
                    continue
                # quiet=2: a folder we may not write is the installer's business, not an error.
                compileall.compile_dir(folder, maxlevels=depth, quiet=2)
                checked.append(folder)
                init = folder.parent / "__init__.py"
                if "." in name and init.is_file():  # the parent package (tacocat_arena)
                    compileall.compile_file(init, quiet=2)
    return tuple(checked)
