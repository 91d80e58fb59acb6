"""The Jinja2 environment of the report pages, and the words they use for the engine's values.

Templates are files in ``templates/``; the little CSS and JavaScript the pages need are files
in ``static/``, inlined into each page so that it works opened from ``file://`` with no
network (no CDN, nothing fetched).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Final

import jinja2
from markupsafe import Markup

from tacocat_arena.engine import Termination
from tacocat_arena.stats.tables import CrossCell

FAVICON = (
    "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E"
    "%3Ccircle cx='8' cy='8' r='7' fill='%23d69e2e' stroke='%23744210'/%3E%3C/svg%3E"
)
"""The Tacocat as the pages' icon, inline: no request (and no 404) for /favicon.ico."""

#: How each ending reads in a sentence ("... by ..."), keyed by the engine's own enum.
ENDINGS: Final[dict[Termination, str]] = {
    Termination.GOAL: "the Tacocat reaching a goal",
    Termination.ROUND_CAP: "the round cap (a draw)",
    Termination.FORFEIT_TIMEOUT: "a forfeit: out of time",
    Termination.FORFEIT_ILLEGAL: "a forfeit: an illegal action",
    Termination.FORFEIT_DISCONNECT: "a forfeit: the bot disconnected",
    Termination.FORFEIT_CRASH: "a forfeit: the bot crashed",
}

#: Short column headings for the forfeit kinds.
FORFEIT_HEADINGS: Final[dict[Termination, str]] = {
    Termination.FORFEIT_TIMEOUT: "timeout",
    Termination.FORFEIT_ILLEGAL: "illegal action",
    Termination.FORFEIT_DISCONNECT: "disconnect",
    Termination.FORFEIT_CRASH: "crash",
}


def _autoescape(name: str | None) -> bool:
    return name is None or not name.endswith(".md.j2")


def points(value: float) -> str:
    """Points as people write them: 3, 2.5."""
    return f"{value:g}"


def fixed(value: float | None, digits: int) -> str:
    """A number to ``digits`` decimals, or an em dash for a missing value."""
    return "—" if value is None else f"{value:.{digits}f}"


def whole(value: float) -> str:
    """A rating to the nearest point, never "-0"."""
    return str(round(value))


def signed(value: float | None) -> str:
    """An Elo difference with its sign (+12, -40), or an em dash."""
    return "—" if value is None else f"{round(value):+d}"


def percent(value: float | None) -> str:
    """A probability as a percentage, or an em dash."""
    return "—" if value is None else f"{100 * value:.1f}%"


def score_colour(cell: CrossCell) -> str:
    """A cell's background: red for 0 points of the pairing, green for all, pale near half."""
    share = cell.points / cell.games if cell.games else 0.5
    hue = round(120 * share)
    saturation = round(20 + 120 * abs(share - 0.5))
    return f"hsl({hue}, {saturation}%, 82%)"


#: What a name in report.md must not start: Markdown's links, images, emphasis, code,
#: headings and table cells (backslash-escaped), and raw HTML (as entities: a Markdown
#: renderer passes HTML through, so a config's ``name`` could otherwise carry a script).
_MD_ESCAPES = {
    **{c: "\\" + c for c in "\\`*_{}[]()#+!|~"},
    "<": "&lt;",
    ">": "&gt;",
    "&": "&amp;",
    "\n": " ",
    "\r": " ",
}
_MD_TABLE = str.maketrans(_MD_ESCAPES)


def md(text: object) -> str:
    """Text made safe for Markdown, a table cell or a heading: shown as written, never
    markup (``report.md`` holds names chosen by whoever wrote the config or a bot)."""
    return str(text).translate(_MD_TABLE)


@cache
def environment() -> jinja2.Environment:
    """The shared environment: HTML templates autoescaped, Markdown ones not."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("tacocat_arena.report", "templates"),
        autoescape=_autoescape,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.globals["favicon"] = FAVICON
    env.filters.update(
        points=points,
        fixed=fixed,
        whole=whole,
        signed=signed,
        percent=percent,
        score_colour=score_colour,
        md=md,
    )
    return env


@cache
def static_text(name: str) -> Markup:
    """A file of ``static/`` as markup to inline in a page (our own code, not user input)."""
    text = resources.files("tacocat_arena.report").joinpath("static", name).read_text("utf-8")
    return Markup(text)


def ending_words(termination: Termination | str | None) -> str:
    """The ending in words; accepts the enum or its record value (the edge of a file)."""
    if termination is None:
        return "an unfinished game"
    return ENDINGS[Termination(termination)]
