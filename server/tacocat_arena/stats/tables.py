"""Standings and crosstable of a finished tournament (``report/tables.py`` writes them out).

Everything here is a pure function of the finished ``GameResult`` records (and
of the metadata the caller passes in), so a report can be rebuilt from a saved
result log at any time and always gives the same output.

Conventions
    * A forfeit (timeout, illegal action, disconnect, crash) is a loss for the
      forfeiting bot and a win for its opponent, in the score *and* in the Elo
      fit: the referee cannot tell a broken bot from a weak one, and counting
      them keeps ``wins + losses + draws == games`` for every bot.
    * "Errors" counts a bot's actions that were not its own decision: its code failed (e.g.
      a decision method raised) and its SDK played a default move instead, saying so in
      ``Action.fallback``.  They change no score (the game went on), but a bot that fails on
      every move would otherwise look like a weak bot that plays fast.
    * Ratings come from :func:`tacocat_arena.stats.ratings.fit_ratings`,
      seat-agnostic, draws as half wins (see ``docs/ratings.md``).
    * Ranking is by score rate (points per game), then Elo, then name (the last
      only to make the order deterministic); bots equal on both share a rank
      ("1224").  In a finished round robin every bot has played as many games, so
      that is the order of the scores; in the partial tables of an interrupted
      one, games are unequal and raw scores would favour whoever played more.
      A bot without games ranks last.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from tacocat_arena.engine import Termination
from tacocat_arena.stats.ratings import DEFAULT_PRIOR_DRAWS, fit_ratings

Crosstable = Mapping[str, Mapping[str, "CrossCell"]]
"""``cross[row][col]``: the row bot's record against the column bot (no diagonal)."""


@dataclass(frozen=True)
class GameResult:
    """One finished game as reported by the referee.

    ``winner`` and ``forfeit_by`` are seat indices (0 or 1); ``winner`` is
    ``None`` for a draw. Construction validates the record, so inconsistent
    results fail loudly here rather than skewing the standings.
    """

    game_id: str
    seats: tuple[str, str]
    seed: int
    winner: int | None
    #: How the game ended: the engine's own enum (its ``.value`` only in files and rows,
    #: which construction accepts and turns back into the enum).
    reason: Termination
    rounds: int
    decisions: tuple[int, int]
    decision_ms: tuple[float, float]
    forfeit_by: int | None = None
    #: Per seat, the moves its SDK played by default because the bot's code failed.
    fallbacks: tuple[int, int] = (0, 0)

    def __post_init__(self) -> None:
        where = f"game {self.game_id!r}"
        if len(self.seats) != 2 or self.seats[0] == self.seats[1]:
            raise ValueError(f"{where}: seats must be two different bots, got {self.seats!r}")
        if self.winner not in (0, 1, None):
            raise ValueError(f"{where}: winner must be 0, 1 or None, got {self.winner!r}")
        if not isinstance(self.reason, Termination):
            try:
                object.__setattr__(self, "reason", Termination(self.reason))
            except ValueError:
                known = ", ".join(t.value for t in Termination)
                raise ValueError(
                    f"{where}: unknown reason {self.reason!r}, expected one of {known}"
                ) from None
        if self.reason.is_forfeit and self.forfeit_by is None and self.winner is None:
            pass  # both seats failed at the same decision: the referee scores a draw
        elif self.reason.is_forfeit:
            if self.forfeit_by not in (0, 1):
                raise ValueError(
                    f"{where}: reason {self.reason.value!r} is a forfeit, "
                    "so forfeit_by must be 0 or 1"
                )
            if self.winner != 1 - self.forfeit_by:
                raise ValueError(
                    f"{where}: seat {self.forfeit_by} forfeited, so the winner must be seat "
                    f"{1 - self.forfeit_by}, got {self.winner!r}"
                )
        elif self.forfeit_by is not None:
            raise ValueError(
                f"{where}: forfeit_by is set but reason {self.reason.value!r} is not a forfeit"
            )
        if self.rounds < 0:
            raise ValueError(f"{where}: rounds must be >= 0, got {self.rounds}")
        if len(self.decisions) != 2 or any(d < 0 for d in self.decisions):
            raise ValueError(f"{where}: decisions must be two counts >= 0, got {self.decisions!r}")
        if len(self.fallbacks) != 2 or any(f < 0 for f in self.fallbacks):
            raise ValueError(f"{where}: fallbacks must be two counts >= 0, got {self.fallbacks!r}")
        if len(self.decision_ms) != 2 or not all(
            math.isfinite(ms) and ms >= 0 for ms in self.decision_ms
        ):
            raise ValueError(
                f"{where}: decision_ms must be two finite times >= 0, got {self.decision_ms!r}"
            )

    def score(self, seat: int) -> float:
        """Points earned by ``seat``: 1 for a win, 0.5 for a draw, 0 for a loss."""
        if self.winner is None:
            return 0.5
        return 1.0 if self.winner == seat else 0.0


