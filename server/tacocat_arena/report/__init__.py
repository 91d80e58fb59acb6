"""Pages people can look at: the tournament's report.html and report.md, and game replays.

They present what the tournament layer computed (standings, crosstable, ratings, per-bot
figures) and what a game record holds; they compute no statistic of their own. Every page is
one self-contained file that works opened from disk.
"""

from tacocat_arena.report.frames import Frame, FrameError, replay_frames
from tacocat_arena.report.replay import render_replay

__all__ = ["Frame", "FrameError", "render_replay", "replay_frames"]
