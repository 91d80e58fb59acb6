"""An SDK bot whose ``attack`` always raises (a student's bug): run as its own process.

The SDK covers for it with a default attack and says so in ``Action.fallback``, so the
referee records the fallback and the standings, the report and ``check`` show it.  It duels
with its highest card: only a duel's winner attacks, and with the default lowest card a few
games could pass without one attack (so without one error to count).
"""

from __future__ import annotations

from collections.abc import Sequence

from tacocat_bot import Bot, SeatView, run


class RaisingBot(Bot):
    name = "raising"

    def duel(self, view: SeatView) -> int:
        return max(view.hand)

    def attack(self, view: SeatView) -> Sequence[int]:
        return [view.hand[len(view.hand)]]  # IndexError: one past the end


if __name__ == "__main__":
    run(RaisingBot())
