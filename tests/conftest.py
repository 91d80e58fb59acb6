"""Fixtures shared by every test module.

``browser`` and ``browser_page`` (tests/browser_support.py): a headless system Chromium and a
watched page in it; ``axe_source`` (tests/a11y_support.py): axe-core for the accessibility
audit. The tests that use them skip with the reason where there is none.  ``cleanup``: arena
and bot processes killed at the end of a test (the arena tests').

``tmp_path`` is world-readable: a root runner's sandboxed bots run as uid 65534, and pytest
makes it 0700 (bots in a folder of their own, as organizers keep them, read it as is).
"""

import os
import signal
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["browser_support", "a11y_support"]


@pytest.fixture
def tmp_path(tmp_path: Path) -> Path:
    """pytest's, readable by the sandbox's uid (the folders above it do not matter)."""
    if os.geteuid() == 0:
        tmp_path.chmod(0o755)
    return tmp_path


@pytest.fixture
def cleanup() -> object:
    """Arena and bot processes (tests/arena_support.py) registered here are killed at the end
    of the test, whatever happened."""
    from arena_support import BotProc

    started: list[Any] = []
    yield started
    for item in reversed(started):
        if isinstance(item, BotProc):
            item.kill()
        else:
            item.stop(signal.SIGKILL, timeout=10)
