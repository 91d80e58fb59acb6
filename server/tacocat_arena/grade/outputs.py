"""What a grade is written as: grade.json, Gradescope's results.json, report.html, a table.

``grade.json`` is the teacher's whole record of a grade (every item, each tier's games with
their deal seeds, the grading secret's public id; never the secret itself).  ``results.json``
follows Gradescope's autograder specification (gradescope-autograders.readthedocs.io,
"Autograder Specifications" and "Leaderboards"): a top-level ``score``, ``tests`` with
``name``, ``score``, ``max_score``, ``status``, ``output`` and ``visibility`` each, and a
``leaderboard`` of ``{"name", "value", "order"}`` entries.  ``report.html`` is the student's
page: each item, and links to each tier's report and to the replays of the games that
decided it (written by the report package).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.table import Table

from tacocat_arena.grade.grader import Grade, ItemKind, ItemResult
from tacocat_arena.grade.rubric import VISIBILITIES
from tacocat_arena.report.grading import render_grade_page
from tacocat_arena.report.writer import REPLAYS, replay_name

GRADE_JSON = "grade.json"
RESULTS_JSON = "results.json"
REPORT_HTML = "report.html"
#: Version of grade.json's layout.
GRADE_FORMAT = 1


def item_dict(item: ItemResult, visibility: str = "visible") -> dict[str, Any]:
    """One item of grade.json (``visibility``: Gradescope's, from the rubric)."""
    return {
        "name": item.name,
        "visibility": visibility,
        "kind": item.kind.value,
        "points": item.points,
        "max_points": item.max_points,
        "passed": item.passed,
        "output": item.output,
        "games": item.games,
        "score": item.score,
        "score_low": item.score_low,
        "score_high": item.score_high,
        "folder": item.folder,
        "games_played": [
            {"game_id": game_id, "seed": seed, "points": points}
            for game_id, seed, points in item.games_played
        ],
    }


def grade_dict(grade: Grade) -> dict[str, Any]:
    """grade.json's contents."""
    return {
        "format": GRADE_FORMAT,
        "student": grade.student,
        "target": grade.target,
        "rubric": grade.rubric,
        "points": grade.points,
        "max_points": grade.max_points,
        "secret_id": grade.secret_id,
        "started": grade.started,
        "seconds": round(grade.seconds, 1),
        "load": list(grade.load),
        "items": [
            item_dict(item, grade.visibility.get(item.name, "visible")) for item in grade.items
        ],
    }


def _visibility(item: Mapping[str, Any], default: str) -> str:
    """An item's own Gradescope visibility when its rubric table set one, else ``default``."""
    own = item.get("visibility", "visible")
    return str(own) if own != "visible" else default


def gradescope_dict(grade: Mapping[str, Any], visibility: str = "visible") -> dict[str, Any]:
    """Gradescope's results.json from grade.json's contents (``grade_dict``)."""
    if visibility not in VISIBILITIES:
        raise ValueError(f"visibility must be one of {', '.join(VISIBILITIES)}: {visibility!r}")
    tests = []
    for number, item in enumerate(grade["items"], start=1):
        tests.append(
            {
                "name": item["name"],
                "number": str(number),
                "score": item["points"],
                "max_score": item["max_points"],
                "status": "passed" if item["passed"] else "failed",
                "output": item["output"],
                # The rubric's visibility of the item, else the whole result's.
                "visibility": _visibility(item, visibility),
            }
        )
    leaderboard: list[dict[str, Any]] = [{"name": "Points", "value": grade["points"]}]
    for item in grade["items"]:
        if item["kind"] == ItemKind.TIER.value and item["score"] is not None:
            leaderboard.append({"name": f"Score: {item['name']}", "value": round(item["score"], 3)})
    return {
        "score": grade["points"],
        "execution_time": round(grade["seconds"]),
        "output": (
            f"{grade['points']:g} of {grade['max_points']:g} points ({grade['rubric']}); "
            "report.html has the games that decided each tier."
        ),
        "visibility": visibility,
        "tests": tests,
        "leaderboard": leaderboard,
    }


def decisive_games(item: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The replays of a tier's games (all of them: an SPRT decides on every pair it saw),
    as links relative to the grade's folder."""
    folder = item.get("folder")
    if not folder:
        return []
    return [
        {**game, "href": f"{folder}/{REPLAYS}/{replay_name(game['game_id'])}"}
        for game in item["games_played"]
    ]


def write_grade(out: Path, grade: Grade, *, gradescope: bool = False) -> dict[str, Any]:
    """Write grade.json, report.html and (``gradescope``) results.json into ``out``."""
    data = grade_dict(grade)
    _write(out / GRADE_JSON, json.dumps(data, indent=2) + "\n")
    pages = [{**item, "replays": decisive_games(item)} for item in data["items"]]
    _write(out / REPORT_HTML, render_grade_page(data, pages))
    if gradescope:
        _write(out / RESULTS_JSON, json.dumps(gradescope_dict(data), indent=2) + "\n")
    return data


def grade_table(grade: Mapping[str, Any]) -> Table:
    """The terminal summary: each item's result, score ± interval, games and points."""
    table = Table(title=f"{grade['student']}: {grade['points']:g} / {grade['max_points']:g} points")
    for header in ("item", "result", "score (95%)", "games", "points"):
        table.add_column(header, justify="left" if header in ("item", "result") else "right")
    for item in grade["items"]:
        score = "—"
        if item["score"] is not None:
            score = f"{item['score']:.2f}"
            if item["score_low"] is not None:
                score += f" ({item['score_low']:.2f}-{item['score_high']:.2f})"
        table.add_row(
            item["name"],
            "[green]pass[/]" if item["passed"] else "[red]fail[/]",
            score,
            str(item["games"]) if item["games"] else "—",
            f"{item['points']:g} / {item['max_points']:g}",
        )
    return table


def _write(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
