"""What ``verify`` checks of a ``grade`` output folder and of a batch's: the grade is its games.

A grade folder holds grade.json (each item's points and each tier's games), the Gradescope
results.json, and one tournament folder per tier (``tiers/SLUG``: its store, games.jsonl,
results.json with the tier's SPRT).  Each tier folder is verified as a tournament's output
(``report.verify_tables.verify_run_folder``: games, plan, tables, the SPRT re-run), and then
grade.json against the tiers (Q1): each tier's ``games_played`` are the tier's games (ids,
seeds, the student's points), a tier item passes exactly when its re-run SPRT says so (H1, or
no decision with the LLR above 0), its points are all or nothing by that, and the grade's
points are the items' sum; the Gradescope file says grade.json's score.  With the grading
run's secret beside it (``secret.txt``), the grade's public ``secret_id`` and every tier's
published deal secret are re-derived from it.  A batch (grades.csv beside one folder per
student) is every student's folder, and grades.csv's points are their grade.json's.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tacocat_arena.grade.batch import GRADES_CSV
from tacocat_arena.grade.grader import (
    SECRET_FILE,
    STUDENT,
    TIERS_DIR,
    ItemKind,
    secret_id,
    tier_secret,
)
from tacocat_arena.grade.outputs import GRADE_JSON, RESULTS_JSON
from tacocat_arena.report.verify_tables import verify_run_folder
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.verify import (
    InputError,
    Problem,
    Verification,
    result_of,
    with_problems,
)


def is_grade(path: Path) -> bool:
    """Whether ``path`` is a grade's output folder or a batch's."""
    return path.is_dir() and ((path / GRADE_JSON).is_file() or (path / GRADES_CSV).is_file())


def verify_grades(path: Path) -> Verification:
    """A grade folder (see the module docstring), or every grade of a batch."""
    if (path / GRADE_JSON).is_file():
        return verify_grade(path, path / SECRET_FILE)
    students = [folder for folder in sorted(path.iterdir()) if (folder / GRADE_JSON).is_file()]
    if not students:
        raise InputError(f"{path} holds {GRADES_CSV} but no student's folder with {GRADE_JSON}")
    results = [verify_grade(folder, path / SECRET_FILE) for folder in students]
    found = [p for result in results for p in result.problems]
    found += _grades_csv(path, students)
    first = results[0]
    total = Verification(
        sum(r.games for r in results),
        sum(r.unplayed for r in results),
        sum(r.timed for r in results),
        (),
        "; ".join(
            f"{s.name}: {r.unchecked}"
            for s, r in zip(students, results, strict=True)
            if r.unchecked
        ),
        first.folder,
    )
    return with_problems(total, found, f"{len(students)} students' grades, and {GRADES_CSV}")


def verify_grade(folder: Path, secret_path: Path) -> Verification:
    """One student's grade folder; ``secret_path`` the grading run's secret, if kept."""
    try:
        grade = json.loads((folder / GRADE_JSON).read_text(encoding="utf-8"))
        items = list(grade["items"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise InputError(f"{folder / GRADE_JSON} is not a grade ({error})") from None
    where = str(folder)
    found: list[Problem] = []
    games = unplayed = timed = 0
    unchecked: list[str] = []
    secret = _secret(secret_path)
    if secret is not None and grade.get("secret_id") != secret_id(secret):
        found.append(
            Problem(where, None, "Q1", f"grade.json's secret_id is not {secret_path.name}'s")
        )
    for item in items:
        if item.get("kind") != ItemKind.TIER.value or not item.get("folder"):
            continue
        tier = folder / str(item["folder"])
        result = verify_run_folder(tier)
        games, unplayed, timed = (
            games + result.games,
            unplayed + result.unplayed,
            timed + result.timed,
        )
        if result.unchecked:
            unchecked.append(f"{item['folder']}: {result.unchecked}")
        found += [
            Problem(f"{item['folder']}/{p.game_id}", p.round, p.rule, p.message)
            for p in result.problems
        ]
        found += _tier_item(where, item, tier, result, secret)
    points = sum(float(item.get("points", 0)) for item in items)
    if abs(points - float(grade.get("points", 0))) > 1e-9:
        found.append(
            Problem(
                where,
                None,
                "Q1",
                f"grade.json's points {grade.get('points')!r} are not its items' sum {points:g}",
            )  # fmt: skip
        )
    found += _gradescope(folder, grade)
    return Verification(
        games,
        unplayed,
        timed,
        tuple(found),
        "; ".join(unchecked),
        "every tier's folder as a tournament's, and grade.json as its tiers' games say"
        + ("; the secret re-derived" if secret is not None else ""),
    )


def _secret(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def _tier_item(
    where: str,
    item: Mapping[str, Any],
    tier: Path,
    result: Verification,
    secret: str | None,
) -> list[Problem]:
    """Q1 of one tier item against its verified folder."""
    name = item.get("name")
    try:
        played = [result_of(entry) for entry in result.entries]
    except (ValueError, TypeError):
        return []  # the tier's own checks name the game
    said: list[str] = []
    expected = [[r.game_id, r.seed, _student_points(r)] for r in played]
    stated = [[g.get("game_id"), g.get("seed"), g.get("points")] for g in item["games_played"]]
    if stated != expected:
        said.append(
            f"tier {name!r}: grade.json's games_played are not the "
            f"games of {TIERS_DIR}/{tier.name} ({len(stated)} listed, {len(expected)} "
            "in the folder, or their seeds or points differ)"
        )
    try:
        document = json.loads((tier / RESULTS_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return [Problem(where, None, "Q1", text) for text in said]  # the tier's check says so
    if not isinstance(document, Mapping):
        document = {}
    said += _tier_verdict(name, item, document.get("sprt"))
    metadata = document.get("metadata")
    published = metadata.get("deal_secret") if isinstance(metadata, Mapping) else None
    if secret is not None and published is not None and published != tier_secret(secret, tier.name):
        said.append(f"tier {name!r} was dealt with another secret than the grading run's")
    return [Problem(where, None, "Q1", text) for text in said]


def _tier_verdict(name: Any, item: Mapping[str, Any], sprt: Any) -> list[str]:
    """A tier item's verdict against its published SPRT, and its points against its verdict."""
    said = []
    if isinstance(sprt, Mapping):
        # The tier's folder check re-ran the published SPRT over the games (S4): from it,
        # the verdict and the points.
        decision, llr = sprt.get("decision"), sprt.get("llr")
        passed = decision == "H1" or (decision == "none" and isinstance(llr, float) and llr > 0)
        if item.get("passed") is not passed:
            said.append(
                f"tier {name!r} is marked passed={item.get('passed')}"
                f", but its SPRT ({sprt.get('summary')}) says passed={passed}"
            )
    points, most = item.get("points"), item.get("max_points")
    if points != (most if item.get("passed") else 0.0):
        said.append(
            f"tier {name!r} gives {points!r} of {most!r} points, "
            f"but it {'passed' if item.get('passed') else 'failed'}"
        )
    return said


