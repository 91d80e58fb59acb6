"""Helpers of the grader's tests: the test rubric, and the same with few games."""

from __future__ import annotations

from pathlib import Path

#: A small rubric for the grader's tests (few games, clear verdicts for the sample bots).
RUBRIC = Path(__file__).parent / "grade_bots" / "test_rubric.toml"


def few_games_rubric(folder: Path) -> Path:
    """The test rubric with 1 pair against random and an SPRT capped at 2 games (4 games a
    grade instead of 24), written into ``folder``: for a test whose claim holds whatever the
    games' number (a bot that forfeits every game; a package's preload run in the sandbox)."""
    text = RUBRIC.read_text(encoding="utf-8")
    assert "pairs = 8\n" in text and "max_games = 8\n" in text
    rubric = folder / "few_games_rubric.toml"
    rubric.write_text(
        text.replace("pairs = 8\n", "pairs = 1\n").replace("max_games = 8\n", "max_games = 2\n"),
        encoding="utf-8",
    )
    return rubric
