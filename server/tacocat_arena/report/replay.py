"""One game's replay page: a self-contained HTML file that steps through its record.

``render_replay`` is what every caller uses (``tacocat-arena replay --html``, the tournament's
``replays/`` folder, the arena server's page of a finished game): record in, HTML text out.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tacocat_arena import __version__
from tacocat_arena.engine import Ruleset
from tacocat_arena.report.frames import Frame, replay_frames
from tacocat_arena.report.templating import ending_words, environment, static_text

CELL = 80
"""Width of one board cell in the SVG's units."""

ENDED_NOTE = (
    "Everything is shown, both hands included: a record is published only after its game is over."
)
LIVE_NOTE = (
    "A game in progress shows only what a spectator may see: the hands' sizes, not their cards,"
    " and no draw pile. The whole record is shown here when the game ends."
)


@dataclass(frozen=True)
class BoardCell:
    """One column of the board picture: a goal (``goal`` is its seat) or a space."""

    x: int
    position: int
    goal: int | None
    size: int | None
    arrows: str


@dataclass(frozen=True)
class Board:
    """The static part of the board picture, from the ruleset."""

    cells: tuple[BoardCell, ...]
    cell: int
    width: int
    centre: int


def board_of(ruleset: Ruleset) -> Board:
    """The board picture's cells: seat 0's goal, spaces 1..N, seat 1's goal."""
    last = ruleset.spaces + 1
    cells = []
    for position in range(last + 1):
        if position in (0, last):
            cells.append(BoardCell(position * CELL, position, 0 if position == 0 else 1, None, ""))
            continue
        seats = sorted(ruleset.arrows_at(position))
        arrows = "◀ ▶" if len(seats) == 2 else ("◀" if seats == [0] else "▶")
        cells.append(
            BoardCell(position * CELL, position, None, ruleset.hand_size_at(position), arrows)
        )
    return Board(tuple(cells), CELL, (last + 1) * CELL, ruleset.centre)


def outcome_sentence(record: Mapping[str, Any], names: Sequence[str]) -> str:
    """ "A won by ..." / "A draw by ..." after N rounds, from the record's top-level fields."""
    termination = record.get("termination")
    if termination is None:
        return "The game was not finished."
    winner = record.get("winner")
    rounds = record.get("rounds", 0)
    who = "A draw" if winner is None else f"{names[winner]} won"
    return f"{who} by {ending_words(termination)} after {rounds} round{'s' * (rounds != 1)}."


def render_replay(
    record: Mapping[str, Any],
    names: Sequence[str] = ("seat 0", "seat 1"),
    *,
    game_id: str | None = None,
    back_href: str | None = None,
    back_text: str = "the tournament report",
    analysis: Mapping[str, Any] | None = None,
) -> str:
    """The replay page of one finished game's record (version 1 or 2), as HTML text.

    ``names`` are the seats' bot names; ``back_href`` (relative) links back to ``back_text``.
    ``analysis`` (``analyze``'s JSON, ``play.analysis.GameAnalysis.to_json``) adds its marks,
    a loss graph and the costliest decisions.  Raises FrameError when the record's events
    cannot be followed.
    """
    return _page(
        replay_frames(record, names),
        names,
        Ruleset.from_dict(record["ruleset"]),
        title=f"Game {game_id}" if game_id else "Tacocat game replay",
        outcome=outcome_sentence(record, names),
        back=(back_href, back_text),
        analysis=analysis_view(analysis, names) if analysis else None,
    )


#: The loss graph's scale: points of win probability per pixel, and a bar's width.
GRAPH_POINTS_PER_PX = 0.25
GRAPH_BAR = 14


def analysis_view(analysis: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """What the page shows of an analysis: its summary, a bar per decision (its loss), the
    marked decisions and the costliest three."""
    decisions = list(analysis.get("decisions", ()))
    by_index = {d["index"]: d for d in decisions}
    highest = max([d["loss"] for d in decisions] + [10.0])
    height = round(highest / GRAPH_POINTS_PER_PX)
    bars = [
        {
            "x": position * GRAPH_BAR,
            "height": round(max(0.0, d["loss"]) / GRAPH_POINTS_PER_PX),
            "mark": d["mark"] or "",
            "title": f"#{d['index']} round {d['round']} {d['kind']} {d['played']}: "
            f"-{d['loss']:.1f} ± {d['loss_se']:.1f} points {d['mark'] or ''}".rstrip(),
        }
        for position, d in enumerate(decisions)
    ]
    seat = int(analysis.get("seat", 0))
    return {
        "seat": seat,
        "name": names[seat],
        "reference": analysis.get("reference", ""),
        "accuracy": analysis.get("accuracy"),
        "marks": analysis.get("marks", {}),
        "marked": [d for d in decisions if d.get("mark")],
        "costliest": [by_index[i] for i in analysis.get("costliest", ()) if i in by_index],
        "bars": bars,
        "graph_width": max(1, len(bars)) * GRAPH_BAR,
        "bar_width": GRAPH_BAR - 2,
        "graph_height": height,
        "hindsight": analysis.get("hindsight"),
    }


def render_live(
    frames: Sequence[Frame],
    names: Sequence[str],
    ruleset: Ruleset,
    *,
    game_id: str,
    stream: str,
    back: tuple[str, str],
    pending: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The same page for a game in progress: ``frames`` are a spectator's (report.frames.
    spectator_frames); the page follows ``stream`` (server-sent ``state`` events with new
    frames and the decisions ``pending``, then ``end`` with the full record's frames and the
    outcome) and becomes the game's replay when it ends.  ``pending``: whose decision the
    referee waits for now and by when (``web.views.pending_decisions``); the page counts
    its clock down against the server's time, sent with the page."""
    return _page(
        frames,
        names,
        ruleset,
        title=f"Game {game_id}",
        outcome="In progress.",
        back=back,
        stream=stream,
        pending=pending,
    )


def live_update(frames: Sequence[Frame]) -> dict[str, Any]:
    """A live page's ``state`` event: every frame so far."""
    return {"frames": [frame.to_json() for frame in frames]}


def end_update(record: Mapping[str, Any] | None, names: Sequence[str]) -> dict[str, Any]:
    """A live page's ``end`` event: the finished game's frames and outcome (None: the game
    ended without a record, as when the arena stopped first)."""
    if record is None:
        return {"frames": None, "outcome": "The game ended without being stored."}
    frames = replay_frames(record, names)
    return {
        "frames": [frame.to_json() for frame in frames],
        "outcome": outcome_sentence(record, names),
    }


def _page(
    frames: Sequence[Frame],
    names: Sequence[str],
    ruleset: Ruleset,
    *,
    title: str,
    outcome: str,
    back: tuple[str | None, str],
    stream: str | None = None,
    pending: Sequence[Mapping[str, Any]] = (),
    analysis: Mapping[str, Any] | None = None,
) -> str:
    data = {
        "cell": CELL,
        "frames": [frame.to_json() for frame in frames],
        "stream": stream,
        "ended_note": ENDED_NOTE,
        "pending": list(pending),
        # The page's clock is set by this one: a countdown compares deadlines with it.
        "server_now": round(time.time(), 3) if stream else None,
    }
    return (
        environment()
        .get_template("replay.html.j2")
        .render(
            title=title,
            names=list(names),
            outcome=outcome,
            board=board_of(ruleset),
            back_href=back[0],
            back_text=back[1],
            live=stream is not None,
            live_note=LIVE_NOTE,
            analysis=analysis,
            version=__version__,
            data=data,
            css=static_text("common.css") + static_text("replay.css"),
            js=static_text("replay.js"),
        )
    )
