"""A rating over time as an SVG line chart with labelled axes (the bot and player pages).

Only geometry: the ratings and their 95% intervals are the arena's (``rating_history``, the
same fit as the standings); this maps them into a fixed box and picks round ticks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from tacocat_arena.report.plot import tick_step

WIDTH, HEIGHT = 640, 260
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 14, 46


@dataclass(frozen=True)
class Tick:
    """A labelled grid line at ``at`` (x for the games axis, y for the rating axis)."""

    at: float
    label: str


@dataclass(frozen=True)
class RatingChart:
    """What the template draws: the line, its band, both axes' ticks and their titles."""

    line: str
    band: str
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    x_title: str
    y_title: str
    summary: str


def _ticks(lo: float, hi: float) -> list[float]:
    step = tick_step(max(hi - lo, 1.0))
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step) + 1)]


def rating_chart(
    history: Sequence[tuple[int, float, float]], *, x_title: str = "games played"
) -> RatingChart | None:
    """The chart of ``(games, rating, ±)`` points; None without any."""
    if not history:
        return None
    points = [(g, r, e if math.isfinite(e) else 0.0) for g, r, e in history]
    low = min(r - e for _, r, e in points)
    high = max(r + e for _, r, e in points)
    step = tick_step(max(high - low, 1.0))
    low, high = math.floor(low / step) * step, math.ceil(high / step) * step
    if high - low < step:
        high = low + step
    last = max(max(g for g, _, _ in points), 1)
    right, bottom = WIDTH - RIGHT, HEIGHT - BOTTOM

    def x(games: float) -> float:
        return round(LEFT + (right - LEFT) * games / last, 1)

    def y(rating: float) -> float:
        return round(bottom - (bottom - TOP) * (rating - low) / (high - low), 1)

    line = " ".join(f"{x(g)},{y(r)}" for g, r, _ in points)
    upper = [f"{x(g)},{y(r + e)}" for g, r, e in points]
    lower = [f"{x(g)},{y(r - e)}" for g, r, e in reversed(points)]
    games, rating, err = points[-1]
    return RatingChart(
        line=line,
        band=" ".join(upper + lower),
        x_ticks=tuple(Tick(x(v), f"{v:g}") for v in _ticks(0, last)),
        y_ticks=tuple(Tick(y(v), f"{v:g}") for v in _ticks(low, high)),
        width=WIDTH,
        height=HEIGHT,
        left=LEFT,
        right=right,
        top=TOP,
        bottom=bottom,
        x_title=x_title,
        y_title="rating (Elo, band: 95% interval)",
        summary=f"rating {rating:.0f} ± {err:.0f} after {games} games",
    )
