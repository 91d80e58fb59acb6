"""``verify`` recomputes the figures people read from the games (issue 38, pt 2): results.json's
standings, crosstable, pairings and SPRT, standings.csv, crosstable.csv and report.md.

In process: a folder is fabricated from the golden records (a store, then every output file
written by the product's own ``write_outputs``, an SPRT run over the plan by ``MatchMonitor``);
each test changes one figure and requires S3 (a table) or S4 (the SPRT), where the games
themselves are left as they were.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tacocat_arena.launch.spec import BotSpec
from tacocat_arena.report.outputs import write_outputs
from tacocat_arena.report.verify_tables import check_tables, verify_run_folder
from tacocat_arena.stats.live import MatchMonitor
from tacocat_arena.stats.sprt import Sprt
from tacocat_arena.stats.tables import GameResult, Termination
from tacocat_arena.tournament.config import TournamentConfig
from tacocat_arena.tournament.record_checks import forfeit_by, record_detail, seat_figures
from tacocat_arena.tournament.schedule import tournament_plan
from tacocat_arena.tournament.storage import TournamentStore
from tacocat_arena.tournament.verify import verify_path

GOLDEN = Path(__file__).parent / "golden"
#: Records for the fabricated games, cycled: wins for seat 0, a draw, forfeits.
RECORDS = ["default.json", "arrow-max-rounds-3.json", "forfeit-timeout.json", "default.json"]


def fabricate(folder: Path, *, sprt: Sprt | None = None, games: int = 8) -> Path:
    """A complete two-bot match folder whose games are golden records under the plan's ids
    and seats, and whose files the product wrote."""
    config = TournamentConfig(
        bots=(BotSpec("greedy", "builtin:greedy"), BotSpec("random", "builtin:random")),
        games_per_pairing=games,
        seed=5,
        out=folder,
    )
    store = TournamentStore(folder)
    store.claim(config.fingerprint(), resume=False)
    plan = tournament_plan(config, store)
    monitor = MatchMonitor(plan, "greedy", "random", sprt)
    for index, planned in enumerate(plan):
        record = json.loads((GOLDEN / RECORDS[index % len(RECORDS)]).read_text())
        record["players"] = list(planned.seats)
        decisions, total = seat_figures(record)
        result = GameResult(
            planned.game_id,
            planned.seats,
            record["seed"],
            record["winner"],
            Termination(record["termination"]),
            record["rounds"],
            (decisions[0], decisions[1]),
            (total[0], total[1]),
            forfeit_by=forfeit_by(record),
        )
        store.save(result, record_detail(record), record)
        monitor.add(result)
    write_outputs(config, store, complete=True, planned=len(plan), sprt=monitor.sprt)
    store.close()
    return folder


def table_rules(folder: Path) -> set[str]:
    """The rules of the folder's table checks (the fabricated games' own S1, their seeds
    not the plan's, are not these checks')."""
    found, _ = check_tables(folder, verify_path(folder))
    return {problem.rule for problem in found}


def edit_json(folder: Path, change: Any) -> None:
    path = folder / "results.json"
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document, indent=2))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return fabricate(tmp_path / "m")


@pytest.fixture
def sprt_folder(tmp_path: Path) -> Path:
    return fabricate(tmp_path / "s", sprt=Sprt(-50.0, 50.0, 0.2, 0.2), games=40)


def test_control_the_product_written_tables_recompute(folder: Path, sprt_folder: Path) -> None:
    assert table_rules(folder) == set()
    assert table_rules(sprt_folder) == set()
    document = json.loads((sprt_folder / "results.json").read_text())
    assert document["sprt"]["decision"] != "none"  # the test decided: a pair can be dropped


def test_S3_two_standings_rows_bots_swapped(folder: Path) -> None:
    def swap(document: dict[str, Any]) -> None:
        rows = document["standings"]
        rows[0]["bot"], rows[1]["bot"] = rows[1]["bot"], rows[0]["bot"]

    edit_json(folder, swap)
    assert table_rules(folder) == {"S3"}


def test_S3_a_crosstable_cell(folder: Path) -> None:
    edit_json(folder, lambda d: d["crosstable"]["cells"]["greedy"]["random"].update(wins=0))
    assert table_rules(folder) == {"S3"}


def test_S3_a_pairings_pentanomial(folder: Path) -> None:
    edit_json(folder, lambda d: d["pairings"][0].update(pairs=99))
    assert table_rules(folder) == {"S3"}


@pytest.mark.parametrize("name", ["standings.csv", "crosstable.csv", "report.md"])
def test_S3_a_figure_of_a_file_people_read(folder: Path, name: str) -> None:
    path = folder / name
    text = path.read_text()
    changed = text.replace("greedy", "grEEdy", 1) if name != "standings.csv" else (
        text.replace(",4,", ",5,", 1) if ",4," in text else text.replace("greedy", "random", 1)
    )  # fmt: skip
    assert changed != text
    path.write_text(changed)
    assert table_rules(folder) == {"S3"}


def test_S3_and_G1_the_stores_error_counts_changed(folder: Path) -> None:
    """The store's ``fallbacks`` are the tables' ``errors``: a row claiming them is caught as a
    row (G1) that its record contradicts, and the tables that were not built from it (S3)."""
    with sqlite3.connect(folder / "tournament.sqlite") as db:
        db.execute("UPDATE games SET fallbacks0 = 2 WHERE rowid = 1")
    rules = {p.rule for p in verify_run_folder(folder).problems}
    assert {"G1", "S3"} <= rules


def test_S4_a_published_decision_the_games_do_not_make(sprt_folder: Path) -> None:
    edit_json(sprt_folder, lambda d: d["sprt"].update(decision="H0"))
    assert table_rules(sprt_folder) == {"S4"}


def test_S4_a_decided_pair_dropped_from_every_copy(sprt_folder: Path) -> None:
    """A grading tier (or play --sprt) stops once the test decides, so its folder may hold
    fewer games than planned; dropping a decided pair from the store, games.jsonl and the
    tables alike still shows: the SPRT re-run over the games is not the published one."""
    lines = (sprt_folder / "games.jsonl").read_text().splitlines()
    dropped = {json.loads(line)["id"] for line in lines[:2]}  # the first deal's two games
    (sprt_folder / "games.jsonl").write_text("".join(f"{line}\n" for line in lines[2:]))
    with sqlite3.connect(sprt_folder / "tournament.sqlite") as db:
        db.executemany("DELETE FROM games WHERE game_id = ?", [(i,) for i in dropped])
    assert "S4" in table_rules(sprt_folder)
