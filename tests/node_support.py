"""The Node.js example bot's locked dependencies (example_bots/node/node_modules), installed
with ``npm ci`` once, for the tests that run it (test_node_bot.py, test_hosted.py).

``node_modules`` is a folder of the checkout that every test worker shares, so the install
holds a lock: under ``pytest -n`` a second worker waits for the first one's install instead
of running ``npm ci`` into the same folder at the same time (which removes it first).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

NODE_DIR = Path(__file__).resolve().parents[1] / "example_bots" / "node"


def node_dependencies() -> Path:
    """example_bots/node with its dependencies; skips (with the reason) without node, npm or
    a working ``npm ci``."""
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        pytest.skip("node or npm is not on PATH (install Node.js 18+ to test example_bots/node)")
    # The lock is on the folder itself: a lock file in it would be packed with the bot.
    folder = os.open(NODE_DIR, os.O_RDONLY)
    try:
        fcntl.flock(folder, fcntl.LOCK_EX)
        installed = NODE_DIR / "node_modules" / ".package-lock.json"
        if installed.is_file():
            return NODE_DIR
        try:
            subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=NODE_DIR, check=True, capture_output=True, timeout=600,
            )  # fmt: skip
        except subprocess.CalledProcessError as error:
            pytest.skip(f"`npm ci` in example_bots/node failed: {error.stderr.decode()[-500:]}")
        except subprocess.TimeoutExpired:
            pytest.skip("`npm ci` in example_bots/node took over 10 minutes")
    finally:
        os.close(folder)  # and with it the lock
    return NODE_DIR
