"""A bot as a config names it: its name, the command that starts it and its per-bot options.

Here rather than in tournament/ because everything that starts a bot (tournament, check, the
arena's hosted bots) starts it from a ``BotSpec``; ``tournament/config.py`` re-exports both
names.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from tacocat_arena.launch.builtins import BuiltinError, is_builtin, parse_builtin
from tacocat_arena.launch.sandbox import Limits, SandboxMode

_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.+")
#: The one character an arena version's ladder name adds (``alice@v2``,
#: ``arena.submissions.identity``): no config's bot and no connected bot has it.
VERSION_MARK = "@"
_HOSTED_NAME = re.compile(rf"[\w.+-]+{VERSION_MARK}v[1-9][0-9]*", re.ASCII)


class ConfigError(ValueError):
    """A tournament config or flag is invalid; the message says which and how to fix it.

    ``key`` is the config key at fault, when there is one: ``load_config`` uses it to say
    whether the value came from the file (naming it) or from a command-line option.
    """

    def __init__(self, message: str, *, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class BotSpec:
    """A participant: its name, the command that starts it, and its per-bot options (as
    cutechess's per-engine options; None means the tournament's setting)."""

    name: str
    command: str  # a shell-style command line, or builtin:NAME; "" = connects by itself
    #: The bot's folder: its working directory, and all it sees of the disk in the sandbox.
    dir: Path | None = None
    #: Extra environment variables (the sandbox passes none of the organizer's).
    env: tuple[tuple[str, str], ...] = ()
    #: Extra arguments appended to the command.
    args: tuple[str, ...] = ()
    sandbox: SandboxMode | None = None
    limits: Limits | None = None
    #: Whether the bot may write to its folder inside the sandbox.
    writable_dir: bool = False
    #: The bot's own per-decision allowance in seconds (a person's seat, ``play human``);
    #: None: the tournament's ``move_timeout``.
    move_timeout_s: float | None = None

    @property
    def is_external(self) -> bool:
        """True for a bot that connects by itself (``tacocat-arena serve``)."""
        return not self.command

    def argv(self) -> list[str]:
        """The command as an argument list (builtins run with this Python)."""
        if is_builtin(self.command):
            # options: launch/builtins.py
            return [*parse_builtin(self.command).argv(), *self.args]
        return [*shlex.split(self.command), *self.args]

    @classmethod
    def parse(cls, text: str, *, external_ok: bool = False) -> BotSpec:
        """Parse ``NAME=COMMAND`` (the --bot flag)."""
        name, sep, command = text.partition("=")
        if not sep:
            raise ConfigError(
                f"--bot {text!r}: expected NAME=COMMAND, e.g. mybot='python mybot.py' or "
                "greedy=builtin:greedy"
            )
        return cls.checked(name.strip(), command.strip(), external_ok=external_ok)

    @classmethod
    def checked(
        cls,
        name: str,
        command: str,
        *,
        external_ok: bool = False,
        dir: Path | None = None,
        env: tuple[tuple[str, str], ...] = (),
        hosted: bool = False,
    ) -> BotSpec:
        """A validated spec (an empty command only where bots connect by themselves): the
        one way a name and a command become a bot to start (a package's: ``BotPackage.spec``,
        with its folder and variables).

        ``hosted``: the name is an arena version's ladder name, ``PLAYER@vN``, which the
        arena makes (``arena.submissions.identity``) and its records and ``verify`` use as
        they are; it holds ``VERSION_MARK`` once, which a config's name never may (so a
        config's bot can never pass for a hosted version)."""
        if hosted:
            # Its length is the arena's: a player's name (arena.players) and the referee's
            # 64 characters at Hello, which refuses a twin too long as a start error.
            if not _HOSTED_NAME.fullmatch(name):
                raise ConfigError(
                    f"hosted bot name {name!r}: use PLAYER@vN (a player's name of letters, "
                    "digits, '_', '-', '.' or '+', and a version number)"
                )
        # 62: a twin instance's identity adds "~B" within the referee's 64 characters.
        elif not name or len(name) > 62 or not set(name) <= _NAME_CHARS:
            raise ConfigError(f"bot name {name!r}: use 1-62 letters, digits, '_', '-', '.' or '+'")
        if not command and external_ok:
            return cls(name, "", dir=dir, env=env)
        if not command:
            raise ConfigError(
                f"bot {name!r}: the command is empty (only `tacocat-arena serve` takes bots "
                "that connect by themselves)"
            )
        if is_builtin(command):
            try:
                parse_builtin(command)
            except BuiltinError as error:
                raise ConfigError(f"bot {name!r}: {error}") from None
        try:
            shlex.split(command)
        except ValueError as error:
            raise ConfigError(f"bot {name!r}: cannot parse command {command!r}: {error}") from None
        return cls(name, command, dir=dir, env=env)
