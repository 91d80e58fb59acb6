"""A stranger's text on its way to a log line or a terminal: a bot's name before it is
checked, its Hello's ``client_info``, the last lines it printed.

Such text reaches the organizer's terminal (``tail -f logs/arena.log``, a command's error
message), where an escape sequence (ESC ``[2J``, an OSC title, a cursor move) is obeyed rather
than shown, and a newline starts a line that looks like one of ours.  ``printable`` shows
each character that is not printable as its escape (``\\x1b``, ``\\n``), as ``repr`` does,
and cuts the text to a length a log line can hold."""

from __future__ import annotations


def printable(text: str, limit: int = 300) -> str:
    """``text`` with every character ``str.isprintable`` refuses (controls, ESC, line and
    paragraph separators) written as its escape, at most ``limit`` characters of it."""
    cut = text[:limit]
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in cut)
    return shown + ("…" if len(text) > limit else "")
