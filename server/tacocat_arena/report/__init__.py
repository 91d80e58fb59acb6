"""Pages people can look at: the tournament's report.html and report.md, and game replays.

They present what the tournament layer computed (standings, crosstable, ratings, per-bot
figures) and what a game record holds; they compute no statistic of their own. Every page is
one self-contained file that works opened from disk.
"""

from tacocat_arena.report.frames import Frame, FrameError, replay_frames, spectator_frames
from tacocat_arena.report.replay import (
    end_update,
    live_update,
    render_live,
    render_replay,
)
from tacocat_arena.report.templating import FAVICON

__all__ = [
    "FAVICON",
    "Frame",
    "FrameError",
    "end_update",
    "live_update",
    "render_live",
    "render_replay",
    "replay_frames",
    "spectator_frames",
]
