"""Options that several commands share, declared once so that their name and unit cannot
drift apart between commands: each command states only what differs (default, range, help).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

#: The metavar of every option given in seconds (the one user-facing unit of the clocks).
SECONDS = "SECONDS"

_Command = TypeVar("_Command", bound=Callable[..., Any])


def move_timeout_option(
    help: str, *, default: float | None = None, type: click.ParamType = click.FLOAT
) -> Callable[[_Command], _Command]:
    """``--move-timeout SECONDS``, the time per decision, as run, play, serve, check and bench
    take it; ``type`` narrows the accepted values (a ``click.FloatRange``), and a default is
    shown in the help whenever there is one."""
    return click.option(
        "--move-timeout",
        type=type,
        default=default,
        show_default=default is not None,
        metavar=SECONDS,
        help=help,
    )


#: ``--sandbox``'s values: ``launch.sandbox.SandboxMode``'s, spelled here so that ``--help``
#: imports no launcher (tests/test_cli_options.py keeps them the enum's).
SANDBOX_CHOICES = ("auto", "bwrap", "none")


def sandbox_option(help: str, *, default: str | None = None) -> Callable[[_Command], _Command]:
    """``--sandbox auto|bwrap|none``, how the bots are confined, as run, serve, check and
    replay take it; without a default the config's counts."""
    return click.option(
        "--sandbox",
        type=click.Choice(SANDBOX_CHOICES),
        default=default,
        show_default=default is not None,
        help=help,
    )


def workers_option(
    help: str, *, default: int | None = None, type: click.ParamType | None = None
) -> Callable[[_Command], _Command]:
    """``--workers N``, local worker processes (run's and serve's games, grade's students);
    ``type`` narrows the accepted values (a ``click.IntRange``)."""
    return click.option(
        "--workers",
        type=type or click.INT,
        default=default,
        show_default=default is not None,
        metavar="N",
        help=help,
    )


def cluster_option(help: str) -> Callable[[_Command], _Command]:
    """``--cluster tcp://HOST:PORT``, a Dask scheduler's address, as run and serve take it."""
    return click.option("--cluster", metavar="tcp://HOST:PORT", help=help)


def notify_option(help: str) -> Callable[[_Command], _Command]:
    """``--notify URL``, where a JSON summary is POSTed when the work is done (run's and
    serve's events, grade's students), checked by ``tournament.notify.check_url``."""
    return click.option("--notify", metavar="URL", help=help)


def swiss_rounds_option(help: str) -> Callable[[_Command], _Command]:
    """``--rounds N``, a Swiss event's rounds, as run and serve take it."""
    return click.option("--rounds", type=click.IntRange(min=1), metavar="N", help=help)


def time_bank_option(help: str, *, default: float | None = None) -> Callable[[_Command], _Command]:
    """``--time-bank SECONDS``, the extra time per game, as run and serve take it."""
    return click.option(
        "--time-bank",
        type=click.FLOAT,
        default=default,
        show_default=default is not None,
        metavar=SECONDS,
        help=help,
    )
