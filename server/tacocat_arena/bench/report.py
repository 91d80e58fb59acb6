"""``tacocat-arena bench report``: how long report.html (and the replays) take to build.

The games are real: played in process by the engine with random policies, so their records
have the size and shape of a tournament's. Only the writing of the pages is timed, in CPU
seconds of this process, with the same function ``run`` uses.
"""

from __future__ import annotations

import random
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tacocat_arena.engine import to_record
from tacocat_arena.play.local import play_game
from tacocat_arena.play.policies import RandomPolicy
from tacocat_arena.report.writer import REPLAYS, write_reports
from tacocat_arena.stats.tables import GameResult, compute_crosstable, compute_standings
from tacocat_arena.tournament.config import BotSpec, TournamentConfig


@dataclass(frozen=True)
class ReportFigures:
    """CPU and wall seconds of each build, and the size of what was written."""

    games: int
    bots: int
    report_cpu_s: float
    report_wall_s: float
    report_bytes: int
    full_cpu_s: float
    full_wall_s: float
    replay_bytes: int


def synthetic_games(count: int, bots: int, seed: int) -> list[tuple[GameResult, dict[str, Any]]]:
    """``count`` played games spread over the ordered pairings of ``bots`` bots."""
    names = [f"bot{i}" for i in range(bots)]
    pairings = [(a, b) for a in names for b in names if a != b]
    rng = random.Random(seed)
    games = []
    for index in range(count):
        seats = pairings[index % len(pairings)]
        game = play_game([RandomPolicy(rng), RandomPolicy(rng)], seed=seed + index)
        record = to_record(game)
        outcome = game.outcome
        if outcome is None:
            raise RuntimeError(f"game {index} did not finish")  # play_game plays to the end
        result = GameResult(
            game_id=f"{seats[0]}-{seats[1]}-d{index // len(pairings)}",
            seats=seats,
            seed=seed + index,
            winner=outcome.winner,
            reason=outcome.termination,
            rounds=game.round,
            decisions=(game.decisions // 2, game.decisions - game.decisions // 2),
            decision_ms=(rng.uniform(1, 50), rng.uniform(1, 50)),
        )
        games.append((result, record))
    return games


def _timed(call: Any) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    call()
    return time.process_time() - cpu, time.perf_counter() - wall


def bench_report(games: int, *, bots: int = 8, seed: int = 1) -> ReportFigures:
    """Build the report of ``games`` games twice: report.html and report.md alone (a partial
    tournament), then with every replay (a complete one)."""
    played = synthetic_games(games, bots, seed)
    results = [result for result, _ in played]
    with tempfile.TemporaryDirectory(prefix="tacocat-bench-report-") as folder:
        out = Path(folder)
        config = TournamentConfig(
            bots=tuple(BotSpec(f"bot{i}", "builtin:random") for i in range(bots)),
            games_per_pairing=2,
            out=out,
            name="bench",
        )
        names = [bot.name for bot in config.bots]

        def build(complete: bool) -> None:
            # Standings and crosstable are part of what `run` computes for the report.
            standings = compute_standings(results, names)
            cross = compute_crosstable(results, names)
            write_reports(config, standings, cross, played, complete=complete, planned=games)

        report_cpu, report_wall = _timed(lambda: build(False))
        report_bytes = (out / "report.html").stat().st_size
        full_cpu, full_wall = _timed(lambda: build(True))
        replay_bytes = sum(path.stat().st_size for path in (out / REPLAYS).iterdir())
    return ReportFigures(
        games, bots, report_cpu, report_wall, report_bytes, full_cpu, full_wall, replay_bytes
    )
