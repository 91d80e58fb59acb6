"""The files and terminal tables that report standings and crosstables.

``stats/tables.py`` computes the values; this module only writes and draws them (CSV, strict
JSON, Markdown, rich tables), so a report can be rebuilt from a saved result log at any time
and always gives the same output.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final, TextIO

from rich.table import Table

from tacocat_arena.stats.tables import CrossCell, Crosstable, StandingsRow
from tacocat_arena.stats.tiebreaks import SwissRow

STANDINGS_COLUMNS: Final[tuple[str, ...]] = (
    "rank",
    "bot",
    "games",
    "wins",
    "losses",
    "draws",
    "score",
    "elo",
    "elo_err",
    "forfeits",
    "errors",
    "mean_decision_ms",
)
"""Column order of the standings CSV (and key order of the JSON rows)."""

RATINGS_DOC: Final[str] = "docs/ratings.md"

STANDINGS_LEGEND: Final[str] = (
    "Score: 1 per win, 1/2 per draw; ranked by score per game. Elo ±95%: the rating and its "
    f"95% interval ({RATINGS_DOC}). Forf: games lost by forfeit (timeout, illegal or "
    "malformed action, disconnect, crash). Err: moves the bot's SDK played by default "
    "because the bot's code failed (a decision method raised). ms/dec: mean time per "
    "decision, as the referee measured it (send to receipt)."
)
"""The key to the terminal standings' short headers."""

CROSSTABLE_LEGEND: Final[str] = (
    "A cell is the row bot's wins-losses-draws against the column bot, and its points in "
    "brackets: 0-10-0 (0) is ten losses."
)
"""The key to the terminal crosstable's cells."""

PathLike = str | os.PathLike[str]


def write_standings_csv(path: PathLike, rows: Sequence[StandingsRow]) -> None:
    """Write ``standings_csv_text(rows)`` to ``path``."""
    with _open_for_writing(path) as handle:
        handle.write(standings_csv_text(rows))


