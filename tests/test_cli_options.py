"""The options several commands share (cli/options.py): one spelling of each."""

from __future__ import annotations

import click

from tacocat_arena.cli.main import main
from tacocat_arena.cli.options import SANDBOX_CHOICES
from tacocat_arena.launch.sandbox import SandboxMode

SHARED = ("--sandbox", "--workers", "--cluster", "--notify", "--rounds", "--time-bank")


def test_sandbox_choices_are_the_sandbox_modes() -> None:
    assert SANDBOX_CHOICES == tuple(mode.value for mode in SandboxMode)


def test_a_shared_option_has_one_metavar_in_every_command_that_takes_it() -> None:
    """run's, serve's, grade's, check's and replay's shared options alike (the values one
    command accepts may be a narrower range), and every --sandbox offers the modes."""
    commands = {name: main.commands[name] for name in ("run", "serve", "grade", "check", "replay")}
    for flag in SHARED:
        found = {
            name: option
            for name, command in commands.items()
            for option in command.params
            if isinstance(option, click.Option) and flag in option.opts
        }
        assert len(found) >= 2, f"{flag} is in {sorted(found)} alone"
        assert len({option.metavar for option in found.values()}) == 1, (flag, found)
    sandboxes = [c.params for c in commands.values()]
    choices = {
        tuple(option.type.choices)
        for params in sandboxes
        for option in params
        if "--sandbox" in getattr(option, "opts", ()) and isinstance(option.type, click.Choice)
    }
    assert choices == {SANDBOX_CHOICES}
