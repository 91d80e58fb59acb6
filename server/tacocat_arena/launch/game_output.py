"""A bot process's output, game by game: what a hosted version's author reads for each game it
played (docs/why-lose.md), while the process's whole log stays where it was.

A process plays several games (a batch's deals one after another, two at once with its
concurrency), and its output is one stream: bytes carry no game.  So each game in flight on a
process holds a ``GameCapture``: every chunk of output that reaches the runner while the game
is in flight goes into the captures of every game in flight on that process then.  With one
game at a time the attribution is exact (as far as the bot flushed its output when it wrote
it); where games overlapped, a capture names the other games (``shared_with``): its output
may belong to any of them, and the page says so.  A capture keeps the **last** ``cap`` bytes
(a crash's reason is at the end) and counts what it dropped; the cap is stated with it.

``save`` writes one capture as JSON into ``FOLDER/INSTANCE/GAME.json`` (nothing when the game
printed nothing), keeping the newest ``KEEP_GAMES`` games of each process, so a bot that
prints its cap every game holds a bounded share of the disk (``KEEP_GAMES`` x cap)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The most bytes kept of one process's output in one game (its end).
GAME_OUTPUT_CAP = 64 * 1024
#: The folder (in a run's output folder) of the saved captures.
OUTPUT_DIR = "output"
#: The games kept per process (the newest), older ones removed as new ones are saved.
KEEP_GAMES = 200


@dataclass
class GameCapture:
    """One game's share of one process's output (its last ``cap`` bytes)."""

    game_id: str
    process: str
    cap: int = GAME_OUTPUT_CAP
    data: bytearray = field(default_factory=bytearray)
    #: Bytes written while the game was in flight that the cap dropped (the oldest).
    dropped: int = 0
    #: The other games in flight on the process when some of this output was written.
    shared_with: set[str] = field(default_factory=set)

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        over = len(self.data) - self.cap
        if over > 0:
            del self.data[:over]
            self.dropped += over

    def as_json(self) -> dict[str, Any]:
        """What ``save`` writes and the arena shows."""
        return {
            "game": self.game_id,
            "process": self.process,
            "output": self.data.decode("utf-8", errors="replace"),
            "dropped_bytes": self.dropped,
            "cap_bytes": self.cap,
            "shared_with": sorted(self.shared_with),
            "exact": not self.shared_with,
        }


class OutputTaps:
    """The captures open on one process (its log calls ``write`` with every chunk)."""

    def __init__(self, process: str) -> None:
        self.process = process
        self._open: dict[str, GameCapture] = {}

    def open(self, game_id: str, cap: int = GAME_OUTPUT_CAP) -> GameCapture:
        """Start capturing for ``game_id`` (from now until ``close``)."""
        capture = GameCapture(game_id, self.process, cap)
        self._open[game_id] = capture
        return capture

    def close(self, game_id: str) -> GameCapture | None:
        """Stop capturing for ``game_id``; its capture."""
        return self._open.pop(game_id, None)

    def write(self, chunk: bytes) -> None:
        """Give ``chunk`` to every game in flight now, noting the overlaps."""
        if not self._open:
            return
        many = len(self._open) > 1
        for game_id, capture in self._open.items():
            capture.add(chunk)
            if many:
                capture.shared_with.update(g for g in self._open if g != game_id)


def save(folder: Path, capture: GameCapture) -> Path | None:
    """Write ``capture`` as ``folder/PROCESS/GAME.json`` (None if it holds nothing) and drop
    the process's oldest games past ``KEEP_GAMES``."""
    if not capture.data and not capture.dropped:
        return None
    own = folder / capture.process
    own.mkdir(parents=True, exist_ok=True)
    path = own / f"{capture.game_id}.json"
    partial = path.with_suffix(".part")
    partial.write_text(json.dumps(capture.as_json()))
    os.replace(partial, path)
    kept = sorted(own.glob("*.json"), key=_mtime)
    for old in kept[:-KEEP_GAMES]:
        old.unlink(missing_ok=True)
    return path


def load(folder: Path, process: str, game_id: str) -> dict[str, Any] | None:
    """A saved capture, or None (none saved, or unreadable)."""
    try:
        found = json.loads((folder / process / f"{game_id}.json").read_text())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def saved_games(folder: Path, process: str) -> list[str]:
    """The games of ``process`` with a saved capture, newest first."""
    try:
        paths = sorted((folder / process).glob("*.json"), key=_mtime, reverse=True)
    except OSError:
        return []
    return [p.stem for p in paths]


def _mtime(path: Path) -> int:
    """When ``path`` was written (0 if another writer just removed it)."""
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0
