"""Grading a folder of submissions: one grade per student, in parallel, each on its own.

Every entry of the submissions folder (a package folder, or a ``.zip``/``.tar.gz`` of one)
is one student, named by the entry (``alice.zip`` is ``alice``).  Each student is graded in
a process of its own (``python -m tacocat_arena.grade JOB``), at most ``workers`` at once,
under a wall-clock limit after which its whole process group is killed: a bad archive, a bot
that crashes, a build that never ends or even a grader that dies costs that student's grade
only (0 points, with the reason), never another's.  Every student is graded with the batch's
one secret, so all meet the same deals.  The batch writes ``grades.csv`` (student, points,
each item's points) and ``class.html`` beside one folder per student.
"""

from __future__ import annotations

import asyncio
import csv
import json
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tacocat_arena.grade.grader import (
    SECRET_FILE,
    STUDENT,
    Grade,
    GradeError,
    ItemKind,
    ItemResult,
    grade_bot,
    read_secret,
    secret_id,
    write_secret,
)
from tacocat_arena.grade.grader import not_graded as not_graded_items
from tacocat_arena.grade.outputs import GRADE_JSON, REPORT_HTML, write_grade
from tacocat_arena.grade.rubric import Rubric, load_rubric
from tacocat_arena.launch.build import run_bounded
from tacocat_arena.referee.stopping import run_until_signalled
from tacocat_arena.report.grading import render_class_page

GRADES_CSV = "grades.csv"
CLASS_HTML = "class.html"
_ARCHIVE = re.compile(r"\.(zip|tar\.gz|tgz|tar)$", re.IGNORECASE)
_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]+")


@dataclass(frozen=True)
class Job:
    """One student's grading, as the worker process receives it (JSON on its command line)."""

    student: str
    target: str
    out: str
    secret_file: str
    rubric: str | None
    gradescope: bool

    def to_json(self) -> str:
        return json.dumps(self.__dict__)

    @classmethod
    def from_json(cls, text: str) -> Job:
        return cls(**json.loads(text))


def grade_to_folder(
    target: str,
    rubric: Rubric,
    out: Path,
    secret: str,
    *,
    student: str,
    gradescope: bool,
    notice: Callable[[str], None] = lambda text: None,
    keep_secret: bool = True,
) -> dict[str, Any]:
    """Grade one bot and write its outputs into ``out``; grade.json's contents.  The secret
    goes into ``out/secret.txt`` unless ``keep_secret`` is off (a batch keeps one, beside the
    students' folders, so that no student's folder holds it)."""
    out.mkdir(parents=True, exist_ok=True)
    if keep_secret:
        write_secret(out / SECRET_FILE, secret)
    grade = run_until_signalled(
        grade_bot(target, rubric, out, secret, student=student, notice=notice)
    )
    return write_grade(out, grade, gradescope=gradescope)


def run_job(job: Job) -> None:
    """The worker process's work: one student's grade (``python -m tacocat_arena.grade``)."""
    rubric = load_rubric(None if job.rubric is None else Path(job.rubric))
    secret = read_secret(Path(job.secret_file))
    grade_to_folder(
        job.target,
        rubric,
        Path(job.out),
        secret,
        student=job.student,
        gradescope=job.gradescope,
        notice=print,
        keep_secret=False,
    )


def student_name(entry: Path) -> str:
    """A student's name from their package's folder or archive (``alice.zip`` is ``alice``):
    the one rule for a batch's entries and ``grade PACKAGE``'s default ``--student``; letters,
    digits and ``_.+-`` only (it names a folder and a CSV row)."""
    name = _ARCHIVE.sub("", entry.name) if entry.is_file() else entry.name
    return _UNSAFE.sub("_", name).strip("._") or STUDENT


def submissions(folder: Path) -> list[tuple[str, Path]]:
    """(student, package) for every entry of ``folder``, sorted by student."""
    if not folder.is_dir():
        raise GradeError(f"{folder}: not a folder of submissions")
    found: dict[str, Path] = {}
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if not entry.is_dir() and not (entry.is_file() and _ARCHIVE.search(entry.name)):
            continue
        student = student_name(entry)
        while student in found:
            student += "_"
        found[student] = entry
    return sorted(found.items())


