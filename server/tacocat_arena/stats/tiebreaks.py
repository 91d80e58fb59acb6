"""A Swiss event's standings: match points, then Buchholz, Sonneborn–Berger and Elo.

A Swiss round pairs bots into matches of duplicate pairs; a match is won by the bot with
more game points over its games (1 match point), drawn at equal game points (0.5), lost
otherwise (0).  A bye (an odd field's bot left out of a round) scores ``BYE_POINTS``: a
won match, as FIDE scores a pairing-allocated bye, but no game, no opponent and no Elo.

Tiebreaks, in order (the FIDE handbook's C.07 definitions, with no virtual opponent for a
bye): Buchholz, the sum of the bot's opponents' match points (who it had to beat);
Sonneborn–Berger, the sum over its opponents of that opponent's match points times the
bot's match result against it (whom it did beat); then the Elo fit of every game it played
(``stats.ratings``), which uses every game rather than only match results; then the name,
only so the order is deterministic.  Pure functions of the matches, like ``stats.tables``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: A bye's match points: a won match.
BYE_POINTS = 1.0


@dataclass(frozen=True)
class MatchScore:
    """One finished match of a round: bot ``a`` against bot ``b`` and their game points."""

    round: int
    a: str
    b: str
    points_a: float
    points_b: float

    def result(self, bot: str) -> float:
        """``bot``'s match points from this match: 1, 0.5 or 0."""
        mine, theirs = (
            (self.points_a, self.points_b) if bot == self.a else (self.points_b, self.points_a)
        )
        return 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0

    def opponent(self, bot: str) -> str:
        return self.b if bot == self.a else self.a


@dataclass(frozen=True)
class SwissRow:
    """One line of a Swiss event's standings, best first."""

    rank: int
    bot: str
    points: float  # match points, byes included
    buchholz: float
    sonneborn_berger: float
    elo: float
    matches: int
    byes: int
    game_points: float


def match_points(
    bots: Sequence[str], matches: Sequence[MatchScore], byes: Sequence[tuple[int, str]]
) -> dict[str, float]:
    """Each bot's match points: its match results plus ``BYE_POINTS`` per bye."""
    points = dict.fromkeys(bots, 0.0)
    for match in matches:
        for bot in (match.a, match.b):
            points[bot] += match.result(bot)
    for _, bot in byes:
        points[bot] += BYE_POINTS
    return points


def swiss_standings(
    bots: Sequence[str],
    matches: Sequence[MatchScore],
    byes: Sequence[tuple[int, str]],
    elo: Mapping[str, float],
) -> list[SwissRow]:
    """The standings of ``bots`` after ``matches`` and ``byes`` ((round, bot) each), ranked
    by match points, Buchholz, Sonneborn–Berger, ``elo``, name; equal on all but the name
    share a rank."""
    points = match_points(bots, matches, byes)
    buchholz: dict[str, float] = defaultdict(float)
    berger: dict[str, float] = defaultdict(float)
    played: dict[str, int] = defaultdict(int)
    game_points: dict[str, float] = defaultdict(float)
    for match in matches:
        for bot in (match.a, match.b):
            other = match.opponent(bot)
            buchholz[bot] += points[other]
            berger[bot] += points[other] * match.result(bot)
            played[bot] += 1
            game_points[bot] += match.points_a if bot == match.a else match.points_b
    bye_count: dict[str, int] = defaultdict(int)
    for _, bot in byes:
        bye_count[bot] += 1

    def key(bot: str) -> tuple[float, float, float, float]:
        return (-points[bot], -buchholz[bot], -berger[bot], -round(elo.get(bot, 0.0), 6))

    rows: list[SwissRow] = []
    for position, bot in enumerate(sorted(bots, key=lambda b: (key(b), b)), start=1):
        shares = bool(rows) and key(rows[-1].bot) == key(bot)
        rows.append(
            SwissRow(
                rank=rows[-1].rank if shares else position,
                bot=bot,
                points=points[bot],
                buchholz=buchholz[bot],
                sonneborn_berger=berger[bot],
                elo=elo.get(bot, 0.0),
                matches=played[bot],
                byes=bye_count[bot],
                game_points=game_points[bot],
            )
        )
    return rows
