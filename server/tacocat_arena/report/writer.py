"""Writing report.html, report.md and the replays/ folder of a tournament's output folder.

Called by ``report/outputs.py`` with the other result files, so a resumed tournament
rewrites them all. Replays are written only once every game is over: a record holds its
deal, which its duplicate twin (and the tournament seed) would give away before then.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from tacocat_arena.report.plot import elo_plot
from tacocat_arena.report.replay import render_replay
from tacocat_arena.report.summary import GameLine, ReportSummary, build_summary, game_line
from tacocat_arena.report.templating import environment, static_text
from tacocat_arena.stats.figures import compute_bot_figures
from tacocat_arena.stats.pairs import PairStats
from tacocat_arena.stats.ratings import expected_score
from tacocat_arena.stats.tables import Crosstable, GameResult, StandingsRow
from tacocat_arena.tournament.config import TournamentConfig
from tacocat_arena.tournament.finals import FinalsState
from tacocat_arena.tournament.knockout import KnockoutState
from tacocat_arena.tournament.swiss import SwissTables

REPORT_HTML = "report.html"
REPORT_MD = "report.md"
REPLAYS = "replays"

ELO_200 = round(100 * expected_score(200, 0))
"""The legend's example: the expected score, in percent, of a bot rated 200 points higher."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]")


def replay_name(game_id: str) -> str:
    """The file name of a game's replay inside replays/ (ids are names and '-' already)."""
    return _UNSAFE.sub("_", game_id) + ".html"


def render_report_html(summary: ReportSummary) -> str:
    """report.html's text for ``summary``."""
    return (
        environment()
        .get_template("report.html.j2")
        .render(
            s=summary,
            plot=elo_plot(summary.standings),
            css=static_text("common.css"),
            elo_200=ELO_200,
        )
    )


def render_report_md(summary: ReportSummary) -> str:
    """report.md's text for ``summary``."""
    return environment().get_template("report.md.j2").render(s=summary, elo_200=ELO_200)


def _write(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def write_reports(
    config: TournamentConfig,
    standings: Sequence[StandingsRow],
    cross: Crosstable,
    games: Iterable[tuple[GameResult, Mapping[str, Any]]],
    *,
    complete: bool,
    planned: int,
    pairings: Sequence[PairStats] = (),
    sprt: str | None = None,
    built: datetime | None = None,
    swiss: SwissTables | None = None,
    knockout: KnockoutState | None = None,
    finals: FinalsState | None = None,
    commitment: Mapping[str, Any] | None = None,
) -> Path:
    """Write report.html and report.md (and, once ``complete``, replays/); return
    report.html's path. ``games`` are the finished games with their records, in order;
    ``pairings`` their duplicate-pair statistics; ``sprt`` a match's SPRT summary line."""
    out = config.out
    played = list(games)
    if complete:
        (out / REPLAYS).mkdir(exist_ok=True)
    for result, record in played:
        if replay_href(result, record, complete=complete) is not None:
            page = render_replay(
                record, result.seats, game_id=result.game_id, back_href=f"../{REPORT_HTML}"
            )
            _write(out / REPLAYS / replay_name(result.game_id), page)
    summary = report_summary(
        config,
        standings,
        cross,
        played,
        complete=complete,
        planned=planned,
        pairings=pairings,
        sprt=sprt,
        built=built,
        swiss=swiss,
        knockout=knockout,
        finals=finals,
        commitment=commitment,
    )
    _write(out / REPORT_MD, render_report_md(summary))
    _write(out / REPORT_HTML, render_report_html(summary))
    return out / REPORT_HTML


def replay_href(result: GameResult, record: Mapping[str, Any], *, complete: bool) -> str | None:
    """The report's link to a game's replay page: written once the tournament is complete,
    for a game that was played."""
    if complete and not record.get("unplayed") and record.get("events"):
        return f"{REPLAYS}/{replay_name(result.game_id)}"
    return None


def report_summary(
    config: TournamentConfig,
    standings: Sequence[StandingsRow],
    cross: Crosstable,
    played: Sequence[tuple[GameResult, Mapping[str, Any]]],
    *,
    complete: bool,
    planned: int,
    pairings: Sequence[PairStats] = (),
    sprt: str | None = None,
    built: datetime | None = None,
    swiss: SwissTables | None = None,
    knockout: KnockoutState | None = None,
    finals: FinalsState | None = None,
    commitment: Mapping[str, Any] | None = None,
) -> ReportSummary:
    """What report.html and report.md say (``write_reports``; ``verify`` recomputes it from
    the games and compares report.md)."""
    results = [result for result, _ in played]
    figures = compute_bot_figures(results, [bot.name for bot in config.bots], played)
    lines: list[GameLine] = [
        game_line(result, replay_href(result, record, complete=complete))
        for result, record in played
    ]
    note = (
        "Every game's replay steps through it card by card."
        if complete
        else "Replays are published once every game is over: a game's record shows its deal, "
        "which its twin (the same deal, seats swapped) may still have to play."
    )
    return build_summary(
        config,
        standings,
        cross,
        figures,
        lines,
        complete=complete,
        planned=planned,
        replays_note=note,
        pairings=pairings,
        sprt=sprt,
        built=built,
        swiss=swiss,
        knockout=knockout,
        finals=finals,
        commitment=commitment,
    )
