"""A real tournament's report.html and replays, opened from file:// in headless Chromium.

One small tournament (three bots, one of which crashes once) is played by the real CLI for the
whole module; the page is then checked against the tournament's own result files, and every
replay against the engine.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from browser_support import file_url
from replay_support import engine_states, read_table
from verify_support import assert_verifies  # tests/ (pytest pythonpath)

from tacocat_arena.report.writer import write_reports
from tacocat_arena.stats.tables import compute_crosstable, compute_standings
from tacocat_arena.tournament.config import load_config
from tacocat_arena.tournament.storage import TournamentStore

pytestmark = pytest.mark.slow

TINY_BOT = Path(__file__).parent / "tournament_bots" / "tiny_bot.py"
SEED = 987_654_321_987
SECRET_WORD = "s3cr3t-w0rd-in-a-command-line"


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The config's folder of a finished tournament; its results are in ``out/``."""
    folder = tmp_path_factory.mktemp("league")
    shutil.copy(TINY_BOT, folder / "tiny_bot.py")
    crashy = (
        f"python {folder / 'tiny_bot.py'} --crash-after 8 --crash-flag crashed.flag "
        f"--tag {SECRET_WORD}"
    )
    lines = ['name = "Spring league"', "games = 2", f"seed = {SEED}", 'out = "out"']
    for name, command in (
        ("greedy", "builtin:greedy"),
        ("rnd", "builtin:random"),
        ("crashy", crashy),
    ):
        lines += ["", "[[bots]]", f"name = {json.dumps(name)}", f"command = {json.dumps(command)}"]
        if name == "crashy":  # it writes its crash flag into its folder (read-only if sandboxed)
            lines.append("writable_dir = true")
    (folder / "league.toml").write_text("\n".join(lines) + "\n")
    folder.chmod(0o777)  # crashy writes there: a root runner's bot is uid 65534
    done = subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", "run", str(folder / "league.toml"), "-q"],
        cwd=folder,
        env=dict(os.environ, COLUMNS="300"),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert f"Open the report in a browser: {folder / 'out' / 'report.html'}" in done.stdout
    assert_verifies(folder / "out")  # the crashes and restarts as the records say
    return folder


def games_of(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]


def test_the_folder_holds_the_report_and_one_replay_per_game(tournament: Path) -> None:
    out = tournament / "out"
    assert (out / "report.html").is_file() and (out / "report.md").is_file()
    played = [g for g in games_of(out) if not g["record"].get("unplayed")]
    assert sorted(p.name for p in (out / "replays").iterdir()) == sorted(
        f"{g['id']}.html" for g in played
    )


