"""``verify`` on what the suite writes: every tournament output folder a test produces must
re-verify, so the referee and ``verify`` keep one definition of every rule they share (the
clock above all: issue 24).

``assert_verifies(out)`` runs ``verify`` on the folder (``cli.run.verify_any``, as the
command does) and requires no problem in any game, line, plan or table; a finished
tournament's folder is OK outright, an unfinished one (no deal secret published yet) is
reported as not checked, never as OK.
"""

from __future__ import annotations

import json
from pathlib import Path

from tacocat_arena.cli.run import verify_any
from tacocat_arena.tournament.verify import Verification


def assert_verifies(out: Path) -> Verification:
    """Verify a tournament output folder the test wrote (see the module docstring)."""
    result = verify_any(out)
    assert not result.problems, "\n".join(map(str, result.problems))
    results = out / "results.json"
    complete = results.exists() and json.loads(results.read_text())["metadata"].get("complete")
    assert result.ok == bool(complete), result.unchecked
    return result
