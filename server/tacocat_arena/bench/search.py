"""What the example search bot costs per decision (``tacocat-arena bench search``).

Docs quote this figure, so it is measured, not guessed: the bot plays the greedy bot in
process (no transport, no referee), and each of its decisions is timed in CPU time of this
process (what the machine's other load changes least) and in wall time, by decision kind.
The referee's ``ms/dec`` in a tournament is higher: it adds the transport and the wait for a
free core.
"""

from __future__ import annotations

import os
import statistics
import time
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from tacocat_arena.engine import DEFAULT_RULESET, Action, SeatView
from tacocat_arena.play.local import play_game
from tacocat_arena.play.policies import GreedyPolicy


@dataclass(frozen=True)
class KindFigures:
    """Per-decision costs of one decision kind, in milliseconds."""

    decisions: int
    cpu_mean_ms: float
    cpu_median_ms: float
    cpu_p90_ms: float
    wall_mean_ms: float


@dataclass(frozen=True)
class SearchFigures:
    """What ``bench search`` measured: per kind, and over every decision."""

    games: int
    budget: int
    by_kind: Mapping[str, KindFigures]
    overall: KindFigures
    load_average: tuple[float, float, float] | None


class _Timed:
    """Wraps a policy and records each decision's CPU and wall time by kind."""

    def __init__(self, policy: object) -> None:
        self.policy = policy
        self.cpu: dict[str, list[float]] = defaultdict(list)
        self.wall: dict[str, list[float]] = defaultdict(list)

    def act(self, view: SeatView) -> Action:
        wall, cpu = time.perf_counter(), time.process_time()
        action: Action = self.policy.act(view)  # type: ignore[attr-defined]
        kind = view.kind.value if view.kind is not None else "?"
        self.cpu[kind].append(1000 * (time.process_time() - cpu))
        self.wall[kind].append(1000 * (time.perf_counter() - wall))
        return action


def _figures(cpu: list[float], wall: list[float]) -> KindFigures:
    ordered = sorted(cpu)
    return KindFigures(
        decisions=len(cpu),
        cpu_mean_ms=statistics.fmean(cpu),
        cpu_median_ms=statistics.median(cpu),
        cpu_p90_ms=ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))],
        wall_mean_ms=statistics.fmean(wall),
    )


def bench_search(games: int, *, budget: int = 150, seed: int = 1) -> SearchFigures:
    """Play ``games`` games of the example search bot (at ``budget``) against greedy, seats
    alternating, and time every decision of the search bot."""
    from example_bots.search_bot import SearchBot  # the bot the docs describe, as shipped

    timed = _Timed(SearchBot(budget=budget, seed=seed))
    greedy = GreedyPolicy()
    for index in range(games):
        seats = (timed, greedy) if index % 2 == 0 else (greedy, timed)
        play_game(seats, ruleset=DEFAULT_RULESET, seed=seed * 1_000_003 + index // 2)
    by_kind = {kind: _figures(timed.cpu[kind], timed.wall[kind]) for kind in sorted(timed.cpu)}
    every_cpu = [ms for values in timed.cpu.values() for ms in values]
    every_wall = [ms for values in timed.wall.values() for ms in values]
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return SearchFigures(games, budget, by_kind, _figures(every_cpu, every_wall), load)
