"""Standings and crosstable of a finished tournament, and the files that report them.

Everything here is a pure function of the finished ``GameResult`` records (and
of the metadata the caller passes in), so a report can be rebuilt from a saved
result log at any time and always gives the same output.

Conventions
    * A forfeit (timeout, illegal action, disconnect, crash) is a loss for the
      forfeiting bot and a win for its opponent, in the score *and* in the Elo
      fit: the referee cannot tell a broken bot from a weak one, and counting
      them keeps ``wins + losses + draws == games`` for every bot.
    * "Errors" counts a bot's actions that were not its own decision: its code failed (e.g.
      a decision method raised) and its SDK played a default move instead, saying so in
      ``Action.fallback``.  They change no score (the game went on), but a bot that fails on
      every move would otherwise look like a weak bot that plays fast.
    * Ratings come from :func:`tacocat_arena.tournament.ratings.fit_ratings`,
      seat-agnostic, draws as half wins (see ``docs/ratings.md``).
    * Ranking is by score rate (points per game), then Elo, then name (the last
      only to make the order deterministic); bots equal on both share a rank
      ("1224").  In a finished round robin every bot has played as many games, so
      that is the order of the scores; in the partial tables of an interrupted
      one, games are unequal and raw scores would favour whoever played more.
      A bot without games ranks last.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TextIO

from rich.table import Table

from tacocat_arena.engine import Termination
from tacocat_arena.tournament.ratings import DEFAULT_PRIOR_DRAWS, fit_ratings

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

Crosstable = Mapping[str, Mapping[str, "CrossCell"]]
"""``cross[row][col]``: the row bot's record against the column bot (no diagonal)."""

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class GameResult:
    """One finished game as reported by the referee.

    ``winner`` and ``forfeit_by`` are seat indices (0 or 1); ``winner`` is
    ``None`` for a draw. Construction validates the record, so inconsistent
    results fail loudly here rather than skewing the standings.
    """

    game_id: str
    seats: tuple[str, str]
    seed: int
    winner: int | None
    #: How the game ended: the engine's own enum (its ``.value`` only in files and rows,
    #: which construction accepts and turns back into the enum).
    reason: Termination
    rounds: int
    decisions: tuple[int, int]
    decision_ms: tuple[float, float]
    forfeit_by: int | None = None
    #: Per seat, the moves its SDK played by default because the bot's code failed.
    fallbacks: tuple[int, int] = (0, 0)

    def __post_init__(self) -> None:
        where = f"game {self.game_id!r}"
        if len(self.seats) != 2 or self.seats[0] == self.seats[1]:
            raise ValueError(f"{where}: seats must be two different bots, got {self.seats!r}")
        if self.winner not in (0, 1, None):
            raise ValueError(f"{where}: winner must be 0, 1 or None, got {self.winner!r}")
        if not isinstance(self.reason, Termination):
            try:
                object.__setattr__(self, "reason", Termination(self.reason))
            except ValueError:
                known = ", ".join(t.value for t in Termination)
                raise ValueError(
                    f"{where}: unknown reason {self.reason!r}, expected one of {known}"
                ) from None
        if self.reason.is_forfeit and self.forfeit_by is None and self.winner is None:
            pass  # both seats failed at the same decision: the referee scores a draw
        elif self.reason.is_forfeit:
            if self.forfeit_by not in (0, 1):
                raise ValueError(
                    f"{where}: reason {self.reason.value!r} is a forfeit, "
                    "so forfeit_by must be 0 or 1"
                )
            if self.winner != 1 - self.forfeit_by:
                raise ValueError(
                    f"{where}: seat {self.forfeit_by} forfeited, so the winner must be seat "
                    f"{1 - self.forfeit_by}, got {self.winner!r}"
                )
        elif self.forfeit_by is not None:
            raise ValueError(
                f"{where}: forfeit_by is set but reason {self.reason.value!r} is not a forfeit"
            )
        if self.rounds < 0:
            raise ValueError(f"{where}: rounds must be >= 0, got {self.rounds}")
        if len(self.decisions) != 2 or any(d < 0 for d in self.decisions):
            raise ValueError(f"{where}: decisions must be two counts >= 0, got {self.decisions!r}")
        if len(self.fallbacks) != 2 or any(f < 0 for f in self.fallbacks):
            raise ValueError(f"{where}: fallbacks must be two counts >= 0, got {self.fallbacks!r}")
        if len(self.decision_ms) != 2 or not all(
            math.isfinite(ms) and ms >= 0 for ms in self.decision_ms
        ):
            raise ValueError(
                f"{where}: decision_ms must be two finite times >= 0, got {self.decision_ms!r}"
            )

    def score(self, seat: int) -> float:
        """Points earned by ``seat``: 1 for a win, 0.5 for a draw, 0 for a loss."""
        if self.winner is None:
            return 0.5
        return 1.0 if self.winner == seat else 0.0


@dataclass(frozen=True)
class CrossCell:
    """One bot's record against one opponent."""

    wins: int = 0
    losses: int = 0
    draws: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.losses + self.draws

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws

    @property
    def record(self) -> str:
        """The record as ``"w-l-d"``."""
        return f"{self.wins}-{self.losses}-{self.draws}"


