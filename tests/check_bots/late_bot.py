"""A bot that connects when told (``python late_bot.py UP GO``): it creates the file UP (it is
running), waits for the file GO (at most a minute), then connects and plays as the SDK's base
bot, which passes every check.  With ``--exit``, it exits with code 3 once UP exists, never
connecting: two checks at once can then be ordered by files alone, no timing."""

import sys
import time
from pathlib import Path

if sys.argv[1] == "--exit":
    up = Path(sys.argv[2])
    for _ in range(1200):
        if up.exists():
            sys.exit(3)
        time.sleep(0.05)
    sys.exit(4)

up, go = Path(sys.argv[1]), Path(sys.argv[2])
up.touch()
for _ in range(1200):
    if go.exists():
        break
    time.sleep(0.05)

from tacocat_bot import Bot, run  # noqa: E402  (after the wait: the import costs a moment)

run(Bot())
