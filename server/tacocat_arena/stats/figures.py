"""Per-bot figures beyond the standings: forfeits by kind and decision-time percentiles.

Pure functions of the finished games, like ``tables.py``; the report pages present these
values and compute none of their own. Decision times per decision are only in records that
carry them (record version 2, docs/game-record.md): for older records the percentile is
unknown (None), never guessed from per-game totals.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tacocat_arena.engine import Termination
from tacocat_arena.stats.tables import GameResult

FORFEIT_KINDS: tuple[Termination, ...] = tuple(t for t in Termination if t.is_forfeit)
"""The forfeit endings, in the engine's order (the columns of the per-bot table)."""


@dataclass(frozen=True)
class BotFigures:
    """One bot's forfeits by kind and its decision times.

    ``mean_decision_ms`` is total thinking time over decisions (as in the standings);
    ``p95_decision_ms`` is the 95th percentile over single decisions, None when no record of
    the bot's games carries per-decision times.
    """

    bot: str
    decisions: int
    forfeits: Mapping[Termination, int]
    mean_decision_ms: float | None
    p95_decision_ms: float | None
    timed_decisions: int


def decision_times(record: Mapping[str, Any]) -> tuple[list[float], list[float]] | None:
    """Each seat's per-decision milliseconds from a record's actions, or None when the record
    carries none (version 1). Forfeit entries are not decisions and are skipped."""
    times: tuple[list[float], list[float]] = ([], [])
    found = False
    for action in record.get("actions", ()):
        ms = action.get("ms")
        seat = action.get("seat")
        if "forfeit" in action or seat not in (0, 1) or not isinstance(ms, int | float):
            continue
        times[seat].append(float(ms))
        found = True
    return times if found else None


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile (``fraction`` in (0, 1]) of non-empty ``values``."""
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def compute_bot_figures(
    results: Sequence[GameResult],
    bots: Sequence[str],
    records: Iterable[tuple[GameResult, Mapping[str, Any]]] = (),
) -> dict[str, BotFigures]:
    """Figures of every bot in ``bots``; ``records`` (result, record) pairs supply the
    per-decision times where the records hold them."""
    forfeits = {bot: dict.fromkeys(FORFEIT_KINDS, 0) for bot in bots}
    decisions = dict.fromkeys(bots, 0)
    thinking = dict.fromkeys(bots, 0.0)
    for result in results:
        for seat, bot in enumerate(result.seats):
            decisions[bot] += result.decisions[seat]
            thinking[bot] += result.decision_ms[seat]
            if result.forfeit_by == seat:
                forfeits[bot][result.reason] += 1
    timed: dict[str, list[float]] = {bot: [] for bot in bots}
    for result, record in records:
        times = decision_times(record)
        if times is None:
            continue
        for seat, bot in enumerate(result.seats):
            timed[bot].extend(times[seat])
    return {
        bot: BotFigures(
            bot=bot,
            decisions=decisions[bot],
            forfeits=forfeits[bot],
            mean_decision_ms=thinking[bot] / decisions[bot] if decisions[bot] else None,
            p95_decision_ms=percentile(timed[bot], 0.95) if timed[bot] else None,
            timed_decisions=len(timed[bot]),
        )
        for bot in bots
    }
