"""The example bots in example_bots/: legal play, relative strength, runnable scripts.

``play_local`` raises on an illegal action (the engine's ``ActionError`` is a ValueError), so
finishing a match is itself the legality check.  Every bot takes a seed, so every match here
is deterministic.
"""

from __future__ import annotations

import importlib.util
import runpy
from pathlib import Path
from types import ModuleType

import pytest

import tacocat_bot
from tacocat_bot import Bot, play_local

EXAMPLES = Path(__file__).resolve().parent.parent / "example_bots"
SCRIPTS = {"random_bot": "RandomBot", "greedy_bot": "GreedyBot", "search_bot": "SearchBot"}


def load(stem: str) -> ModuleType:
    """Import example_bots/<stem>.py by path, under a name that is not "__main__"."""
    spec = importlib.util.spec_from_file_location(f"example_{stem}", EXAMPLES / f"{stem}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make(stem: str, **kwargs: int) -> Bot:
    return getattr(load(stem), SCRIPTS[stem])(**kwargs)


@pytest.mark.parametrize("stem", sorted(SCRIPTS))
def test_script_imports_and_its_main_runs_the_bot(
    stem: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Importing a script defines its bot and connects nowhere; run as a script, it hands
    one instance of that bot to ``tacocat_bot.run`` (replaced here by a recorder)."""
    started: list[Bot] = []
    monkeypatch.setattr(tacocat_bot, "run", lambda bot, *args, **kwargs: started.append(bot))
    module = load(stem)
    bot_class = getattr(module, SCRIPTS[stem])
    assert issubclass(bot_class, Bot)
    assert started == []
    runpy.run_path(str(EXAMPLES / f"{stem}.py"), run_name="__main__")
    assert len(started) == 1
    assert type(started[0]).__name__ == SCRIPTS[stem]
    assert started[0].name == stem.removesuffix("_bot")


def test_random_bot_plays_only_legal_moves() -> None:
    score = play_local(make("random_bot", seed=1), make("random_bot", seed=2), games=6, seed=10)
    assert score.games == 6


def test_greedy_bot_plays_only_legal_moves() -> None:
    score = play_local(make("greedy_bot"), make("random_bot", seed=3), games=6, seed=20)
    assert score.games == 6


def test_search_bot_plays_only_legal_moves() -> None:
    """Against a random opponent, whose odd attacks and defences reach unusual positions."""
    score = play_local(
        make("search_bot", budget=20, seed=4), make("random_bot", seed=5), games=6, seed=30
    )
    assert score.games == 6


def test_greedy_beats_random() -> None:
    score = play_local(make("greedy_bot"), make("random_bot", seed=6), games=40, seed=40)
    assert score.wins > score.losses
    assert score.score > 0.6 * score.games, str(score)


@pytest.mark.slow
def test_search_beats_greedy() -> None:
    """A small budget keeps this fast; it still wins 33 of these 40 games against greedy."""
    score = play_local(make("search_bot", budget=20, seed=7), make("greedy_bot"), games=40, seed=50)
    assert score.score > 0.5 * score.games, str(score)
