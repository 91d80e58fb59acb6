"""The grader's pages: one student's report.html and a class's summary page.

They present what ``grade`` computed (its grade.json values, plain mappings) and link to the
tier reports and replay pages the tournament outputs wrote; like every page here, each is
one self-contained file that works opened from disk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tacocat_arena.report.templating import environment, static_text


def render_grade_page(grade: Mapping[str, Any], items: Sequence[Mapping[str, Any]]) -> str:
    """A student's page: every item of ``grade`` (grade.json's contents); ``items`` are its
    items with a ``replays`` list each (``game_id``, ``seed``, ``points``, ``href``)."""
    template = environment().get_template("grade.html.j2")
    return template.render(g=grade, items=items, css=static_text("common.css"))


def render_class_page(
    title: str, columns: Sequence[str], rows: Sequence[Mapping[str, Any]], secret_id: str
) -> str:
    """A class's page: one row per student (``student``, ``points``, ``max_points``,
    ``href``, ``error``, and ``tiers``: points per item named in ``columns``)."""
    template = environment().get_template("class.html.j2")
    return template.render(
        title=title, columns=columns, rows=rows, secret_id=secret_id, css=static_text("common.css")
    )
