"""``python -m tacocat_arena.cli``: the same command as ``tacocat-arena``."""

from tacocat_arena.cli.main import main

main()
