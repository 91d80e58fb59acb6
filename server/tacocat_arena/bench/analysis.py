"""What ``analyze`` costs per game, and how far its reference disagrees with itself
(``tacocat-arena bench analysis``; docs/why-lose.md quotes both).

Games are played in process (the ISMCTS bot against the greedy one, seats alternating); each
game's ISMCTS seat is analysed twice by the reference, with two base seeds, each run timed in
CPU and wall time.  The two runs see the same decisions from the same views, so whatever
differs between them is the reference's own noise: how often they name a different best
action, how often they mark a decision differently, and the mean and 90th percentile of the
difference of their losses (win-probability points).  A mark is trusted only past two
standard errors; the last figure is how often a run's mark is one the other run did not
give, the noise that rule leaves.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from dataclasses import dataclass

from tacocat_arena.engine import to_record
from tacocat_arena.play.analysis import DecisionAnalysis, Reference, analyze_record
from tacocat_arena.play.ismcts import IsmctsPolicy
from tacocat_arena.play.local import play_game
from tacocat_arena.play.policies import GreedyPolicy, Policy


@dataclass(frozen=True)
class AnalysisFigures:
    """What ``bench analysis`` measured."""

    games: int
    reference: str
    decisions: int
    chosen: int
    cpu_s_per_game: float
    wall_s_per_game: float
    cpu_ms_per_decision: float
    best_differs: float
    mark_differs: float
    marked: float
    loss_gap_mean: float
    loss_gap_p90: float
    load_average: tuple[float, float, float] | None


def bench_analysis(games: int, reference: Reference, *, seed: int = 1) -> AnalysisFigures:
    """Play ``games`` games and analyse the ISMCTS seat of each twice (seeds differ)."""
    cpu = wall = 0.0
    pairs: list[tuple[DecisionAnalysis, DecisionAnalysis]] = []
    for index in range(games):
        seat = index % 2
        bots: list[Policy] = [IsmctsPolicy(600, rng=random.Random(seed + index)), GreedyPolicy()]
        record = to_record(play_game(bots if seat == 0 else bots[::-1], seed=seed + index))
        runs = []
        for base in (seed, seed + 1_000_003):
            spec = Reference(reference.iterations, reference.seeds, reference.uct, base)
            started_cpu, started = time.process_time(), time.perf_counter()
            runs.append(analyze_record(record, seat, spec))
            cpu += time.process_time() - started_cpu
            wall += time.perf_counter() - started
        pairs.extend(zip(runs[0].decisions, runs[1].decisions, strict=True))
    chosen = [(a, b) for a, b in pairs if not a.forced]
    gaps = sorted(abs(a.loss - b.loss) for a, b in chosen)
    runs_done = 2 * games
    count = max(1, len(chosen))
    return AnalysisFigures(
        games=games,
        reference=str(reference),
        decisions=len(pairs),
        chosen=len(chosen),
        cpu_s_per_game=cpu / runs_done,
        wall_s_per_game=wall / runs_done,
        cpu_ms_per_decision=1000 * cpu / max(1, 2 * len(pairs)),
        best_differs=sum(a.best != b.best for a, b in chosen) / count,
        mark_differs=sum(a.mark != b.mark for a, b in chosen) / count,
        marked=sum((a.mark is not None) + (b.mark is not None) for a, b in chosen) / (2 * count),
        loss_gap_mean=statistics.fmean(gaps) if gaps else 0.0,
        loss_gap_p90=gaps[int(0.9 * (len(gaps) - 1))] if gaps else 0.0,
        load_average=os.getloadavg() if hasattr(os, "getloadavg") else None,
    )