def _student_points(result: GameResult) -> float:
    return result.score(result.seats.index(STUDENT)) if STUDENT in result.seats else 0.0


def _gradescope(folder: Path, grade: Mapping[str, Any]) -> list[Problem]:
    path = folder / RESULTS_JSON
    if not path.is_file():
        return []  # written only with --gradescope
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        return [Problem(str(folder), None, "Q1", f"{RESULTS_JSON} is not JSON ({error})")]
    found = []
    if document.get("score") != grade.get("points"):
        found.append(
            Problem(
                str(folder),
                None,
                "Q1",
                f"Gradescope's score {document.get('score')!r} is "
                f"not grade.json's points {grade.get('points')!r}",
            )  # fmt: skip
        )
    tests = document.get("tests")
    items = grade.get("items", [])
    if not isinstance(tests, list) or [t.get("score") for t in tests] != [
        i.get("points") for i in items
    ]:
        found.append(
            Problem(str(folder), None, "Q1", "Gradescope's tests do not score grade.json's items")
        )
    return found


def _grades_csv(batch: Path, students: list[Path]) -> list[Problem]:
    try:
        with open(batch / GRADES_CSV, newline="", encoding="utf-8") as handle:
            rows = {row["student"]: row for row in csv.DictReader(handle)}
    except (OSError, KeyError, csv.Error) as error:
        return [Problem(str(batch), None, "Q1", f"{GRADES_CSV} cannot be read ({error})")]
    found = []
    for folder in students:
        grade = json.loads((folder / GRADE_JSON).read_text(encoding="utf-8"))
        row = rows.pop(grade.get("student", folder.name), None)
        if row is None:
            found.append(
                Problem(str(batch), None, "Q1", f"{GRADES_CSV} has no row for {folder.name}")
            )
        elif row.get("points") != f"{grade.get('points', 0):g}":
            found.append(
                Problem(
                    str(batch),
                    None,
                    "Q1",
                    f"{GRADES_CSV} gives {folder.name} "
                    f"{row.get('points')} points, grade.json {grade.get('points')!r}",
                )  # fmt: skip
            )
    for student in rows:
        found.append(Problem(str(batch), None, "Q1", f"{GRADES_CSV}'s {student} has no folder"))
    return found
