"""The geometry of the Elo plot: each bot's rating as a dot with its 95% interval as a bar.

Only presentation: the ratings and their intervals come from the standings (ratings.py);
this maps them to SVG coordinates and picks round tick values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from tacocat_arena.stats.tables import StandingsRow

ROW = 30
LABEL = 160
WIDTH = 760
TOP = 10
AXIS = 34


@dataclass(frozen=True)
class PlotRow:
    """One bot's line: ``x`` the rating, ``low``/``high`` the interval (None if unrated)."""

    bot: str
    y: float
    x: float
    low: float | None
    high: float | None
    label: str


@dataclass(frozen=True)
class Tick:
    """A labelled vertical grid line."""

    x: float
    label: str


@dataclass(frozen=True)
class EloPlot:
    """Everything the template needs to draw the plot."""

    rows: tuple[PlotRow, ...]
    ticks: tuple[Tick, ...]
    width: int
    height: int
    left: int
    right: int
    axis_y: float


def tick_step(span: float) -> float:
    """A round step (1, 2 or 5 times a power of ten) giving about six ticks over ``span``."""
    raw = span / 6
    magnitude = 10 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)


def elo_plot(rows: Sequence[StandingsRow]) -> EloPlot:
    """Lay out the standings' ratings, best first, on one shared scale."""
    lows = [row.elo - (row.elo_err or 0.0) for row in rows] or [0.0]
    highs = [row.elo + (row.elo_err or 0.0) for row in rows] or [0.0]
    lo, hi = min(lows + [0.0]), max(highs + [0.0])
    if hi - lo < 1:
        lo, hi = lo - 50, hi + 50
    step = tick_step(hi - lo)
    lo, hi = math.floor(lo / step) * step, math.ceil(hi / step) * step
    left, right = LABEL, WIDTH - 20

    def x(value: float) -> float:
        return round(left + (value - lo) / (hi - lo) * (right - left), 1)

    plot_rows = tuple(
        PlotRow(
            bot=row.bot,
            y=TOP + ROW * index + ROW / 2,
            x=x(row.elo),
            low=None if row.elo_err is None else x(row.elo - row.elo_err),
            high=None if row.elo_err is None else x(row.elo + row.elo_err),
            label=(
                f"{round(row.elo)} ± {round(row.elo_err)}"
                if row.elo_err is not None
                else f"{round(row.elo)} (no games)"
            ),
        )
        for index, row in enumerate(rows)
    )
    count = round((hi - lo) / step)
    ticks = tuple(Tick(x(lo + i * step), f"{lo + i * step:g}") for i in range(count + 1))
    axis_y = TOP + ROW * len(rows) + 4
    return EloPlot(plot_rows, ticks, WIDTH, int(axis_y + AXIS), left, right, axis_y)
