"""The arena's deals: ``run``'s seed scheme, with secrets that can be published one at a time.

Every deal seed is ``schedule.deal_seed(arena seed, pairing, deal, secret=secret)``, the function
``run`` deals with.  The arena's secret (``meta.deal_secret``, drawn from ``secrets`` when the
store is created, in a file only the server's user can read) never leaves the server; each
deal is dealt with a secret derived from it for that deal alone (``pair_secret``), so
publishing one pair's secret once the pair is over lets anyone re-derive that pair's seed and
predicts no other.  An event's games share one derived secret (``event_secret``: a round
robin is planned as ``run`` plans it), published once the event is over.

A pairing's two games (seats swapped) are one deal played twice or two deals of their own
(``Deals``, ``pairing_deals``): a connected bot is one process that remembers the cards of
its first game, which on one duplicate deal are its opponent's in the second (issue 34), so
the ladder and events deal pairings of connected bots independently unless told otherwise.
"""

from __future__ import annotations

import re
from enum import StrEnum

from tacocat_arena.arena.matchmaking import pair_key
from tacocat_arena.tournament.derive import Scheme, derive_secret
from tacocat_arena.tournament.schedule import deal_seed

#: The ``meta`` key of the arena's secret (``storage.stored_secret``).
SECRET_KEY = "deal_secret"
#: A ladder game's id: ``L``, its pair number (six digits at least), ``a`` for a pairing's
#: first game, ``b`` for its second (seats swapped).
_LADDER_GAME_ID = re.compile(r"L(?P<pair>[0-9]{6,})(?P<half>[ab])")


class Deals(StrEnum):
    """How a pairing's two games are dealt (``record["ladder"|"event"]["deals"]``)."""

    #: One deal, seats swapped: a luck-free comparison, but the second game's hands are the
    #: first's, which a bot that plays both (one connected process) remembers.
    DUPLICATE = "duplicate"
    #: Two deals, each game its own deal number: nothing to remember from one to the next.
    INDEPENDENT = "independent"

    @property
    def per_pairing(self) -> int:
        """How many deal numbers a pairing's two games take."""
        return 2 if self is Deals.INDEPENDENT else 1


def pairing_deals(first: int, deals: Deals) -> tuple[int, int]:
    """The deal numbers of a pairing's two games (the second with the seats swapped), from
    deal number ``first``: ``first`` twice, or ``first`` and ``first + 1``.  The ladder's
    pairs and an event's deals are both numbered so."""
    return (first, first + deals.per_pairing - 1)


def ladder_game_id(pair: int, second: bool) -> str:
    """The id of a ladder game: pair ``pair``'s first game (``L000123a``) or its second,
    seats swapped (``L000123b``); ``parse_ladder_game_id`` reads it back."""
    return f"L{pair:06d}{'b' if second else 'a'}"


def parse_ladder_game_id(game_id: str) -> tuple[int, bool]:
    """``(pair, second)`` of a ladder game's id (``ladder_game_id``); ValueError naming the
    id if it is none."""
    found = _LADDER_GAME_ID.fullmatch(game_id)
    if found is None:
        raise ValueError(f"{game_id!r} is no ladder game id (L, the pair, a or b: L000123a)")
    return int(found["pair"]), found["half"] == "b"


def event_deals_key(event: str) -> str:
    """The ``meta`` key of how event ``event`` deals (a ``Deals``), stored at its start so a
    restarted server deals the same plan; absent for an event from before: duplicate."""
    return f"event:{event}:deals"


def event_deals(stored: str | None) -> Deals:
    """The ``Deals`` an event's stored ``event_deals_key`` value names."""
    return Deals.DUPLICATE if stored is None else Deals(stored)


def derived_secret(secret: str, *labels: object) -> str:
    """A secret for one deal or event: SHA-256 of the arena's secret and ``labels``
    (``derive.Scheme.JOIN``, the scheme every arena so far was dealt with).  Knowing it tells
    nothing of the arena's secret, nor of any other derived secret."""
    return derive_secret(Scheme.JOIN, secret, "tacocat-arena-deal", *labels)


def pair_secret(secret: str, event: str, pair: int) -> str:
    """The secret of ladder pair ``pair`` (published with the pair's games)."""
    return derived_secret(secret, event, pair)


def event_secret(secret: str, event: str) -> str:
    """The secret of event ``event``, a round robin or a Swiss (published once it is over)."""
    return derived_secret(secret, "event", event)


def ladder_seed(arena_seed: int, secret: str, event: str, seats: tuple[str, str], pair: int) -> int:
    """The deal seed of ladder pair ``pair`` between ``seats`` (either order)."""
    return deal_seed(arena_seed, pair_key(*seats), pair, secret=pair_secret(secret, event, pair))