def standings_csv_text(rows: Sequence[StandingsRow]) -> str:
    """The standings CSV with exactly the ``STANDINGS_COLUMNS`` header (``verify``
    recomputes it from the games and compares).

    Missing values (``elo_err`` of an unrated bot, ``mean_decision_ms`` without
    decisions) are written as empty cells.
    """
    with io.StringIO(newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(STANDINGS_COLUMNS)
        for row in rows:
            writer.writerow(
                [
                    row.rank,
                    row.bot,
                    row.games,
                    row.wins,
                    row.losses,
                    row.draws,
                    f"{row.score:.1f}",
                    _fixed(row.elo, 1),
                    _fixed(row.elo_err, 1),
                    row.forfeits,
                    row.errors,
                    _fixed(row.mean_decision_ms, 3),
                ]
            )
        return handle.getvalue()


def write_crosstable_csv(path: PathLike, bots: Sequence[str], cross: Crosstable) -> None:
    """Write ``crosstable_csv_text(bots, cross)`` to ``path``."""
    with _open_for_writing(path) as handle:
        handle.write(crosstable_csv_text(bots, cross))


def crosstable_csv_text(bots: Sequence[str], cross: Crosstable) -> str:
    """The crosstable as a matrix in the order of ``bots``.

    Header ``bot, <bots...>, score``; a cell is the row bot's result against the
    column bot as ``"w-l-d (points)"``, e.g. ``"8-3-4 (10)"``. The diagonal and
    pairs that never met are empty; ``score`` is the row bot's total points.
    """
    with io.StringIO(newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["bot", *bots, "score"])
        for row_bot in bots:
            cells = [_cell_text(row_bot, col_bot, cross) for col_bot in bots]
            total = sum(cell.points for cell in cross.get(row_bot, {}).values())
            writer.writerow([row_bot, *cells, _points(total)])
        return handle.getvalue()


def write_results_json(
    path: PathLike,
    rows: Sequence[StandingsRow],
    bots: Sequence[str],
    cross: Crosstable,
    metadata: Mapping[str, object],
    *,
    sections: Mapping[str, object] | None = None,
) -> None:
    """Write standings, crosstable and ``metadata`` as one strict-JSON document.

    ``sections`` are further top-level members (e.g. ``pairings``, ``sprt``).

    Layout: ``{"metadata": {...}, "standings": [row...], "crosstable": {"bots":
    [...], "cells": {row: {col: {wins, losses, draws, games, points, record}}}}}``.
    Missing values are ``null`` (never NaN/Infinity, which are not JSON);
    metadata values that JSON cannot hold (paths, dates) are written with ``str``.
    """
    document = {
        "metadata": dict(metadata),
        **results_tables(rows, bots, cross),
        **(sections or {}),
    }
    text = json.dumps(document, indent=2, allow_nan=False, default=str)
    with _open_for_writing(path) as handle:
        handle.write(text + "\n")


def results_tables(
    rows: Sequence[StandingsRow], bots: Sequence[str], cross: Crosstable
) -> dict[str, object]:
    """results.json's ``standings`` and ``crosstable`` members."""
    return {
        "standings": [standings_row_dict(row) for row in rows],
        "crosstable": {
            "bots": list(bots),
            "cells": {a: {b: _cell_dict(cross[a][b]) for b in bots if b != a} for a in bots},
        },
    }


def _cell_dict(cell: CrossCell) -> dict[str, object]:
    return {
        "wins": cell.wins,
        "losses": cell.losses,
        "draws": cell.draws,
        "games": cell.games,
        "points": cell.points,
        "record": cell.record,
    }


def standings_row_dict(row: StandingsRow) -> dict[str, object]:
    """A standings row as a dict in ``STANDINGS_COLUMNS`` order."""
    return {column: getattr(row, column) for column in STANDINGS_COLUMNS}


#: The standings' column headings in report.md and on the terminal (short, with a legend).
_MD_HEADERS = "Rank Bot Games W L D Score Elo ±95% Forfeits Errors ms/decision".split()
_TERMINAL_HEADERS = "# Bot Games W L D Score Elo ±95% Forf Err ms/dec".split()


def render_standings(rows: Sequence[StandingsRow], *, title: str | None = "Standings") -> Table:
    """The standings as a rich table for the terminal, with a legend of its short headers."""
    table = Table(title=title, caption=STANDINGS_LEGEND, caption_justify="left")
    for header in _TERMINAL_HEADERS:
        table.add_column(header, justify="left" if header == "Bot" else "right")
    for row in rows:
        table.add_row(
            str(row.rank),
            row.bot,
            str(row.games),
            str(row.wins),
            str(row.losses),
            str(row.draws),
            _points(row.score),
            _fixed(row.elo, 0),
            _fixed(row.elo_err, 0) or "—",
            str(row.forfeits),
            str(row.errors),
            _fixed(row.mean_decision_ms, 1) or "—",
        )
    return table


def render_crosstable(
    bots: Sequence[str], cross: Crosstable, *, title: str | None = "Crosstable"
) -> Table:
    """The crosstable as a rich table: row bot's ``w-l-d (points)`` against each column."""
    table = Table(title=title, caption=CROSSTABLE_LEGEND, caption_justify="left")
    table.add_column("Bot")
    for bot in bots:
        table.add_column(bot, justify="center")
    table.add_column("Score", justify="right")
    for a in bots:
        total = sum(cell.points for cell in cross.get(a, {}).values())
        table.add_row(a, *(_cell_text(a, b, cross) or "—" for b in bots), _points(total))
    return table


def _cell_text(a: str, b: str, cross: Crosstable) -> str:
    if a == b:
        return ""
    cell = cross.get(a, {}).get(b)
    if cell is None or cell.games == 0:
        return ""
    return f"{cell.record} ({_points(cell.points)})"


def _points(value: float) -> str:
    """Points as ``10`` or ``10.5`` (they are always multiples of 0.5)."""
    return str(int(value)) if value.is_integer() else f"{value:.1f}"


def _fixed(value: float | None, digits: int) -> str:
    """``value`` with ``digits`` decimals, ``""`` for None, never ``-0``."""
    if value is None:
        return ""
    return f"{round(value, digits) + 0.0:.{digits}f}"


def _open_for_writing(path: PathLike) -> TextIO:
    """Open ``path`` for UTF-8 text output, creating missing parent folders."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    return target.open("w", encoding="utf-8", newline="")


def render_swiss_standings(rows: Sequence[SwissRow], *, title: str = "Swiss standings") -> Table:
    """A Swiss event's standings for the terminal: match points, then the tiebreaks."""
    table = Table(
        title=title,
        caption="Points: match points (a bye is a match won). BH: Buchholz. SB: "
        "Sonneborn–Berger. Then Elo.",
        caption_justify="left",
    )
    for header in ("Rank", "Bot", "Points", "BH", "SB", "Elo", "Matches", "Byes", "Game pts"):
        table.add_column(header, justify="left" if header == "Bot" else "right")
    for row in rows:
        table.add_row(
            str(row.rank),
            row.bot,
            _points(row.points),
            _points(row.buchholz),
            _fixed(row.sonneborn_berger, 2),
            _fixed(row.elo, 0),
            str(row.matches),
            str(row.byes),
            _points(row.game_points),
        )
    return table
