"""Play bots against each other in process, on the engine, with no server: fast testing."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from tacocat_arena.engine import DEFAULT_RULESET, Game, Ruleset
from tacocat_arena.play.local import play_game
from tacocat_bot.bot import Bot


@dataclass(frozen=True)
class MatchScore:
    """The score of a local match from the first bot's point of view."""

    wins: int
    losses: int
    draws: int

    @property
    def games(self) -> int:
        return self.wins + self.losses + self.draws

    @property
    def score(self) -> float:
        """Points of the first bot: a win is 1, a draw 1/2."""
        return self.wins + 0.5 * self.draws

    def __str__(self) -> str:
        return (
            f"+{self.wins} -{self.losses} ={self.draws} "
            f"({self.score:g}/{self.games}, {100 * self.score / max(1, self.games):.1f}%)"
        )


def play_local(
    first: Bot,
    second: Bot,
    *,
    games: int = 2,
    seed: int = 0,
    ruleset: Ruleset = DEFAULT_RULESET,
) -> MatchScore:
    """Play ``games`` games, an even number: every deal seed twice, seats swapped, as
    tournaments do (an odd number would give one bot the last deal's better seat).  Raises
    whatever a bot raises, and ValueError on an illegal action, so bugs show up at once."""
    wins = losses = draws = 0
    for swapped, game in local_games(first, second, games=games, seed=seed, ruleset=ruleset):
        assert game.outcome is not None
        winner = game.outcome.winner
        if winner is None:
            draws += 1
        elif (winner == 0) != swapped:
            wins += 1
        else:
            losses += 1
    return MatchScore(wins, losses, draws)


def local_games(
    first: Bot,
    second: Bot,
    *,
    games: int = 2,
    seed: int = 0,
    ruleset: Ruleset = DEFAULT_RULESET,
) -> Iterator[tuple[bool, Game]]:
    """The games of ``play_local``, one by one: ``(swapped, game)``, ``swapped`` when
    ``first`` holds seat 1.  Game ``i`` is dealt from seed ``seed + i // 2`` with ``first`` in
    seat ``i % 2``, so a referee playing the same schedule deals the same games (the parity
    test, tests/test_parity.py, plays it over the wire and compares every action)."""
    if isinstance(games, bool) or not isinstance(games, int) or games < 2 or games % 2:
        raise ValueError(
            f"games: must be an even number >= 2 (each deal is played twice, seats swapped); "
            f"got {games!r}"
        )
    for index in range(games):
        swapped = index % 2 == 1
        bots = (second, first) if swapped else (first, second)
        yield swapped, play_game(bots, ruleset=ruleset, seed=seed + index // 2)
