"""``tacocat-arena grade``: parse the options, run the grader, print the summary.

The grading itself is in ``grader`` and ``batch``; domain errors become ClickExceptions here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from tacocat_arena.cli.options import notify_option, workers_option

if TYPE_CHECKING:
    from tacocat_arena.play.analysis import Reference


@click.command("grade")
@click.argument("target", required=False, metavar="PACKAGE|COMMAND")
@click.option(
    "--rubric",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The rubric (TOML); default: the shipped one (docs/grading.md).",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("grade-results"),
    show_default=True,
    help="Output folder.",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "gradescope"]),
    default="text",
    show_default=True,
    help="gradescope: also write Gradescope's results.json.",
)
@click.option(
    "--secret-file",
    type=click.Path(exists=True, path_type=Path),
    help="Reuse a grading run's secret (its secret.txt, or its output folder): same deals.",
)
@click.option("--student", help="The student's name in the outputs (default: from PACKAGE).")
@click.option(
    "--batch",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Grade every package in this folder (one per student).",
)
@workers_option("With --batch: students graded at once.", default=1, type=click.IntRange(1, 64))
@notify_option(
    "POST a JSON summary (each student's points, where the grades are) to this http(s) URL "
    "when the grading is done; retried, never fails the grading."
)
@click.option(
    "--analyze",
    "analyze_count",
    type=click.IntRange(0, 100),
    default=0,
    metavar="K",
    help="Also analyse the student's K worst games (analyze's marks, from its seat's view) "
    "into the report: analysis/ and analysis.json (not with --batch).",
)
@click.option(
    "--analysis-reference",
    metavar="SPEC",
    help="The reference of --analyze (default: analyze's, ismcts?iterations=6000&seeds=4).",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
def grade(
    target: str | None,
    rubric: Path | None,
    out: Path,
    output_format: str,
    secret_file: Path | None,
    student: str | None,
    batch: Path | None,
    workers: int,
    notify: str | None,
    analyze_count: int,
    analysis_reference: str | None,
    quiet: bool,
) -> None:
    """Grade a bot (a package folder or archive with bot.toml, or a command) by a rubric:
    conformance, then one match per baseline tier on duplicate deals (docs/grading.md)."""
    # Imported here, not at the top: `tacocat-arena --help` loads no grader (issue 37).
    from tacocat_arena.cli.run import output_console
    from tacocat_arena.grade.batch import (
        CLASS_HTML,
        GRADES_CSV,
        grade_batch,
        grade_to_folder,
        student_name,
    )
    from tacocat_arena.grade.grader import (
        SECRET_FILE,
        STUDENT,
        GradeError,
        new_secret,
        read_secret,
        secret_id,
    )
    from tacocat_arena.grade.outputs import GRADE_JSON, REPORT_HTML, RESULTS_JSON, grade_table
    from tacocat_arena.grade.rubric import RubricError, load_rubric
    from tacocat_arena.referee.stopping import Stopped, run_until_signalled
    from tacocat_arena.tournament.config import ConfigError
    from tacocat_arena.tournament.notify import check_url, grades_summary, post

    console = output_console()

    def notice(text: str) -> None:
        if not quiet:
            console.print(text, highlight=False, markup=False)

    try:
        if notify is not None:
            check_url(notify)
        secret = read_secret(secret_file) if secret_file is not None else new_secret()
        if batch is not None:
            if target is not None:
                raise click.UsageError("give PACKAGE|COMMAND or --batch, not both")
            if analyze_count:
                raise click.UsageError("--analyze grades one student (not with --batch)")
            grades = run_until_signalled(
                grade_batch(
                    batch,
                    rubric,
                    out,
                    secret,
                    workers=workers,
                    gradescope=output_format == "gradescope",
                    notice=notice,
                )
            )
            for data in grades:
                console.print(grade_table(data))
            console.print(
                f"{len(grades)} students graded; {out / GRADES_CSV}, {out / CLASS_HTML}; the "
                f"grading secret (keep it private; reuse it for late submissions with "
                f"--secret-file): {out / SECRET_FILE}"
            )
            if notify is not None:
                body = grades_summary(grades, out / GRADES_CSV, out / CLASS_HTML)
                if post(notify, body, say=console.print):
                    console.print(f"Notified {notify}")
            return
        if target is None:
            raise click.UsageError("give the bot to grade (PACKAGE|COMMAND) or --batch FOLDER")
        loaded = load_rubric(rubric)
        name = student or (student_name(Path(target)) if Path(target).exists() else STUDENT)
        reference = _analysis_reference(analysis_reference)
        notice(
            f"grading {target!r} as {name} by {loaded.name!r} ({loaded.max_points:g} points); "
            f"deals of grading run {secret_id(secret)}"
        )
        data = grade_to_folder(
            target,
            loaded,
            out,
            secret,
            student=name,
            gradescope=output_format == "gradescope",
            notice=notice,
        )
    except (GradeError, RubricError, ConfigError) as error:
        raise click.ClickException(str(error)) from None
    except Stopped as stop:
        # The bots and the referee are stopped; a grade is all or nothing, so none is written.
        console.print(
            f"Interrupted ({stop.name}): no grade written. The same deals again: tacocat-arena "
            f"grade ... --secret-file {out / SECRET_FILE}"
            + ("" if batch is None else " (a batch grades every student again)")
        )
        raise SystemExit(stop.exit_code) from None
    console.print(grade_table(data))
    written = [GRADE_JSON, REPORT_HTML] + ([RESULTS_JSON] if output_format == "gradescope" else [])
    if analyze_count:
        from tacocat_arena.grade.analysis import ANALYSIS_JSON, analyse_worst, rewrite_report

        rows = analyse_worst(out, data, analyze_count, reference, STUDENT, notice=notice)
        rewrite_report(out, data, rows)
        for row in rows:
            accuracy = "-" if row["accuracy"] is None else f"{row['accuracy']:.1f}%"
            marks = ", ".join(f"{n} {mark}" for mark, n in row["marks"].items())
            console.print(
                f"analysed {row['item']} {row['game_id']} ({row['points']:g} points): accuracy "
                f"{accuracy}, marks {marks}; {out / row['href']}",
                highlight=False,
            )
        if not rows:
            console.print("--analyze: no game lost or drawn, nothing analysed")
        written.append(ANALYSIS_JSON)
    console.print(
        f"graded in {data['seconds']:.0f} s; {', '.join(str(out / f) for f in written)}; "
        f"the grading secret: {out / SECRET_FILE} (reuse it with --secret-file)"
    )
    if notify is not None:
        body = grades_summary([data], out / GRADE_JSON, out / REPORT_HTML)
        if post(notify, body, say=console.print):
            console.print(f"Notified {notify}")


def _analysis_reference(spec: str | None) -> Reference:
    """``--analysis-reference`` parsed (a bad one is refused before any grading)."""
    from tacocat_arena.play.analysis import Reference, ReferenceSpecError

    try:
        return Reference.parse(spec)
    except ReferenceSpecError as error:
        raise click.BadParameter(str(error), param_hint="--analysis-reference") from None