@dataclass(frozen=True)
class CrossCell:
    """One bot's record against one opponent."""

    wins: int = 0
    losses: int = 0
    draws: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.losses + self.draws

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws

    @property
    def record(self) -> str:
        """The record as ``"w-l-d"``."""
        return f"{self.wins}-{self.losses}-{self.draws}"


@dataclass(frozen=True)
class StandingsRow:
    """One line of the standings.

    ``elo_err`` is the 95% half-width, ``None`` for a bot without games;
    ``mean_decision_ms`` is thinking time per decision over all the bot's games,
    ``None`` when it made no decisions.
    """

    rank: int
    bot: str
    games: int
    wins: int
    losses: int
    draws: int
    score: float
    elo: float
    elo_err: float | None
    forfeits: int
    #: Moves its SDK played by default because the bot's code failed (``Action.fallback``).
    errors: int
    mean_decision_ms: float | None


def tournament_bots(results: Sequence[GameResult]) -> list[str]:
    """All bots that appear in ``results``, sorted by name."""
    return sorted({name for result in results for name in result.seats})


def rating_games(results: Sequence[GameResult]) -> list[tuple[str, str, float]]:
    """The ``(seat 0 bot, seat 1 bot, seat 0 score)`` triples that the Elo fit uses."""
    return [(r.seats[0], r.seats[1], r.score(0)) for r in results]


class Tally:
    """What the standings need of a set of results, in memory that grows with the bots, not
    the games: per bot its wins, losses, draws, forfeits, errors, decisions and thinking
    time, and how many games each ordered pair of seats scored 1, 0.5 or 0 (all the rating
    fit reads).  The arena keeps one and adds each game as it is published, so its RSS stays
    flat however many games it plays (``bench soak --arena``)."""

    def __init__(self) -> None:
        self.games = 0
        self.wins: collections.Counter[str] = collections.Counter()
        self.losses: collections.Counter[str] = collections.Counter()
        self.draws: collections.Counter[str] = collections.Counter()
        self.forfeits: collections.Counter[str] = collections.Counter()
        self.errors: collections.Counter[str] = collections.Counter()
        self.decisions: collections.Counter[str] = collections.Counter()
        self.thinking_ms: dict[str, float] = collections.defaultdict(float)
        #: ``(seat 0 bot, seat 1 bot, seat 0 score)`` -> games.
        self.scores: collections.Counter[tuple[str, str, float]] = collections.Counter()

    def add(self, result: GameResult) -> None:
        """Count one finished game."""
        self.games += 1
        for seat, bot in enumerate(result.seats):
            if result.winner is None:
                self.draws[bot] += 1
            elif result.winner == seat:
                self.wins[bot] += 1
            else:
                self.losses[bot] += 1
            if result.forfeit_by == seat:
                self.forfeits[bot] += 1
            self.errors[bot] += result.fallbacks[seat]
            self.decisions[bot] += result.decisions[seat]
            self.thinking_ms[bot] += result.decision_ms[seat]
        self.scores[(result.seats[0], result.seats[1], result.score(0))] += 1

    def copy(self) -> Tally:
        """An independent copy (to fit in a worker thread while games go on counting)."""
        twin = Tally()
        twin.games = self.games
        for name in ("wins", "losses", "draws", "forfeits", "errors", "decisions", "scores"):
            setattr(twin, name, collections.Counter(getattr(self, name)))
        twin.thinking_ms = collections.defaultdict(float, self.thinking_ms)
        return twin

    def rating_games(self) -> Iterator[tuple[str, str, float]]:
        """The fit's ``(seat 0 bot, seat 1 bot, seat 0 score)`` triples, one per game."""
        for triple, games in self.scores.items():
            for _ in range(games):
                yield triple


