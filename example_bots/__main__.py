"""Run a built-in bot with options: ``python -m example_bots "builtin:search?budget=30"``.

``tacocat-arena run`` starts built-ins given options this way (see
``tacocat_arena.launch.builtins``); a built-in without options runs as its own module.
"""

import sys

# The SDK first: it defers what a bot never uses before the engine can load it.
from tacocat_bot import run

# isort: split

from example_bots.builtin import make_bot
from tacocat_arena.launch.builtins import BuiltinError, parse_builtin


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        sys.exit('usage: python -m example_bots "builtin:NAME?key=value&..."')
    try:
        spec = parse_builtin(argv[0])
    except BuiltinError as error:
        sys.exit(str(error))
    run(make_bot(spec))


if __name__ == "__main__":
    main(sys.argv[1:])
