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
