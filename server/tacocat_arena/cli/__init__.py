"""The ``tacocat-arena`` command: the only package that imports Click.

Each module parses one wing's options and delegates to the rooms below (``run.py``: run, play,
replay, verify; ``serve.py``: serve and players; ``check.py``; ``bench.py``); domain errors
become ``click.ClickException`` here and nowhere else.
"""

from tacocat_arena.cli.main import main

__all__ = ["main"]
