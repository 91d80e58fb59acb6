"""``tacocat-arena bench grade``: how long the default rubric takes to grade one bot.

The budget (docs/grading.md): the default rubric grades a bot at the search bot's speed in
at most 3 minutes of wall time on a quiet 2-core machine.  The bench grades such a bot
(``builtin:search`` by default: about 20 ms of CPU per decision) with the rubric, in a
temporary folder, and reports the wall time of the whole grade and of each item's games,
with the machine's load before and after (the machine may be shared).
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tacocat_arena.bench.arena import load_line
from tacocat_arena.grade.batch import grade_to_folder
from tacocat_arena.grade.grader import new_secret
from tacocat_arena.grade.rubric import load_rubric

#: The budget of one grade by the default rubric, in seconds of wall time (quiet, 2 cores).
BUDGET_S = 180.0


@dataclass(frozen=True)
class GradeFigures:
    """One timed grade: wall seconds, the grade's items, the load around it."""

    target: str
    grade_clock_s: float
    seconds: float
    grade: dict[str, Any]
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]

    def lines(self) -> list[str]:
        """The figures as the bench prints them."""
        items = self.grade["items"]
        games = sum(item["games"] for item in items if item["kind"] == "tier")
        out = [
            f"grade {self.target} by {self.grade['rubric']!r}: {self.seconds:.1f} s wall, "
            f"clock {self.grade_clock_s:g} s per decision, "
            f"{games} games, {self.grade['points']:g} / {self.grade['max_points']:g} points "
            f"(budget {BUDGET_S:.0f} s on a quiet 2-core machine: "
            f"{'within' if self.seconds <= BUDGET_S else 'OVER'})",
        ]
        for item in items:
            games_text = f", {item['games']} games" if item["kind"] == "tier" else ""
            why = "" if item["passed"] else f" ({item['output'].splitlines()[0][:160]})"
            out.append(
                f"  {item['name']}: {item['points']:g} / {item['max_points']:g}{games_text}{why}"
            )
        out.append(load_line(self.load_before, self.load_after))
        return out


def bench_grade(
    target: str = "builtin:search",
    rubric_path: Path | None = None,
    move_timeout_s: float | None = None,
) -> GradeFigures:
    """Grade ``target`` by the rubric (default: the shipped one) and time it.
    ``move_timeout_s`` replaces the rubric's clock: on a busy machine a bot's decisions
    take several times their quiet CPU time, and the grade would measure timeouts."""
    rubric = load_rubric(rubric_path)
    if move_timeout_s is not None:
        rubric = dataclasses.replace(rubric, move_timeout_s=move_timeout_s)
    before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="tacocat-bench-grade-") as folder:
        started = time.monotonic()
        data = grade_to_folder(
            target, rubric, Path(folder) / "grade", new_secret(), student="bench", gradescope=False
        )
        seconds = time.monotonic() - started
    return GradeFigures(target, rubric.move_timeout_s, seconds, data, before, os.getloadavg())
