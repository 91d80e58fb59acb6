"""Writing a tournament's result files from its database.

standings.csv, crosstable.csv, games.jsonl (one line per game, its full record included;
appended pair by pair as the tournament runs, see ``games_log``, and rewritten whole once it
is complete), results.json, report.md and report.html (with
replays/, one page per game, once complete); all are rebuilt from
the database, so they always agree with it and with each other, and a resumed tournament
writes the same files as an uninterrupted one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tacocat_arena.report.tables import (
    write_crosstable_csv,
    write_results_json,
    write_standings_csv,
)
from tacocat_arena.report.writer import write_reports
from tacocat_arena.stats.pair_report import pairing_dict, sprt_dict
from tacocat_arena.stats.pairs import PairStats, all_pair_stats
from tacocat_arena.stats.sprt import SprtState
from tacocat_arena.stats.tables import (
    Crosstable,
    GameResult,
    StandingsRow,
    compute_crosstable,
    compute_standings,
)
from tacocat_arena.tournament.commitments import read_commitment, tag_of
from tacocat_arena.tournament.config import TournamentConfig, TournamentFormat
from tacocat_arena.tournament.finals import FinalsState, finals_state
from tacocat_arena.tournament.games_log import GAMES_FILE, game_line
from tacocat_arena.tournament.knockout import KnockoutState, knockout_state
from tacocat_arena.tournament.lifecycle import Event
from tacocat_arena.tournament.runner import TournamentRun
from tacocat_arena.tournament.storage import TournamentStore
from tacocat_arena.tournament.swiss import SwissTables, swiss_tables

OUTPUT_FILES = (
    "standings.csv",
    "crosstable.csv",
    "games.jsonl",
    "results.json",
    "commitment.json",
    "report.md",
    "report.html",
)


@dataclass(frozen=True)
class Tables:
    """The computed tables of a tournament."""

    bots: list[str]
    standings: list[StandingsRow]
    crosstable: Crosstable
    pairings: list[PairStats]  # every pairing that met, with its duplicate-pair statistics
    #: A Swiss event's rounds and its standings by match points and tiebreaks.
    swiss: SwissTables | None = None
    #: A knockout's bracket.
    knockout: KnockoutState | None = None
    #: A finals event's stages, their cuts and how it ended.
    finals: FinalsState | None = None


def compute_tables(config: TournamentConfig, store: TournamentStore) -> Tables:
    """Standings, crosstable and pair statistics of every game in ``store``."""
    return tables_of(config, store.results())


def tables_of(config: TournamentConfig, results: Sequence[GameResult]) -> Tables:
    """Standings, crosstable and pair statistics of ``results`` (``verify`` recomputes a
    folder's tables with it)."""
    bots = [bot.name for bot in config.bots]
    standings = compute_standings(results, bots)
    swiss = None
    if config.format is TournamentFormat.SWISS:
        swiss = swiss_tables(config, results, {row.bot: row.elo for row in standings})
    bracket = None
    if config.format is TournamentFormat.KNOCKOUT:
        bracket = knockout_state(config, results, secret="")  # the deals do not matter here
    finals = None
    if config.format is TournamentFormat.FINALS:
        finals = finals_state(config, results, secret="")  # nor here
    return Tables(
        bots,
        standings,
        compute_crosstable(results, bots),
        all_pair_stats(results, bots),
        swiss,
        bracket,
        finals,
    )


def table_sections(tables: Tables, sprt: SprtState | None) -> dict[str, object]:
    """results.json's members after standings and crosstable: ``pairings``, and ``sprt``
    of a ``play --sprt`` match (or a grading tier)."""
    sections: dict[str, object] = {"pairings": [pairing_dict(p) for p in tables.pairings]}
    if tables.swiss is not None:
        sections["swiss"] = tables.swiss.as_dict()
    if tables.knockout is not None:
        sections["knockout"] = tables.knockout.as_dict()
    if tables.finals is not None:
        sections["finals"] = tables.finals.as_dict()
    if sprt is not None:
        sections["sprt"] = sprt_dict(sprt)
    return sections


def write_outputs(
    config: TournamentConfig,
    store: TournamentStore,
    *,
    complete: bool,
    planned: int,
    sprt: SprtState | None = None,
    stopped: str = "",
) -> Tables:
    """Write every result file into ``config.out``; return the tables.

    ``sprt`` is the sequential test of a ``play --sprt`` match, reported with the results.
    ``stopped`` says why a complete match holds fewer games than planned, when it ended by
    choice between pairs (a person who did not play the twin game, ``play human --pair``):
    ``verify`` then checks the games it reached against the plan, as for the SPRT's stop.
    """
    out = config.out
    tables = compute_tables(config, store)
    metadata: dict[str, Any] = dict(config.describe())
    metadata.update(games_planned=planned, games_played=store.count(), complete=complete)
    if stopped:
        metadata["stopped"] = stopped
    if snapshots := store.snapshots():
        # A root runner played private copies of these bots' folders: what it copied.
        metadata["bot_folder_sha256"] = snapshots
    committed = read_commitment(out)  # published at the start (tournament/commitments.py)
    if committed is not None:
        metadata["commitment"] = committed
    if complete:
        # Published at the end, so anyone can re-derive every deal (schedule.deal_seed).
        metadata["deal_secret"] = store.deal_secret()
    else:
        metadata.pop("seed")  # no bot may learn the seed before the tournament ends
    write_standings_csv(out / "standings.csv", tables.standings)
    write_crosstable_csv(out / "crosstable.csv", tables.bots, tables.crosstable)
    sections = table_sections(tables, sprt)
    write_results_json(
        out / "results.json",
        tables.standings,
        tables.bots,
        tables.crosstable,
        metadata,
        sections=sections,
    )
    # report.html, report.md and (once complete) replays/: the report package's pages.
    games = ((result, record) for result, _, record in store.rows())
    write_reports(
        config,
        tables.standings,
        tables.crosstable,
        games,
        complete=complete,
        planned=planned,
        pairings=tables.pairings,
        sprt=None if sprt is None else sprt.summary(),
        swiss=tables.swiss,
        knockout=tables.knockout,
        finals=tables.finals,
        commitment=committed,
    )
    if complete:
        # Rewritten whole at the end; while the tournament runs, GamesLog appends each pair.
        _write_games(out / GAMES_FILE, store)
    return tables


def finish_event(event: Event, outcome: TournamentRun) -> Tables:
    """The last step of an event's life cycle (``tournament.lifecycle``): its result files,
    complete or partial as ``Event.ending`` says; then its store is closed."""
    ending = event.ending(outcome)
    try:
        return write_outputs(
            event.config,
            event.store,
            complete=ending.complete,
            planned=ending.planned,
            sprt=ending.sprt,
        )
    finally:
        event.close()


def _write_games(path: Path, store: TournamentStore) -> None:
    """The complete games.jsonl, every game in finishing order, replaced atomically (while
    the tournament runs, ``GamesLog`` appends it pair by pair)."""
    partial = path.with_suffix(".jsonl.partial")
    secret = store.deal_secret()
    with open(partial, "w", encoding="utf-8") as handle:
        for result, detail, record in store.rows():
            tag = tag_of(secret, result.game_id, result.seats, record)
            line = game_line(result, detail, record, tag)
            handle.write(json.dumps(line, separators=(",", ":")) + "\n")
    os.replace(partial, path)
