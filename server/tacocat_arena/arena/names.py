"""Bots by their public names: the arena's pages show bots, never the processes that play
for them.  A duplicate pair's second game is played by the bot's twin instance
(``NAME~B``, ``tournament.runner.TWIN_SUFFIX``: a process that has not seen the deal), and
the referee names sessions, so its seats, sessions and texts say ``alice@v1~B``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tacocat_arena.tournament.runner import TWIN_SUFFIX


def public_name(identity: str) -> str:
    """The bot an instance plays for: ``NAME~B`` is ``NAME``."""
    return identity.removesuffix(TWIN_SUFFIX)


def public_text(text: str, bots: Iterable[str]) -> str:
    """``text`` (a game's detail, a refusal's reason) with the twin instance of each of
    ``bots`` named as the bot itself."""
    for bot in bots:
        text = text.replace(bot + TWIN_SUFFIX, bot)
    return text


def public_record(record: Any, bots: Iterable[str]) -> Any:
    """A copy of a game record (or any JSON value) with every text in it passed through
    ``public_text``: a forfeit's detail names the session that failed.  The stored record is
    left as it is (``verify`` reads it)."""
    bots = tuple(bots)
    if isinstance(record, str):
        return public_text(record, bots)
    if isinstance(record, dict):
        return {key: public_record(value, bots) for key, value in record.items()}
    if isinstance(record, list):
        return [public_record(value, bots) for value in record]
    return record