def test_report_shows_the_tournaments_own_tables(
    browser_page, tournament: Path, tmp_path: Path
) -> None:
    out = tournament / "out"
    results = json.loads((out / "results.json").read_text())
    page = browser_page.page
    page.goto(file_url(out / "report.html"))
    assert page.text_content("h1") == "Spring league"

    shown = page.eval_on_selector_all(
        "#standings-table tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    )
    expected = [
        [
            str(row["rank"]),
            row["bot"],
            str(row["games"]),
            str(row["wins"]),
            str(row["losses"]),
            str(row["draws"]),
            f"{row['score']:g}",
            str(round(row["elo"])),
        ]
        for row in results["standings"]
    ]
    assert [cells[:8] for cells in shown] == expected

    headers = page.eval_on_selector_all(
        "#standings-table th", "cells => cells.map(c => c.textContent)"
    )
    terms = page.eval_on_selector_all("#standings-legend dt", "d => d.map(t => t.textContent)")
    explained = " ".join(terms)
    for header in headers:
        assert header in explained or header in {"W", "L", "D"} and "W / L / D" in terms, header

    # The crosstable, in standings order, holds crosstable.csv's w-l-d records.
    with open(out / "crosstable.csv", newline="", encoding="utf-8") as handle:
        csv_rows = {row[0]: row for row in csv.reader(handle)}
    columns = csv_rows.pop("bot")[1:-1]
    order = [row["bot"] for row in results["standings"]]
    cells = page.eval_on_selector_all(
        "#crosstable-table tbody tr",
        "rows => rows.map(r => [...r.cells].slice(2, -1).map(c => c.textContent))",
    )
    for bot, row in zip(order, cells, strict=True):
        for opponent, text in zip(order, row, strict=True):
            if opponent != bot:
                assert csv_rows[bot][1 + columns.index(opponent)].startswith(text + " ")

    # One dot per bot in the Elo plot, and the crash counted under its kind.
    assert page.eval_on_selector_all("#elo-plot g.bot", "g => g.map(x => x.dataset.bot)") == order
    crashes = sum(1 for g in games_of(out) if g["reason"] == "crash")
    assert crashes >= 1
    figures = page.eval_on_selector_all(
        "#figures-table tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    )
    kinds = page.eval_on_selector_all("#figures-table th", "h => h.map(x => x.textContent)")
    crashy = next(row for row in figures if row[0] == "crashy")
    assert int(crashy[kinds.index("Forfeits: crash")]) == crashes

    # The duplicate-pair statistics of results.json, one row per pairing.
    pairs = page.eval_on_selector_all(
        "#pairs-table tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    )
    assert [row[:8] for row in pairs] == [
        [p["a"], p["b"], f"{p['wins']}-{p['losses']}-{p['draws']}"]
        + [str(count) for count in p["pentanomial"].values()]
        for p in results["pairings"]
    ]

    # Every game is listed with a replay link that resolves inside the folder.
    links = page.eval_on_selector_all("#games-table a", "a => a.map(x => x.getAttribute('href'))")
    assert len(links) == len(games_of(out))
    assert all(not Path(link).is_absolute() and (out / link).is_file() for link in links)
    browser_page.screenshot(tmp_path / "report.png")
    browser_page.assert_clean()


def test_at_a_phones_width_the_page_keeps_to_the_screen_and_its_tables_scroll(
    browser_page, tournament: Path
) -> None:
    """At 375 px the standings (820 px of columns) made the whole page scroll sideways; each
    wide table now scrolls in its own box and stays a table for a screen reader."""
    page = browser_page.page
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(file_url(tournament / "out" / "report.html"))
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    box = page.eval_on_selector(
        "#standings-table", "t => [t.clientWidth, t.scrollWidth, getComputedStyle(t).overflowX]"
    )
    assert box[0] <= 375 and box[1] > box[0] and box[2] == "auto", box  # it scrolls, inside
    assert page.locator("#standings-table").aria_snapshot().startswith("- table")
    browser_page.assert_clean()


def test_a_replay_opened_from_the_report_matches_the_engine(
    browser_page, tournament: Path, tmp_path: Path
) -> None:
    out = tournament / "out"
    page = browser_page.page
    page.goto(file_url(out / "report.html"))
    first = games_of(out)[0]
    page.click(f"#games-table a[href='replays/{first['id']}.html']")
    page.wait_for_selector("#step[data-index='0']")
    record = first["record"]
    states = engine_states(record)
    for index in range(len(record["events"])):
        shown = read_table(page)
        assert shown["index"] == index
        if index in states:
            for key in ("hands", "discards", "position", "covered", "won"):
                assert shown[key] == states[index][key], (index, key)
        if index == len(record["events"]) // 2:
            browser_page.screenshot(tmp_path / "replay-mid-game.png")
        page.keyboard.press("ArrowRight")
    page.click("text=back to the tournament report")
    assert page.text_content("h1") == "Spring league"
    browser_page.assert_clean()


ABSOLUTE = re.compile(r"(?<![\w.:/])/(?:home|root|tmp|usr|work|var|opt|etc|srv|mnt)/")


def test_no_page_holds_a_path_a_command_or_a_secret(tournament: Path) -> None:
    out = tournament / "out"
    pages = [out / "report.html", out / "report.md", *(out / "replays").iterdir()]
    forbidden = [str(tournament), str(Path.cwd()), sys.executable, str(Path.home()), SECRET_WORD]
    forbidden += ["tiny_bot.py", "--crash-after"]
    forbidden += [str(g["seed"]) for g in games_of(out)]  # deal seeds: not needed to look
    for path in pages:
        text = path.read_text(encoding="utf-8")
        for word in forbidden:
            assert word not in text, (path.name, word)
        assert not ABSOLUTE.search(text), (path.name, ABSOLUTE.search(text))


def test_an_unfinished_tournament_shows_no_seed_and_no_replay(
    tournament: Path, tmp_path: Path
) -> None:
    config = load_config(tournament / "league.toml", {"out": tmp_path / "partial"}, [])
    (tmp_path / "partial").mkdir()
    store = TournamentStore(tournament / "out")
    try:
        games = [(result, record) for result, _, record in store.rows()][:3]
    finally:
        store.close()
    bots = [bot.name for bot in config.bots]
    results = [result for result, _ in games]
    standings, cross = compute_standings(results, bots), compute_crosstable(results, bots)
    written = write_reports(config, standings, cross, games, complete=False, planned=12)
    text = written.read_text(encoding="utf-8")
    assert "in progress" in text and "3 of 12 games played" in text and "Partial results" in text
    assert "**Partial**: 3 of 12 planned games" in (tmp_path / "partial" / "report.md").read_text()
    assert (
        str(SEED) not in text and str(SEED) not in (tmp_path / "partial" / "report.md").read_text()
    )
    assert "replays/" not in text
    assert not (tmp_path / "partial" / "replays").exists()
