"""What a running match or tournament shows as it goes, and when a sequential match stops.

``MatchMonitor`` follows a two-bot match (``tacocat-arena play``): the running score, the Elo
estimate from the complete pairs and, with ``--sprt``, the test's LLR and its bounds, for the
progress line; it says when the test has decided, so no further game starts.  Pairs are
counted in plan order (``pairs.PairsInPlanOrder``), so the decision depends on the games'
results only, never on which game of those in flight finished first.

The exit codes of ``play --sprt`` say how the test ended; Click already uses 1 (an error) and
2 (a usage error), and 130 is an interrupt, so they are avoided.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from tacocat_arena.stats.pairs import (
    EloEstimate,
    PairsInPlanOrder,
    Pentanomial,
    PlannedGame,
    estimate,
)
from tacocat_arena.stats.sprt import Sprt, SprtDecision, SprtState, start
from tacocat_arena.stats.tables import GameResult

EXIT_CODES: Final[dict[SprtDecision, int]] = {
    SprtDecision.H1: 0,  # A is better by elo1 (the answer a "is my new bot better?" script wants)
    SprtDecision.H0: 3,  # A is not better than elo0
    SprtDecision.NONE: 4,  # the --games cap came first
}
"""Exit code of ``tacocat-arena play --sprt`` for each way the test ends."""

DEFAULT_SPRT_GAMES: Final[int] = 2000
"""The cap on games of ``play --sprt`` when ``--games`` is not given (1000 pairs)."""


def default_report_every(planned: int) -> int:
    """How often ``run`` prints the standings by default: about ten times, at most every
    10 games."""
    return max(10, planned // 10)


def format_estimate(found: EloEstimate | None) -> str:
    """``Elo +35 ± 20, LOS 99.9%``, or ``Elo ?`` before the first pair."""
    if found is None:
        return "Elo ?"
    return f"Elo {found.elo:+.0f} ± {found.err:.0f}, LOS {found.los:.1%}"


class MatchMonitor:
    """The state of a two-bot match as its games finish (see the module docstring)."""

    def __init__(self, plan: Sequence[PlannedGame], a: str, b: str, sprt: Sprt | None) -> None:
        self.a, self.b = a, b
        self.pairs = PairsInPlanOrder(plan, a)
        self.sprt: SprtState | None = start(sprt) if sprt is not None else None
        self.points = 0.0  # A's points over every finished game
        self.games = 0
        self.pentanomial = Pentanomial()  # the pairs complete in plan order

    def add(self, result: GameResult) -> None:
        """Count a finished game."""
        self.games += 1
        self.points += result.score(result.seats.index(self.a))
        for half_points in self.pairs.add(result):
            self.pentanomial = self.pentanomial.added(half_points)
            if self.sprt is not None:
                self.sprt = self.sprt.after(half_points)

    @property
    def is_decided(self) -> bool:
        """True once the SPRT accepted H0 or H1: start no more games."""
        return self.sprt is not None and self.sprt.decision is not SprtDecision.NONE

    def progress_text(self) -> str:
        """The progress line's figures: score, Elo ± and LOS, LLR with its bounds."""
        found = estimate(self.pentanomial)
        text = (
            f"{self.a} {_points(self.points)}-{_points(self.games - self.points)} {self.b}, "
            f"{format_estimate(found)}"
        )
        if self.sprt is not None:
            test = self.sprt.sprt
            text += f", LLR {self.sprt.llr:.2f} ({test.lower:.2f}, {test.upper:.2f})"
        return text


def _points(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"