@dataclass(frozen=True)
class StandingsRow:
    """One line of the standings.

    ``elo_err`` is the 95% half-width, ``None`` for a bot without games;
    ``mean_decision_ms`` is thinking time per decision over all the bot's games,
    ``None`` when it made no decisions.
    """

    rank: int
    bot: str
    games: int
    wins: int
    losses: int
    draws: int
    score: float
    elo: float
    elo_err: float | None
    forfeits: int
    #: Moves its SDK played by default because the bot's code failed (``Action.fallback``).
    errors: int
    mean_decision_ms: float | None


def tournament_bots(results: Sequence[GameResult]) -> list[str]:
    """All bots that appear in ``results``, sorted by name."""
    return sorted({name for result in results for name in result.seats})


def rating_games(results: Sequence[GameResult]) -> list[tuple[str, str, float]]:
    """The ``(seat 0 bot, seat 1 bot, seat 0 score)`` triples that the Elo fit uses."""
    return [(r.seats[0], r.seats[1], r.score(0)) for r in results]


def compute_standings(
    results: Sequence[GameResult],
    bots: Sequence[str] | None = None,
    *,
    prior_draws: float = DEFAULT_PRIOR_DRAWS,
) -> list[StandingsRow]:
    """Standings, best first.

    ``bots`` lists every entrant so that bots without finished games still get a
    row; by default it is every bot seen in ``results``.
    """
    names = _check(results, bots)
    wins = dict.fromkeys(names, 0)
    losses = dict.fromkeys(names, 0)
    draws = dict.fromkeys(names, 0)
    forfeits = dict.fromkeys(names, 0)
    errors = dict.fromkeys(names, 0)
    decisions = dict.fromkeys(names, 0)
    thinking_ms = dict.fromkeys(names, 0.0)
    for result in results:
        for seat, bot in enumerate(result.seats):
            if result.winner is None:
                draws[bot] += 1
            elif result.winner == seat:
                wins[bot] += 1
            else:
                losses[bot] += 1
            if result.forfeit_by == seat:
                forfeits[bot] += 1
            errors[bot] += result.fallbacks[seat]
            decisions[bot] += result.decisions[seat]
            thinking_ms[bot] += result.decision_ms[seat]

    ratings = fit_ratings(names, rating_games(results), prior_draws=prior_draws)

    def sort_key(bot: str) -> tuple[float, float, str]:
        games = wins[bot] + losses[bot] + draws[bot]
        rate = (wins[bot] + 0.5 * draws[bot]) / games if games else -1.0
        return (-rate, -_tie_elo(ratings[bot].elo), bot)

    rows: list[StandingsRow] = []
    for position, bot in enumerate(sorted(names, key=sort_key), start=1):
        rating = ratings[bot]
        shares_rank = bool(rows) and sort_key(rows[-1].bot)[:2] == sort_key(bot)[:2]
        rows.append(
            StandingsRow(
                rank=rows[-1].rank if shares_rank else position,
                bot=bot,
                games=wins[bot] + losses[bot] + draws[bot],
                wins=wins[bot],
                losses=losses[bot],
                draws=draws[bot],
                score=wins[bot] + 0.5 * draws[bot],
                elo=rating.elo,
                elo_err=rating.err if rating.is_rated else None,
                forfeits=forfeits[bot],
                errors=errors[bot],
                mean_decision_ms=(thinking_ms[bot] / decisions[bot] if decisions[bot] else None),
            )
        )
    return rows


def compute_crosstable(
    results: Sequence[GameResult], bots: Sequence[str] | None = None
) -> dict[str, dict[str, CrossCell]]:
    """Pairwise records: ``cross[a][b]`` is ``a``'s record against ``b``.

    Every ordered pair of different bots is present (all zeros if they never
    met), and ``cross[a][b]`` mirrors ``cross[b][a]`` (wins and losses swapped).
    """
    names = _check(results, bots)
    tally: dict[tuple[str, str], list[int]] = {
        (a, b): [0, 0, 0] for a in names for b in names if a != b
    }
    for result in results:
        for seat, bot in enumerate(result.seats):
            opponent = result.seats[1 - seat]
            column = 2 if result.winner is None else (0 if result.winner == seat else 1)
            tally[bot, opponent][column] += 1
    return {a: {b: CrossCell(*tally[a, b]) for b in names if b != a} for a in names}


def write_standings_csv(path: PathLike, rows: Sequence[StandingsRow]) -> None:
    """Write the standings with exactly the ``STANDINGS_COLUMNS`` header.

    Missing values (``elo_err`` of an unrated bot, ``mean_decision_ms`` without
    decisions) are written as empty cells.
    """
    with _open_for_writing(path) as handle:
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


