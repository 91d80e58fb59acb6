"""Action masks as numpy arrays, made from a table of the masks already made.

A mask is a function of the legal ids alone, and a learner meets the same few hundred id sets
over and over: building one (zeros, then a fancy-indexed write) costs several times copying
a kept one.  Each call returns a new array, since PettingZoo and Gymnasium users keep their
observations (a replay buffer, a rollout) and a shared array changed later would change them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: How many id sets a table keeps before it starts again (a default ruleset meets ~1,000).
_LIMIT = 1 << 12


class Masks:
    """The masks of ``size`` ids in ``dtype`` (``int8`` as PettingZoo's classic games, or
    ``bool`` as sb3-contrib's ``action_masks()``)."""

    __slots__ = ("size", "dtype", "_table")

    def __init__(self, size: int, dtype: Any) -> None:
        self.size = size
        self.dtype = np.dtype(dtype)
        self._table: dict[tuple[int, ...], np.ndarray] = {}

    def of(self, ids: tuple[int, ...]) -> np.ndarray:
        """A new array: 1 (True) at each of ``ids``, 0 elsewhere."""
        mask = self._table.get(ids)
        if mask is None:
            if len(self._table) >= _LIMIT:
                self._table.clear()
            mask = np.zeros(self.size, self.dtype)
            mask[list(ids)] = 1
            mask.flags.writeable = False
            self._table[ids] = mask
        return mask.copy()
