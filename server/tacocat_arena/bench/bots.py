"""``bench bots``: every built-in against every other, over duplicate pairs, in process.

Each pairing plays ``pairs`` deals twice, the seats swapped (as tournaments do), on the
engine with no referee; a pair's score is the first bot's mean over its two games (a win 1,
a draw 1/2), and the table gives the mean over pairs with a 95% interval
(``1.96 * sd / sqrt(pairs)``, the pairs being independent).  This is the ladder of baselines
that docs/sdk.md quotes.  Bots are seeded from ``seed`` so that a run can be repeated.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tacocat_arena.launch.builtins import BuiltinSpec, parse_builtin
from tacocat_arena.play.local import play_game

DEFAULT_LADDER = ("random", "greedy", "search", "ismcts")


@dataclass(frozen=True)
class Pairing:
    """The first bot's score against the second over duplicate pairs."""

    first: str
    second: str
    pair_scores: tuple[float, ...]
    cpu_seconds: float

    @property
    def score(self) -> float:
        return statistics.fmean(self.pair_scores)

    @property
    def half_width(self) -> float:
        """Half the width of the 95% interval of ``score``."""
        if len(self.pair_scores) < 2:
            return math.inf
        return 1.96 * statistics.stdev(self.pair_scores) / math.sqrt(len(self.pair_scores))


def bench_bots(
    specs: Sequence[str] = DEFAULT_LADDER,
    *,
    pairs: int = 20,
    seed: int = 1,
    progress: Callable[[str], None] | None = None,
) -> list[Pairing]:
    """Play every pairing of ``specs`` (built-in names or ``builtin:NAME?key=value``)."""
    parsed = [parse_builtin(spec) for spec in specs]
    results = []
    for i, first in enumerate(parsed):
        for second in parsed[i + 1 :]:
            results.append(_pairing(first, second, pairs, seed))
            if progress is not None:
                last = results[-1]
                progress(
                    f"{first.label} vs {second.label}: {last.score:.3f} +- {last.half_width:.3f} "
                    f"({last.cpu_seconds:.0f} s CPU)"
                )
    return results


def _pairing(first: BuiltinSpec, second: BuiltinSpec, pairs: int, seed: int) -> Pairing:
    start = time.process_time()
    a, b = first.make(seed=seed), second.make(seed=seed + 1)
    scores = []
    for deal in range(pairs):
        deal_seed = seed * 1_000_003 + deal
        one = play_game((a, b), seed=deal_seed).outcome
        two = play_game((b, a), seed=deal_seed).outcome
        assert one is not None and two is not None
        points = _points(one.winner, 0) + _points(two.winner, 1)
        scores.append(points / 2)
    return Pairing(first.label, second.label, tuple(scores), time.process_time() - start)


def _points(winner: int | None, seat: int) -> float:
    return 0.5 if winner is None else float(winner == seat)


def render_table(results: Sequence[Pairing]) -> str:
    """A Markdown crosstable (row's score against column, 95% interval) and the ladder."""
    names: list[str] = []
    for result in results:
        for name in (result.first, result.second):
            if name not in names:
                names.append(name)
    cell: dict[tuple[str, str], str] = {}
    totals = dict.fromkeys(names, 0.0)
    for result in results:
        cell[result.first, result.second] = f"{result.score:.2f} ± {result.half_width:.2f}"
        cell[result.second, result.first] = f"{1 - result.score:.2f} ± {result.half_width:.2f}"
        totals[result.first] += result.score
        totals[result.second] += 1 - result.score
    lines = [
        "| bot | " + " | ".join(names) + " | mean |",
        "|---" * (len(names) + 2) + "|",
    ]
    for name in sorted(names, key=lambda n: -totals[n]):
        row = [cell.get((name, other), "—") for other in names]
        mean = totals[name] / max(1, len(names) - 1)
        lines.append(f"| {name} | " + " | ".join(row) + f" | {mean:.2f} |")
    return "\n".join(lines)
