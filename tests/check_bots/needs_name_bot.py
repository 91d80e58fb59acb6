"""A bot that insists on being told its name: it exits at once when TACOCAT_ARENA_BOT is unset
(what ``check`` without ``--name`` leaves it), and otherwise too, after saying the name."""

import os
import sys

print(f"my name is {os.environ['TACOCAT_ARENA_BOT']}", file=sys.stderr)
sys.exit(3)
