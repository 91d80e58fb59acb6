"""A tiny bot for the tournament tests, run as its own process by ``tacocat-arena run``.

It plays the SDK's weak default moves (keep the hand, duel and attack with the lowest card,
sacrifice every defence), except that it attacks with the first legal attack.  Options:

  --tag TEXT             ignored: a unique word in the command line, so a test can find
                         the process in /proc
  --sleep-ms N           sleep N ms in every decision (makes a tournament last longer)
  --crash-after N        hard-exit (os._exit(1), no goodbye) in decision number N+1 ...
  --crash-flag FILE      ... but only if FILE does not exist yet; it is created first, so
                         the restarted process plays on (one crash per tournament)
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from tacocat_bot import Bot, run


class TinyBot(Bot):
    name = "tiny"

    def __init__(self, options: argparse.Namespace) -> None:
        self.options = options
        self.decisions = 0

    def act(self, view):  # type: ignore[no-untyped-def]
        options = self.options
        if options.crash_after is not None and self.decisions >= options.crash_after:
            flag = Path(options.crash_flag) if options.crash_flag else None
            if flag is None or not flag.exists():
                if flag is not None:
                    flag.write_text(f"crashed after {self.decisions} decisions\n")
                os._exit(1)
        if options.sleep_ms:
            time.sleep(options.sleep_ms / 1000)
        self.decisions += 1
        return super().act(view)

    def attack(self, view):  # type: ignore[no-untyped-def]
        return view.legal.attacks[0]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tag", default="")
    parser.add_argument("--sleep-ms", type=float, default=0.0)
    parser.add_argument("--crash-after", type=int, default=None)
    parser.add_argument("--crash-flag", default=None)
    run(TinyBot(parser.parse_args()))


if __name__ == "__main__":
    main()
