"""The failure policy as an object the game loop asks (PettingZoo's wrappers are the model).

RULES-SPEC says nothing of timeouts, illegal or malformed answers and disconnects: they are
referee policy.  ``match.play_game`` plays the rules and, when a seat's decision fails, asks
``FailureRules`` what that costs; the policy is in one place, not spread through the loop.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from tacocat_arena.engine import Failure
from tacocat_arena.referee.settings import FailurePolicy


class Ruling(enum.Enum):
    """What the referee does with one seat's failed decision."""

    FORFEIT = "forfeit"  # the seat loses the game at once
    SUBSTITUTE = "substitute"  # the referee plays the default action in its place


@dataclass(frozen=True)
class FailureRules:
    """The answers of one failure policy (``FailurePolicy``) to the game loop's questions."""

    policy: FailurePolicy

    def ruling(self, failure: Failure) -> Ruling:
        """One seat's failed decision: a disconnect always forfeits (nobody is left to play
        for), anything else as the policy says."""
        if failure is Failure.DISCONNECT or self.policy is FailurePolicy.FORFEIT:
            return Ruling.FORFEIT
        return Ruling.SUBSTITUTE

    def ends_both(self, failed_seats: int) -> bool:
        """Whether both seats failing the same simultaneous decision ends the game at once,
        with no winner (under ``forfeit``; ``default_action`` substitutes each in turn)."""
        return failed_seats == 2 and self.policy is FailurePolicy.FORFEIT
