"""The arena's deals: ``run``'s seed scheme, with secrets that can be published one at a time.

Every deal seed is ``schedule.deal_seed(arena seed, pairing, deal, secret=secret)``, the function
``run`` deals with.  The arena's secret (``meta.deal_secret``, drawn from ``secrets`` when the
store is created, in a file only the server's user can read) never leaves the server; each
deal is dealt with a secret derived from it for that deal alone (``pair_secret``), so
publishing one pair's secret once the pair is over lets anyone re-derive that pair's seed and
predicts no other.  An event's games share one derived secret (``event_secret``: a round
robin is planned as ``run`` plans it), published once the event is over.
"""

from __future__ import annotations

import hashlib

from tacocat_arena.arena.matchmaking import pair_key
from tacocat_arena.tournament.schedule import deal_seed

#: The ``meta`` key of the arena's secret (``storage.stored_secret``).
SECRET_KEY = "deal_secret"


def derived_secret(secret: str, *labels: object) -> str:
    """A secret for one deal or event: SHA-256 of the arena's secret and ``labels``.  Knowing
    it tells nothing of the arena's secret, nor of any other derived secret."""
    key = ":".join(["tacocat-arena-deal", secret, *map(str, labels)])
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def pair_secret(secret: str, event: str, pair: int) -> str:
    """The secret of ladder pair ``pair`` (published with the pair's games)."""
    return derived_secret(secret, event, pair)


def event_secret(secret: str, event: str) -> str:
    """The secret of round-robin event ``event`` (published once it is over)."""
    return derived_secret(secret, "event", event)


def ladder_seed(arena_seed: int, secret: str, event: str, seats: tuple[str, str], pair: int) -> int:
    """The deal seed of ladder pair ``pair`` between ``seats`` (either order)."""
    return deal_seed(arena_seed, pair_key(*seats), pair, secret=pair_secret(secret, event, pair))
