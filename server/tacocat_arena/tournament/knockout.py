"""Knockout: a seeded bracket of matches, each extended by duplicate pairs until decided.

The bots are seeded in the config's order (the organizer's ratings), or by a prior event's
standings (``reseeded``: a Swiss's, say, so the Swiss decides who meets whom).  The bracket
is the standard one: with P the field rounded up to a power of two, seed 1 meets seed P, 2
meets P-1, and so on, placed so that seeds 1 and 2 can meet only in the final; the top
seeds get the byes of a field short of P.

A match is ``games`` games (its deals, each played twice with the seats swapped); the higher
seed is bot A (seat 0 of each pair's first game).  If the match's game points are equal, one
more duplicate pair is played, and again, up to ``extra_pairs`` more; a match still level
then goes to the higher seed (the stated tiebreak: the seeding, as "draw odds").  The winner
meets the winner of the neighbouring match in the next round, until one bot is left.

Like a Swiss round, everything here is a pure function of the config and the finished games
(``knockout_state``): a resumed knockout plays the same bracket, and ``verify`` re-derives it.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from tacocat_arena.launch.spec import ConfigError
from tacocat_arena.tournament.config import TournamentConfig
from tacocat_arena.tournament.schedule import PlannedGame, staged_pair
from tacocat_arena.tournament.swiss import Scored


class Decided(enum.Enum):
    """How a match was decided (the words the tables use)."""

    GAMES = "games"  # more game points over its planned games
    EXTENSION = "extension"  # more game points after extra pairs
    SEED = "seed"  # level after every extra pair: the higher seed goes through
    BYE = "bye"  # no opponent


@dataclass(frozen=True)
class KnockoutMatch:
    """One match of the bracket: ``high`` is the higher seed (bot A), ``low`` None for a bye;
    ``winner`` None while it is being played."""

    round: int
    slot: int
    high: str
    low: str | None
    games: tuple[PlannedGame, ...]
    points: tuple[float, float]
    winner: str | None
    decided: Decided | None = None

    @property
    def pairs(self) -> int:
        return len(self.games) // 2


@dataclass(frozen=True)
class KnockoutState:
    """The bracket as far as the finished games decide it: its rounds of matches (the last
    possibly unfinished), and the champion once there is one."""

    rounds: tuple[tuple[KnockoutMatch, ...], ...]
    champion: str | None

    @property
    def plan(self) -> list[PlannedGame]:
        return [game for matches in self.rounds for match in matches for game in match.games]

    def named_rounds(self) -> list[tuple[str, tuple[KnockoutMatch, ...]]]:
        """Each round with its name (``round_name``), first to last."""
        total = (2 * len(self.rounds[0])).bit_length() - 1 if self.rounds else 0
        return [(round_name(matches[0].round, total), matches) for matches in self.rounds]

    def as_dict(self) -> dict[str, object]:
        """results.json's ``knockout`` member."""
        return {
            "rounds": [
                [
                    {
                        "high": m.high,
                        "low": m.low,
                        "points": list(m.points),
                        "pairs": m.pairs,
                        "winner": m.winner,
                        "decided": None if m.decided is None else m.decided.value,
                    }
                    for m in matches
                ]
                for matches in self.rounds
            ],
            "champion": self.champion,
        }


def bracket_positions(size: int) -> list[int]:
    """The seeds (0 = the top seed) in bracket order for ``size`` slots, a power of two: each
    adjacent two meet in round 1, and seeds 0 and 1 only in the final."""
    order = [0]
    while len(order) < size:
        double = 2 * len(order)
        order = [x for seed in order for x in (seed, double - 1 - seed)]
    return order


def round_name(number: int, rounds: int) -> str:
    """``Final``, ``Semi-finals``, ``Quarter-finals`` or ``Round N``."""
    left = rounds - number
    return {0: "Final", 1: "Semi-finals", 2: "Quarter-finals"}.get(left, f"Round {number}")


def total_rounds(bots: int) -> int:
    return max(1, (bots - 1).bit_length())