def write_crosstable_csv(path: PathLike, bots: Sequence[str], cross: Crosstable) -> None:
    """Write the crosstable as a matrix in the order of ``bots``.

    Header ``bot, <bots...>, score``; a cell is the row bot's result against the
    column bot as ``"w-l-d (points)"``, e.g. ``"8-3-4 (10)"``. The diagonal and
    pairs that never met are empty; ``score`` is the row bot's total points.
    """
    with _open_for_writing(path) as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["bot", *bots, "score"])
        for row_bot in bots:
            cells = [_cell_text(row_bot, col_bot, cross) for col_bot in bots]
            total = sum(cell.points for cell in cross.get(row_bot, {}).values())
            writer.writerow([row_bot, *cells, _points(total)])


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
        "standings": [standings_row_dict(row) for row in rows],
        "crosstable": {
            "bots": list(bots),
            "cells": {a: {b: _cell_dict(cross[a][b]) for b in bots if b != a} for a in bots},
        },
        **(sections or {}),
    }
    text = json.dumps(document, indent=2, allow_nan=False, default=str)
    with _open_for_writing(path) as handle:
        handle.write(text + "\n")


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


def write_report_md(
    path: PathLike,
    rows: Sequence[StandingsRow],
    cross: Crosstable,
    metadata: Mapping[str, object],
    *,
    title: str = "Tacocat Arena tournament report",
    prior_draws: float = DEFAULT_PRIOR_DRAWS,
    ratings_doc: str = RATINGS_DOC,
) -> None:
    """Write a human-readable Markdown report.

    The crosstable follows the standings order and labels its columns by row
    number, which keeps it narrow with long bot names. Pass the ``prior_draws``
    that the standings were computed with, so the method note is accurate.
    ``ratings_doc`` is the link target for the rating method, relative to where
    the report is read.
    """
    lines = [f"# {_md(title)}", ""]
    if metadata:
        lines += [f"- **{_md(str(key))}**: {_md(str(value))}" for key, value in metadata.items()]
        lines.append("")

    lines += ["## Standings", ""]
    if metadata.get("complete") is False:
        lines += [
            f"**Partial**: {metadata.get('games_played', '?')} of "
            f"{metadata.get('games_planned', '?')} planned games were played. Bots are ranked "
            "by points per game, since they have not played as many games.",
            "",
        ]
    lines += _md_table(
        [
            "Rank",
            "Bot",
            "Games",
            "W",
            "L",
            "D",
            "Score",
            "Elo",
            "±95%",
            "Forfeits",
            "Errors",
            "ms/decision",
        ],
        [
            [
                str(row.rank),
                _md(row.bot),
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
            ]
            for row in rows
        ],
    )

    order = [row.bot for row in rows]
    lines += ["", "## Crosstable", ""]
    lines.append("Row bot's result against column bot as wins-losses-draws (points).")
    lines.append("")
    lines += _md_table(
        ["#", "Bot", *(str(i) for i in range(1, len(order) + 1))],
        [
            [str(i), _md(a), *(_cell_text(a, b, cross) or "—" for b in order)]
            for i, a in enumerate(order, start=1)
        ],
    )

    prior = (
        "no prior (plain maximum likelihood)"
        if prior_draws == 0
        else f"a prior of {prior_draws:g} virtual draw(s) per bot against a 0-rated opponent"
    )
    lines += [
        "",
        "## Rating method",
        "",
        (
            "Elo is a maximum-likelihood Bradley-Terry fit over all games, seat-agnostic, "
            f"with draws counted as half a win for each side and {prior}. Ratings are "
            "anchored so that their mean is 0; ± is the 95% interval of each rating "
            "(1.96 standard errors from the Fisher information). "
            f"Details: [{ratings_doc}]({ratings_doc})."
        ),
        "",
    ]
    with _open_for_writing(path) as handle:
        handle.write("\n".join(lines))


def render_standings(rows: Sequence[StandingsRow], *, title: str | None = "Standings") -> Table:
    """The standings as a rich table for the terminal, with a legend of its short headers."""
    table = Table(title=title, caption=STANDINGS_LEGEND, caption_justify="left")
    for header in (
        "#",
        "Bot",
        "Games",
        "W",
        "L",
        "D",
        "Score",
        "Elo",
        "±95%",
        "Forf",
        "Err",
        "ms/dec",
    ):
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


def _check(results: Sequence[GameResult], bots: Sequence[str] | None) -> list[str]:
    """Validate the inputs shared by standings and crosstable; return the bot list."""
    names = tournament_bots(results) if bots is None else list(bots)
    known = set(names)
    if len(known) != len(names):
        raise ValueError("bots contains duplicate names")
    seen_ids: set[str] = set()
    for result in results:
        if result.game_id in seen_ids:
            raise ValueError(f"game {result.game_id!r} appears more than once in the results")
        seen_ids.add(result.game_id)
        for bot in result.seats:
            if bot not in known:
                raise ValueError(f"game {result.game_id!r} has bot {bot!r}, which is not in bots")
    return names


def _tie_elo(elo: float) -> float:
    """Elo rounded so fits that differ only by float noise tie in the ranking."""
    return round(elo, 6)


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


def _md(text: str) -> str:
    """Escape text for a Markdown table cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _md_table(header: Sequence[str], body: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    return lines


def _open_for_writing(path: PathLike) -> TextIO:
    """Open ``path`` for UTF-8 text output, creating missing parent folders."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    return target.open("w", encoding="utf-8", newline="")
