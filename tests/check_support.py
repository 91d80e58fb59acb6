"""Running ``tacocat-arena check`` as a user would: the real CLI in a subprocess
(``run_check``), or the same command in this process (``check_in_process``: its bot still a
real process over loopback gRPC, without the CLI's own start)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from cli_support import invoke_cli

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


def check_in_process(command: str, *extra: str) -> tuple[int, dict[str, Any]]:
    """``run_check`` through Click in this process, from the repository's folder as the
    subprocess runs: the same options, report and exit code, the bot started by the same
    launcher; without a Python start and the CLI's imports (~0.4 s of CPU a check)."""
    done = invoke_cli("check", command, "--json", *extra, cwd=REPO_ROOT)
    assert done.stdout, done.stderr  # a crash's traceback is there
    return done.returncode, json.loads(done.stdout)


def statuses(report: dict[str, Any]) -> dict[str, str]:
    """Each check's status by name."""
    return {r["name"]: r["status"] for r in report["results"]}
