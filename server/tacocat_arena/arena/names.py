"""Bots by their public names: the arena's pages show bots, never the processes that play
for them.  A duplicate pair's second game is played by the bot's twin instance
(``NAME~B``, ``tournament.runner.TWIN_SUFFIX``: a process that has not seen the deal), and
the referee names sessions, so its seats, sessions and texts say ``alice@v1~B``.
"""

from __future__ import annotations

from collections.abc import Iterable

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
