"""``grade --analyze K``: the student's K worst games of a grade, analysed (``play.analysis``,
as ``analyze`` does: each decision re-searched from the student's information set, the costly
ones marked), so the feedback says which decisions lost them (docs/grading.md).

The worst games are those the student scored least in over every tier (a loss 0, a draw
0.5), the earliest first among equals; a grade without losses or draws analyses nothing.
Each analysed game gets ``analysis/TIER-GAME.html`` (its replay page with the marks) and
``analysis/TIER-GAME.json`` (``analyze --json``'s), and ``analysis.json`` lists them; the
grade's report.html shows each one's accuracy and marks beside its replay link.  Nothing of
grade.json changes: the points are the rubric's, never the analysis's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tacocat_arena.engine.record import RecordError
from tacocat_arena.grade.outputs import REPORT_HTML, decisive_games
from tacocat_arena.play.analysis import Reference, analyze_record
from tacocat_arena.report import render_replay
from tacocat_arena.report.grading import render_grade_page
from tacocat_arena.tournament.verify import InputError, load_games

#: The folder (in the grade's) of the analysed games' pages, and the list of them.
ANALYSIS_DIR = "analysis"
ANALYSIS_JSON = "analysis.json"


Item = Mapping[str, Any]


def worst_games(grade: Item, count: int) -> list[tuple[Item, Item]]:
    """The ``count`` games (item, game) the student scored least in (below a win)."""
    games = [
        (item, game)
        for item in grade.get("items", ())
        if item.get("folder")
        for game in item.get("games_played", ())
        if game.get("points", 1) < 1
    ]
    return sorted(games, key=lambda pair: pair[1]["points"])[:count]  # stable: earliest first


def analyse_worst(
    out: Path,
    grade: Mapping[str, Any],
    count: int,
    reference: Reference,
    student: str,
    *,
    notice: Callable[[str], None] = lambda text: None,
) -> list[dict[str, Any]]:
    """Analyse the student's ``count`` worst games of the grade written in ``out``; write
    their pages and ``analysis.json``; the list (one row a game)."""
    rows = []
    folder = out / ANALYSIS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    for item, game in worst_games(grade, count):
        game_id = str(game["game_id"])
        tier = Path(str(item["folder"])).name
        try:
            entries = load_games(out / str(item["folder"]))
        except InputError as error:
            notice(f"analysis of {game_id} ({item['name']}): {error}")
            continue
        entry = next((e for e in entries if e.game_id == game_id), None)
        if entry is None or student not in entry.seat_names:
            continue
        seat = list(entry.seat_names).index(student)
        notice(f"analysing {item['name']} game {game_id} (seat {seat}) with {reference}")
        try:
            analysis = analyze_record(entry.record, seat, reference)
        except RecordError as error:
            notice(f"analysis of {game_id}: the record: {error}")
            continue
        shown = analysis.to_json()
        name = f"{tier}-{game_id}"
        (folder / f"{name}.json").write_text(json.dumps({"game": game_id, **shown}, indent=1))
        page = render_replay(
            dict(entry.record), list(entry.seat_names), game_id=game_id, analysis=shown
        )
        (folder / f"{name}.html").write_text(page, encoding="utf-8")
        rows.append(
            {
                "item": item["name"],
                "game_id": game_id,
                "points": game["points"],
                "seat": seat,
                "reference": shown["reference"],
                "accuracy": shown["accuracy"],
                "marks": shown["marks"],
                "costliest": [
                    d for d in shown["decisions"] if d["index"] in set(shown["costliest"])
                ],
                "href": f"{ANALYSIS_DIR}/{name}.html",
            }
        )
    (out / ANALYSIS_JSON).write_text(json.dumps(rows, indent=2) + "\n")
    return rows


def with_analysis(items: list[dict[str, Any]], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The report page's items (with their ``replays``), each analysed game's replay entry
    given its ``analysis`` row."""
    by_game = {(row["item"], row["game_id"]): row for row in rows}
    return [
        {
            **item,
            "replays": [
                {**game, "analysis": by_game.get((item["name"], game["game_id"]))}
                for game in item.get("replays", ())
            ],
        }
        for item in items
    ]


def rewrite_report(out: Path, grade: Mapping[str, Any], rows: list[dict[str, Any]]) -> None:
    """The grade's report.html again, each analysed game's accuracy and marks beside it."""
    items = [{**item, "replays": decisive_games(item)} for item in grade["items"]]
    (out / REPORT_HTML).write_text(render_grade_page(grade, with_analysis(items, rows)))
