"""``tacocat-arena ARGS`` run in this process by Click's ``CliRunner``, answered as
``subprocess.run`` answers (``returncode``, ``stdout``, ``stderr``), for the checks that need
no process of their own: a refused config, a bot command that cannot be found, a match whose
games and records are what is checked.

Why: each ``python -m tacocat_arena.cli`` costs about half a second of CPU to start, before it
does anything; a refusal then takes a few milliseconds.  What a separate process alone shows
(a signal, a kill -9, output on a real terminal, a bot's stderr on the command's own) stays
tested with a process (tests/test_tournament_cli.py's ``run_cli``, tests/test_signals.py).

The command runs in ``cwd`` (``contextlib.chdir``, restored after), as a process started
there would, so that "nothing was written" and "relative to the config's folder" mean the
same.  An exception that escapes the command (not Click's exit) is a crash: its traceback is
put in ``stderr``, so a test's ``"Traceback" not in stderr`` still sees it.
"""

from __future__ import annotations

import contextlib
import subprocess
import traceback
from collections.abc import Mapping
from pathlib import Path

from click.testing import CliRunner

from tacocat_arena.cli import main


def invoke_cli(
    *args: object, cwd: Path, env: Mapping[str, str | None] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``tacocat-arena ARGS`` in process in ``cwd`` with ``env`` added to (None: taken
    out of) the environment; its exit code and what it printed to stdout and stderr."""
    runner = CliRunner(env=dict(env or {}))
    with contextlib.chdir(cwd):
        result = runner.invoke(main, [str(arg) for arg in args])
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        assert result.exc_info is not None
        stderr += "".join(traceback.format_exception(*result.exc_info))
    return subprocess.CompletedProcess(
        ["tacocat-arena", *map(str, args)], result.exit_code, result.stdout, stderr
    )