def compute_standings(
    results: Sequence[GameResult],
    bots: Sequence[str] | None = None,
    *,
    prior_draws: float = DEFAULT_PRIOR_DRAWS,
) -> list[StandingsRow]:
    """Standings, best first.

    ``bots`` lists every entrant so that bots without finished games still get a
    row; by default it is every bot seen in ``results``.
    """
    names = _check(results, bots)
    tally = Tally()
    for result in results:
        tally.add(result)
    return standings_of(tally, names, prior_draws=prior_draws)


def standings_of(
    tally: Tally, names: Sequence[str], *, prior_draws: float = DEFAULT_PRIOR_DRAWS
) -> list[StandingsRow]:
    """The standings of ``tally``'s games, one row per bot of ``names``, best first."""
    wins, losses, draws = tally.wins, tally.losses, tally.draws
    forfeits, errors = tally.forfeits, tally.errors
    decisions, thinking_ms = tally.decisions, tally.thinking_ms
    ratings = fit_ratings(names, tally.rating_games(), prior_draws=prior_draws)

    def sort_key(bot: str) -> tuple[float, float, str]:
        games = wins[bot] + losses[bot] + draws[bot]
        rate = (wins[bot] + 0.5 * draws[bot]) / games if games else -1.0
        return (-rate, -_tie_elo(ratings[bot].elo), bot)

    rows: list[StandingsRow] = []
    for position, bot in enumerate(sorted(names, key=sort_key), start=1):
        rating = ratings[bot]
        shares_rank = bool(rows) and sort_key(rows[-1].bot)[:2] == sort_key(bot)[:2]
        rows.append(
            StandingsRow(
                rank=rows[-1].rank if shares_rank else position,
                bot=bot,
                games=wins[bot] + losses[bot] + draws[bot],
                wins=wins[bot],
                losses=losses[bot],
                draws=draws[bot],
                score=wins[bot] + 0.5 * draws[bot],
                elo=rating.elo,
                elo_err=rating.err if rating.is_rated else None,
                forfeits=forfeits[bot],
                errors=errors[bot],
                mean_decision_ms=(thinking_ms[bot] / decisions[bot] if decisions[bot] else None),
            )
        )
    return rows


def compute_crosstable(
    results: Sequence[GameResult], bots: Sequence[str] | None = None
) -> dict[str, dict[str, CrossCell]]:
    """Pairwise records: ``cross[a][b]`` is ``a``'s record against ``b``.

    Every ordered pair of different bots is present (all zeros if they never
    met), and ``cross[a][b]`` mirrors ``cross[b][a]`` (wins and losses swapped).
    """
    names = _check(results, bots)
    tally: dict[tuple[str, str], list[int]] = {
        (a, b): [0, 0, 0] for a in names for b in names if a != b
    }
    for result in results:
        for seat, bot in enumerate(result.seats):
            opponent = result.seats[1 - seat]
            column = 2 if result.winner is None else (0 if result.winner == seat else 1)
            tally[bot, opponent][column] += 1
    return {a: {b: CrossCell(*tally[a, b]) for b in names if b != a} for a in names}


def _check(results: Sequence[GameResult], bots: Sequence[str] | None) -> list[str]:
    """Validate the inputs shared by standings and crosstable; return the bot list."""
    names = tournament_bots(results) if bots is None else list(bots)
    known = set(names)
    if len(known) != len(names):
        raise ValueError("bots contains duplicate names")
    seen_ids: set[str] = set()
    for result in results:
        if result.game_id in seen_ids:
            raise ValueError(f"game {result.game_id!r} appears more than once in the results")
        seen_ids.add(result.game_id)
        for bot in result.seats:
            if bot not in known:
                raise ValueError(f"game {result.game_id!r} has bot {bot!r}, which is not in bots")
    return names


def _tie_elo(elo: float) -> float:
    """Elo rounded so fits that differ only by float noise tie in the ranking."""
    return round(elo, 6)
