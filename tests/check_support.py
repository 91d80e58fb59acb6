"""Running ``tacocat-arena check`` as a user would: the real CLI in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]


def run_check(command: str, *extra: str, timeout: float = 180) -> tuple[int, dict[str, Any]]:
    """``tacocat-arena check COMMAND --json``: its exit code and its report."""
    done = subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", "check", command, "--json", *extra],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def statuses(report: dict[str, Any]) -> dict[str, str]:
    """Each check's status by name."""
    return {r["name"]: r["status"] for r in report["results"]}
