"""``tacocat-arena check``: a conformance test for any bot, over the real protocol.

A scripted referee (``link``) plays scripted games (``script``) through a series of checks
(``scenarios``) against a bot started as a tournament starts it (``runner``).  Run it first
on a new bot: every check says what it expected and what came back.
"""

from tacocat_arena.check.runner import (
    CHECK_NAMES,
    BotCheckError,
    CheckReport,
    CheckResult,
    Status,
    check_bot,
)

__all__ = ["CHECK_NAMES", "BotCheckError", "CheckReport", "CheckResult", "Status", "check_bot"]
