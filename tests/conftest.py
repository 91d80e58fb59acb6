"""Fixtures shared by every test module.

``browser`` and ``browser_page`` (tests/browser_support.py): a headless system Chromium and a
watched page in it; ``axe_source`` (tests/a11y_support.py): axe-core for the accessibility
audit; ``cpp_bot`` (tests/cpp_support.py): the C++ example bot, built once per session. The
tests that use them skip with the reason where there is none.  ``cleanup``: arena
and bot processes killed at the end of a test (the arena tests').

``tmp_path`` and ``mktemp`` folders are world-readable: a root runner's sandboxed bots run as
uid 65534, and pytest makes them 0700 (bots in a folder of their own, as organizers keep
them, read it as is).
"""

import os
import signal
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["browser_support", "a11y_support", "cpp_support"]


@pytest.fixture(scope="session", autouse=True)
def _temporary_folders_readable_by_bots(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every folder ``tmp_path`` and ``tmp_path_factory.mktemp`` make is readable by the
    sandbox's uid when the tests run as root (the folders above them do not matter)."""
    if os.geteuid() != 0:
        return
    mktemp = tmp_path_factory.mktemp

    def readable_mktemp(basename: str, numbered: bool = True) -> Path:
        folder = mktemp(basename, numbered)
        folder.chmod(0o755)
        return folder

    tmp_path_factory.mktemp = readable_mktemp  # type: ignore[method-assign]


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