def _match(
    config: TournamentConfig,
    number: int,
    slot: int,
    high: str,
    low: str,
    results: Mapping[str, Scored],
    secret: str,
) -> KnockoutMatch:
    """The match of ``high`` and ``low`` as far as ``results`` go (module docstring)."""
    base = config.games_per_pairing // 2
    games: list[PlannedGame] = []
    for deal in range(base + config.knockout_extra_pairs):
        games += staged_pair(
            "knockout", f"k{number}", (high, low), deal, config.seed, secret=secret
        )
        if deal + 1 < base:
            continue
        if any(game.game_id not in results for game in games):
            return KnockoutMatch(number, slot, high, low, tuple(games), (0.0, 0.0), None)
        points = [0.0, 0.0]
        for game in games:
            for seat, bot in enumerate(game.seats):
                points[bot == low] += results[game.game_id].score(seat)
        if points[0] != points[1]:
            how = Decided.GAMES if deal + 1 == base else Decided.EXTENSION
            winner = high if points[0] > points[1] else low
            return KnockoutMatch(
                number, slot, high, low, tuple(games), (points[0], points[1]), winner, how
            )
    return KnockoutMatch(
        number, slot, high, low, tuple(games), (points[0], points[1]), high, Decided.SEED
    )


def knockout_state(
    config: TournamentConfig, results: Iterable[Scored], *, secret: str
) -> KnockoutState:
    """The bracket of ``config``'s knockout (its bots in seeding order) after ``results``."""
    by_id = {result.game_id: result for result in results}
    names = [bot.name for bot in config.bots]
    seed_of = {name: index for index, name in enumerate(names)}
    size = 2 ** total_rounds(len(names))
    entrants: list[str | None] = [
        names[seed] if seed < len(names) else None for seed in bracket_positions(size)
    ]
    rounds: list[tuple[KnockoutMatch, ...]] = []
    number = 0
    while len(entrants) > 1:
        number += 1
        matches = []
        for slot in range(len(entrants) // 2):
            pair = [bot for bot in entrants[2 * slot : 2 * slot + 2] if bot is not None]
            if len(pair) == 1:
                matches.append(
                    KnockoutMatch(number, slot, pair[0], None, (), (0, 0), pair[0], Decided.BYE)
                )
                continue
            high, low = sorted(pair, key=seed_of.__getitem__)
            matches.append(_match(config, number, slot, high, low, by_id, secret))
        rounds.append(tuple(matches))
        if any(match.winner is None for match in matches):
            return KnockoutState(tuple(rounds), None)
        entrants = [match.winner for match in matches]
    return KnockoutState(tuple(rounds), entrants[0])


def reseeded(config: TournamentConfig, folder: Path) -> TournamentConfig:
    """``config`` with its bots in the order of the standings of the event in ``folder``
    (its results.json: a Swiss's standings when it has them, else the usual ones); bots
    not in them keep their order after those that are.  ConfigError names what is wrong."""
    path = folder / "results.json"
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        rows = (document.get("swiss") or {}).get("standings") or document["standings"]
        order = [str(row["bot"]) for row in rows]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise ConfigError(f"--seeding {folder}: {path} holds no standings ({error})") from None
    names = {bot.name for bot in config.bots}
    if not names & set(order):
        raise ConfigError(f"--seeding {folder}: none of this event's bots is in its standings")
    rank = {name: index for index, name in enumerate(order)}
    bots = sorted(config.bots, key=lambda bot: rank.get(bot.name, len(rank)))
    return replace(config, bots=tuple(bots))


def first_entrants(config: TournamentConfig, count: int) -> TournamentConfig:
    """``config`` with only its first ``count`` bots (in seeding order: after ``reseeded``,
    a prior event's top ``count``), so a Swiss's top sixteen, say, play its knockout or
    finals.  ConfigError unless 2 <= count <= the bots."""
    if not 2 <= count <= len(config.bots):
        raise ConfigError(
            f"--entrants {count}: an event of {len(config.bots)} bots takes 2 to "
            f"{len(config.bots)} of them"
        )
    return replace(config, bots=config.bots[:count])


def bracket_lines(state: KnockoutState) -> Sequence[str]:
    """The bracket in words, a line per match, round after round."""
    lines = []
    for name, matches in state.named_rounds():
        lines.append(name)
        for m in matches:
            if m.low is None:
                lines.append(f"  {m.high}: bye")
            elif m.winner is None:
                lines.append(f"  {m.high} - {m.low}: in play")
            else:
                score = f"{m.points[0]:g}-{m.points[1]:g}"
                how = m.decided.value if m.decided else ""
                pairs = f"{m.pairs} pair{'s' * (m.pairs != 1)}"
                lines.append(f"  {m.high} - {m.low} {score} ({pairs}): {m.winner} ({how})")
    if state.champion:
        lines.append(f"Champion: {state.champion}")
    return lines
