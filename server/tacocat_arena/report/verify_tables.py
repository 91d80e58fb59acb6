"""What ``verify`` checks of a tournament folder's tables: the figures people read.

Every game of a folder re-verifies on its own (``tournament/verify.py``), but the files people
read are written from the store: results.json's standings, crosstable, pairings and SPRT,
standings.csv, crosstable.csv and report.md.  Each is recomputed here from the verified
games by the functions that wrote it (``outputs.tables_of``, ``tables.*_text``,
``writer.report_summary``) and compared with the folder's file (S3); the SPRT of a
``play --sprt`` match or a grading tier is re-run over the games' pairs in plan order, as
``stats.live.MatchMonitor`` ran it, and compared with the published test (S4).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tacocat_arena.engine import RulesetError
from tacocat_arena.report.outputs import Tables, table_sections, tables_of
from tacocat_arena.report.tables import crosstable_csv_text, results_tables, standings_csv_text
from tacocat_arena.report.writer import REPORT_MD, render_report_md, report_summary
from tacocat_arena.stats.live import MatchMonitor
from tacocat_arena.stats.pair_report import sprt_dict
from tacocat_arena.stats.sprt import Sprt, SprtState
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.commitments import read_commitment
from tacocat_arena.tournament.config import ConfigError, TournamentConfig
from tacocat_arena.tournament.plan_check import RESULTS_FILE, config_from_metadata
from tacocat_arena.tournament.schedule import plan_for
from tacocat_arena.tournament.verify import (
    Problem,
    Verification,
    result_of,
    verify_path,
    with_problems,
)

_BUILT = re.compile(r"Report built (?P<built>.+?) by tacocat-arena (?P<version>\S+?)\.\n")


def verify_run_folder(folder: Path) -> Verification:
    """``verify_path`` on a ``run``/``play`` output folder (or a grading tier's), and its
    tables recomputed from its games (see the module docstring)."""
    result = verify_path(folder)
    found, checked = check_tables(folder, result)
    return with_problems(result, found, checked)


def check_tables(folder: Path, result: Verification) -> tuple[list[Problem], str]:
    """S3 and S4 of ``folder``, whose games ``result`` verified; and what was checked."""
    where = str(folder)
    try:
        document = json.loads((folder / RESULTS_FILE).read_text(encoding="utf-8"))
        metadata = document["metadata"]
        # An unfinished tournament's metadata keeps its seed back, which its tables and its
        # report (which says the seed is kept) do not depend on.
        config = dataclasses.replace(
            config_from_metadata({"seed": 0, **metadata}),
            name=str(metadata.get("name", "")),
            out=folder,
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError, ConfigError, RulesetError):
        return [], ""  # no readable results.json: plan_check says so (S1 or not checked)
    try:
        results = [result_of(entry) for entry in result.entries]
    except (ValueError, TypeError):
        return [], ""  # a game that is no result: its own checks name it (G1, E1)
    tables = tables_of(config, results)
    found: list[Problem] = []
    sprt, sprt_checked = _sprt(folder, document, metadata, config, results, found)
    expected = json_form(
        {
            **results_tables(tables.standings, tables.bots, tables.crosstable),
            **table_sections(tables, None),
        }
    )
    for key in ("standings", "crosstable", "pairings"):
        if document.get(key) != expected[key]:
            difference = _first_difference(document.get(key), expected[key])
            found.append(
                Problem(
                    where,
                    None,
                    "S3",
                    f"{RESULTS_FILE}'s {key} {difference}, as recomputed from the games",
                )
            )
    for name, text in (
        ("standings.csv", standings_csv_text(tables.standings)),
        ("crosstable.csv", crosstable_csv_text(tables.bots, tables.crosstable)),
    ):
        found += _compare_file(folder, name, text)
    found += _report_md(folder, config, tables, result, metadata, sprt)
    checked = "its results.json tables, standings.csv, crosstable.csv and report.md recomputed"
    return found, checked + (f"; {sprt_checked}" if sprt_checked else "")


def json_form(value: Any) -> Any:
    """``value`` as results.json holds it once written and read back."""
    return json.loads(json.dumps(value, allow_nan=False, default=str))


def _first_difference(stated: Any, expected: Any) -> str:
    """Where a table of the file first differs from the recomputed one, in words."""
    if isinstance(stated, list) and isinstance(expected, list):
        for index, (a, b) in enumerate(zip(stated, expected, strict=False)):
            if a != b:
                return f"row {index + 1} is {a!r}, not {b!r}"
        return f"has {len(stated)} rows, not {len(expected)}"
    if isinstance(stated, Mapping) and isinstance(expected, Mapping):
        for key in sorted(set(stated) | set(expected), key=str):
            if stated.get(key) != expected.get(key):
                return f"[{key!r}] is {stated.get(key)!r}, not {expected.get(key)!r}"
    return f"is {stated!r}, not {expected!r}"


def _compare_file(folder: Path, name: str, text: str) -> list[Problem]:
    """S3 of one file against its recomputed ``text``; a file left out misleads no one."""
    path = folder / name
    if not path.exists():
        return []
    try:
        held = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return [Problem(str(folder), None, "S3", f"{name} cannot be read ({error})")]
    if held == text:
        return []
    for number, (a, b) in enumerate(
        zip(held.splitlines(), text.splitlines(), strict=False), start=1
    ):
        if a != b:
            return [
                Problem(
                    str(folder),
                    None,
                    "S3",
                    f"{name} line {number} is {a!r}, recomputed from the games {b!r}",
                )
            ]
    return [Problem(str(folder), None, "S3", f"{name} is not as recomputed from the games")]


def _report_md(
    folder: Path,
    config: TournamentConfig,
    tables: Tables,
    result: Verification,
    metadata: Mapping[str, Any],
    sprt: SprtState | None,
) -> list[Problem]:
    """report.md as ``write_reports`` writes it from the games; its build time and the
    version that wrote it are taken from the file (they are not figures of the games)."""
    path = folder / REPORT_MD
    if not path.exists():
        return []
    try:
        held = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return [Problem(str(folder), None, "S3", f"{REPORT_MD} cannot be read ({error})")]
    stamp = _BUILT.search(held)
    if stamp is None:
        return [Problem(str(folder), None, "S3", f"{REPORT_MD} does not say when it was built")]
    played = [(result_of(entry), entry.record) for entry in result.entries]
    summary = report_summary(
        config,
        tables.standings,
        tables.crosstable,
        played,
        complete=bool(metadata.get("complete")),
        planned=int(metadata.get("games_planned", 0)),
        pairings=tables.pairings,
        sprt=None if sprt is None else sprt.summary(),
        swiss=tables.swiss,
        knockout=tables.knockout,
        finals=tables.finals,
        commitment=read_commitment(folder),
    )
    summary = dataclasses.replace(summary, built=stamp["built"], version=stamp["version"])
    return _compare_file(folder, REPORT_MD, render_report_md(summary))


def _sprt(
    folder: Path,
    document: Mapping[str, Any],
    metadata: Mapping[str, Any],
    config: TournamentConfig,
    results: Sequence[GameResult],
    found: list[Problem],
) -> tuple[SprtState | None, str]:
    """S4: the published SPRT re-run over the games (pairs counted in plan order, as the
    match counted them); the state, and what was checked."""
    stated = document.get("sprt")
    if stated is None:
        return None, ""
    where = str(folder)
    try:
        test = Sprt(
            float(stated["elo0"]),
            float(stated["elo1"]),
            float(stated["alpha"]),
            float(stated["beta"]),
        )
    except (KeyError, TypeError, ValueError) as error:
        found.append(Problem(where, None, "S4", f"{RESULTS_FILE}'s sprt is no test ({error})"))
        return None, ""
    secret = metadata.get("deal_secret")
    if not isinstance(secret, str) or not secret:
        return None, ""  # the plan (and so the pairs' order) is not published yet
    a, b = (bot.name for bot in config.bots)
    monitor = MatchMonitor(plan_for(config, secret=secret), a, b, test)
    for game in results:
        try:
            monitor.add(game)
        except ValueError:
            return None, ""  # a game not of the plan: S1 names it
    state = monitor.sprt
    assert state is not None
    expected = json_form(sprt_dict(state))
    for key, value in expected.items():
        if stated.get(key) != value:
            found.append(
                Problem(
                    where,
                    None,
                    "S4",
                    f"the SPRT's {key} is {stated.get(key)!r}; re-run over the games' pairs in "
                    f"plan order it is {value!r}",
                )
            )
    return state, "the SPRT re-run from the games' pairs"
