"""``verify`` on what the suite writes: every tournament output folder a test produces must
re-verify, so the referee and ``verify`` keep one definition of every rule they share (the
clock above all: issue 24).

``assert_verifies(out)`` runs ``verify_path`` on the folder and requires no problem in any
game, line or plan; a finished tournament's folder is OK outright, an unfinished one (no
deal secret published yet) is reported as not checked, never as OK.
"""

from __future__ import annotations

import json
from pathlib import Path

from tacocat_arena.tournament.verify import Verification, verify_path


def assert_verifies(out: Path) -> Verification:
    """Verify a tournament output folder the test wrote (see the module docstring)."""
    result = verify_path(out)
    assert not result.problems, "\n".join(map(str, result.problems))
    results = out / "results.json"
    complete = results.exists() and json.loads(results.read_text())["metadata"].get("complete")
    assert result.ok == bool(complete), result.unchecked
    return result
