"""``builtin:NAME?key=value&...``: the example bots by name, with tunable strength.

The built-ins are the course's ladder of baselines (docs/sdk.md): each names a bot class of
``example_bots`` and the keyword options its constructor takes, with their types and ranges,
so that ``builtin:search?budget=30`` or ``builtin:greedy?epsilon=0.1`` is checked when a config
loads, not when the bot starts.  A built-in with options runs as
``python -m example_bots SPEC``; without options as ``python -m example_bots.MODULE``.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl

PREFIX = "builtin:"


class BuiltinError(ValueError):
    """A ``builtin:`` spec names no built-in or gives it a bad option; the message says which."""


@dataclass(frozen=True)
class Option:
    """One keyword option of a built-in: its type, its range, and what it does."""

    kind: type
    low: float
    high: float
    help: str

    def parse(self, bot: str, key: str, text: str) -> int | float:
        """The option's value from its text, or BuiltinError naming the bot and the range."""
        try:
            value = self.kind(text)
        except ValueError:
            raise BuiltinError(
                f"builtin:{bot}: option {key}={text!r} must be {_article(self.kind)}"
            ) from None
        if not (self.low <= value <= self.high) or (isinstance(value, float) and math.isnan(value)):
            raise BuiltinError(
                f"builtin:{bot}: option {key}={text} is out of range [{self.low:g}, {self.high:g}]"
            )
        return value


def _article(kind: type) -> str:
    return "an integer" if kind is int else "a number"


_SEED = Option(int, 0, 2**63 - 1, "seed of the bot's random choices")


@dataclass(frozen=True)
class Builtin:
    """A built-in bot: the module and class that implement it, and its options."""

    module: str
    cls: str
    summary: str
    options: Mapping[str, Option]


BUILTINS: Mapping[str, Builtin] = {
    "random": Builtin(
        "example_bots.random_bot", "RandomBot", "uniformly random legal moves", {"seed": _SEED}
    ),
    "greedy": Builtin(
        "example_bots.greedy_bot",
        "GreedyBot",
        "a simple heuristic",
        {
            "epsilon": Option(float, 0.0, 1.0, "chance of a random legal move instead"),
            "seed": _SEED,
        },
    ),
    "search": Builtin(
        "example_bots.search_bot",
        "SearchBot",
        "Monte Carlo rollouts over sampled opponent hands",
        {"budget": Option(int, 1, 100_000, "rollouts per decision"), "seed": _SEED},
    ),
    "ismcts": Builtin(
        "example_bots.ismcts_bot",
        "IsmctsBot",
        "information-set Monte Carlo tree search",
        {
            "iterations": Option(int, 1, 1_000_000, "simulations per decision"),
            "uct": Option(float, 0.0, 100.0, "exploration constant of the tree policy"),
            "seed": _SEED,
        },
    ),
}


@dataclass(frozen=True)
class BuiltinSpec:
    """A parsed ``builtin:NAME?key=value&...``: the built-in's name and its options."""

    name: str
    options: tuple[tuple[str, int | float], ...] = ()

    @property
    def builtin(self) -> Builtin:
        return BUILTINS[self.name]

    @property
    def kwargs(self) -> dict[str, int | float]:
        """The options as constructor keywords."""
        return dict(self.options)

    @property
    def label(self) -> str:
        """A bot name for tables: ``search``, or ``search-budget-30`` with options."""
        parts = [self.name] + [f"{key}-{_text(value)}" for key, value in self.options]
        return "-".join(parts)

    def __str__(self) -> str:
        query = "&".join(f"{key}={_text(value)}" for key, value in self.options)
        return PREFIX + self.name + ("?" + query if query else "")

    def argv(self) -> list[str]:
        """The command that runs this built-in with this Python."""
        if not self.options:
            return [sys.executable, "-m", self.builtin.module]
        return [sys.executable, "-m", "example_bots", str(self)]


def _text(value: int | float) -> str:
    return str(value) if isinstance(value, int) else repr(value)


def builtins_folder() -> Path:
    """The installed ``example_bots`` package's folder, where a built-in runs: all it needs,
    the same for every organizer, readable by a root runner's bots (uid 65534) wherever the
    organizer works, and code every sandbox mounts (``sandbox.code_paths``), so no other
    bot's sandbox hides it."""
    spec = importlib.util.find_spec("example_bots")
    if spec is None or not spec.submodule_search_locations:
        raise BuiltinError("the example_bots package (the built-in bots) is not installed")
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def is_builtin(command: str) -> bool:
    """True for a ``builtin:...`` command."""
    return command.startswith(PREFIX)


def parse_builtin(text: str) -> BuiltinSpec:
    """Parse ``builtin:NAME`` or ``builtin:NAME?key=value&key=value`` (``builtin:`` optional)."""
    body = text.removeprefix(PREFIX)
    name, _, query = body.partition("?")
    builtin = BUILTINS.get(name)
    if builtin is None:
        choices = ", ".join(PREFIX + b for b in BUILTINS)
        raise BuiltinError(f"unknown {PREFIX + name!r}; the built-ins are {choices}")
    options: dict[str, int | float] = {}
    for key, value in parse_qsl(query, keep_blank_values=True, strict_parsing=False):
        option = builtin.options.get(key)
        if option is None:
            known = ", ".join(builtin.options) or "none"
            raise BuiltinError(f"{PREFIX}{name}: unknown option {key!r}; its options: {known}")
        if key in options:
            raise BuiltinError(f"{PREFIX}{name}: option {key!r} is given twice")
        options[key] = option.parse(name, key, value)
    if query and not options:
        raise BuiltinError(f"{PREFIX}{name}: cannot read options {query!r}; use ?key=value&...")
    return BuiltinSpec(name, tuple(sorted(options.items())))


def describe_builtins() -> str:
    """A short text of every built-in and its options (for help and errors)."""
    lines = []
    for name, builtin in BUILTINS.items():
        options = ", ".join(
            f"{key} ({option.help}, {option.low:g}..{option.high:g})"
            for key, option in builtin.options.items()
        )
        lines.append(f"{PREFIX}{name}: {builtin.summary}; options: {options}")
    return "\n".join(lines)