async def grade_batch(
    folder: Path,
    rubric_path: Path | None,
    out: Path,
    secret: str,
    *,
    workers: int = 1,
    gradescope: bool = False,
    timeout_s: float | None = None,
    notice: Callable[[str], None] = lambda text: None,
) -> list[dict[str, Any]]:
    """Grade every submission in ``folder`` into ``out/STUDENT/``; every grade.json's contents,
    by student.  ``timeout_s`` (None: from the rubric's cap on games) bounds one student."""
    rubric = load_rubric(rubric_path)
    entries = submissions(folder)
    out.mkdir(parents=True, exist_ok=True)
    write_secret(out / SECRET_FILE, secret)
    limit = timeout_s if timeout_s is not None else student_timeout(rubric)
    gate = asyncio.Semaphore(max(1, workers))
    notice(
        f"grading {len(entries)} submissions from {folder}, {workers} at a time, at most "
        f"{limit:.0f} s each; deals of grading run {secret_id(secret)}"
    )

    async def one(student: str, path: Path) -> dict[str, Any]:
        async with gate:
            job = Job(
                student,
                str(path.resolve()),
                str((out / student).resolve()),
                str((out / SECRET_FILE).resolve()),
                None if rubric_path is None else str(rubric_path.resolve()),
                gradescope,
            )
            started = time.monotonic()
            data = await _run_worker(job, rubric, secret, limit)
            notice(
                f"{student}: {data['points']:g} / {data['max_points']:g} points "
                f"({time.monotonic() - started:.0f} s)"
            )
            return data

    grades = await asyncio.gather(*(one(student, path) for student, path in entries))
    write_class(out, rubric, grades, secret)
    return list(grades)


def student_timeout(rubric: Rubric) -> float:
    """A generous wall-clock limit on one student: build, check, then every tier to its cap
    at the whole clock per decision would be far more; 2 s per game covers a bot that uses
    its clock, plus 10 minutes for a build."""
    return 600.0 + 2.0 * rubric.max_games * max(1.0, rubric.move_timeout_s)


async def _run_worker(job: Job, rubric: Rubric, secret: str, limit: float) -> dict[str, Any]:
    out = Path(job.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / GRADE_JSON).unlink(missing_ok=True)
    log_path = out / "grader.log"
    argv = [sys.executable, "-m", "tacocat_arena.grade", job.to_json()]
    # The worker is the arena's own Python, with the organizer's environment; a student's
    # variables reach only the student's bot and build, inside their sandbox (launch.bots).
    code = await run_bounded(argv, log_path, limit, own_env=dict(os.environ))
    if code == 0 and (out / GRADE_JSON).exists():
        data: dict[str, Any] = json.loads((out / GRADE_JSON).read_text(encoding="utf-8"))
        return data
    if code is None:
        why = f"grading took over its limit of {limit:.0f} s and was stopped"
    else:
        tail = log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
        why = f"the grader exited with code {code}: " + " / ".join(tail)
    failed = ItemResult(
        name="conformance",
        kind=ItemKind.CONFORMANCE,
        points=0.0,
        max_points=rubric.conformance_points,
        passed=False,
        output=why,
    )
    grade = Grade(
        student=job.student,
        target=job.target,
        rubric=rubric.name,
        items=(failed, *not_graded_items(rubric, f"not graded: {why}")),
        secret_id=secret_id(secret),
        seconds=0.0,
        started=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        load=os.getloadavg(),
        visibility=rubric.visibility,
    )
    return write_grade(out, grade, gradescope=job.gradescope)


def write_class(out: Path, rubric: Rubric, grades: list[dict[str, Any]], secret: str) -> None:
    """grades.csv and class.html of a batch."""
    columns = [item["name"] for item in grades[0]["items"]] if grades else []
    with open(out / GRADES_CSV, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "points", "max_points", *columns, "note"])
        for grade in grades:
            by_name = {item["name"]: item["points"] for item in grade["items"]}
            writer.writerow(
                [
                    grade["student"],
                    f"{grade['points']:g}",
                    f"{grade['max_points']:g}",
                    *(f"{by_name.get(column, 0):g}" for column in columns),
                    _note(grade),
                ]
            )
    rows = [
        {
            "student": grade["student"],
            "points": grade["points"],
            "max_points": grade["max_points"],
            "href": f"{grade['student']}/{REPORT_HTML}",
            "error": _note(grade),
            "tiers": {item["name"]: item["points"] for item in grade["items"]},
        }
        for grade in grades
    ]
    page = render_class_page(rubric.name, columns, rows, secret_id(secret))
    (out / CLASS_HTML).write_text(page, encoding="utf-8")


def _note(grade: dict[str, Any]) -> str:
    """Why a student failed conformance (the first line), or nothing."""
    first = grade["items"][0] if grade["items"] else None
    if first is None or first["passed"]:
        return ""
    return str(first["output"]).splitlines()[0][:200]
