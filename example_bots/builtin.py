"""A built-in bot made in this process from its ``builtin:`` spec (``launch.builtins``).

Here, beside the bot classes, rather than in ``launch``: ``launch.builtins`` only describes
the built-ins (their modules, classes and options, as data) and never imports a bot, so no
import runs from the launcher's room up into the example bots and back.  What makes a bot
object in process (``python -m example_bots SPEC``, the Gymnasium environment, ``bench bots``,
tests) imports this module, by name.
"""

from __future__ import annotations

import importlib
from typing import Any

from tacocat_arena.launch.builtins import BuiltinSpec


def bot_class(spec: BuiltinSpec) -> Any:
    """The bot class of ``spec``'s built-in (its module imported now)."""
    return getattr(importlib.import_module(spec.builtin.module), spec.builtin.cls)


def make_bot(spec: BuiltinSpec, **defaults: Any) -> Any:
    """A bot instance: ``defaults`` (e.g. a seed) overridden by the spec's options."""
    known = spec.builtin.options
    return bot_class(spec)(**{k: v for k, v in defaults.items() if k in known}, **spec.kwargs)
