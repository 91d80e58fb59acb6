"""The referee's heap and CPython's cyclic garbage collector.

A full collection walks every container object in the process while the whole interpreter
stands still, so its pause grows with the heap: with 256 games in flight it was the longest
time any game waited on the referee (``tacocat-arena bench load``).  The referee keeps that
heap small in three ways:

- per-game values the collector need not see are kept as objects it does not track: the
  clock times of a game's decisions are plain floats (``GameReport.action_ms``), the wire
  forms of events and of legal options are bytes (``protocol.wire``);
- a finished game is freed by reference counting alone (no cycle holds it: tested);
- what is alive when the server starts (modules, classes, functions, the gRPC server, the
  tournament's settings) lives as long as the process, so it is moved once into the
  collector's permanent generation (``gc.freeze``), which later collections skip.

The last is the one process-wide choice: an object alive at that moment that later becomes
part of an unreachable cycle is never reclaimed.  It is made once per process, after a full
collection, so only objects that were alive and reachable then are frozen.
"""

from __future__ import annotations

import gc


def freeze_long_lived() -> int:
    """Collect, then freeze every object alive now (once per process); return how many
    objects were frozen (0 when something already froze this process's heap)."""
    if gc.get_freeze_count():
        return 0
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
