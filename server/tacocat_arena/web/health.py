"""The arena's health as the organizer's desk shows it: games per second, games in flight,
errors.  Finished games are timed as they are committed (``Arena.on_game``), so the rate
needs nothing of the arena but its listener list."""

from __future__ import annotations

import collections
import time

from tacocat_arena.arena.ladder import Arena
from tacocat_arena.arena.store import StoredGame

#: The window over which games per second are counted.
RATE_WINDOW_S = 60.0


class GameClock:
    """When the latest games were committed (monotonic seconds, the newest 100,000)."""

    def __init__(self, arena: Arena) -> None:
        self.times: collections.deque[float] = collections.deque(maxlen=100_000)
        self.started = time.monotonic()
        arena.on_game.append(self.tick)

    def tick(self, stored: StoredGame) -> None:
        """One more game committed now."""
        self.times.append(time.monotonic())

    def rate(self, now: float | None = None) -> float:
        """Games per second over the last ``RATE_WINDOW_S`` (or since start-up if sooner)."""
        now = time.monotonic() if now is None else now
        window = min(RATE_WINDOW_S, max(now - self.started, 1e-9))
        recent = 0
        for at in reversed(self.times):
            if now - at > window:
                break
            recent += 1
        return recent / window
