"""Swiss pairing: each round pairs bots of equal score who have not met (Dutch style).

A Swiss event of N rounds plays far fewer games than a round robin (N matches per bot, not
one per other bot) and still brings the strong to the top: each round pairs the bots by
their match points (``stats.tiebreaks``) so winners meet winners.  The rules, as FIDE's Dutch
system states them in spirit (C.04.3), simplified where the duplicate pair makes them moot:

* The bots are ranked by match points, then by their place in the config (the organizer's
  seeding, as a rating list seeds a chess Swiss).  Bots of equal points are a score group.
* The top bot of the highest group still unpaired meets, in order of preference: the bots
  of its group's lower half (S1[i] against S2[i]: its group split in two halves by rank),
  then its own half from the bottom up, then the bots of lower groups (it floats down).
  No two bots meet twice; a depth-first search backtracks until every bot is paired.  Only
  when no pairing without a repeat exists (more rounds than the field allows, or a corner
  earlier rounds painted) is a repeat allowed, the least preferred last.
* An odd field gives one bot a bye each round: the lowest ranked that had none yet (and
  whose bye leaves the others pairable); it scores ``stats.tiebreaks.BYE_POINTS``.  No bot
  gets two byes while another has none.
* "Colour": the duplicate pair plays both seats, so what alternates is who is bot A, the
  one in seat 0 of each pair's first game (played by both bots' A instances, the second by
  their twins).  A goes to the bot that has been A less often; at equal counts to the one
  that was B last; else to the higher ranked in odd rounds, the lower in even ones.

The round's pairing is a pure function of the config and the finished games of the rounds
before it (``swiss_rounds``), and its deals of the store's secret (``schedule.staged_pair``), so a
resumed run pairs every round as the uninterrupted one would, and ``verify`` re-derives
every pairing from the published results.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from tacocat_arena.stats.tiebreaks import (
    BYE_POINTS,
    MatchScore,
    SwissRow,
    match_points,
    swiss_standings,
)
from tacocat_arena.tournament.config import TournamentConfig
from tacocat_arena.tournament.schedule import PlannedGame, staged_pair

#: How many steps the no-repeat search may take before it settles for repeats: far beyond
#: what a field of hundreds needs in the rounds a Swiss has, and a bound on a hopeless one.
SEARCH_STEPS = 200_000


class Scored(Protocol):
    """What a pairing reads of a finished game (a ``stats.tables.GameResult``, or
    ``Outcome`` of a record that ``verify`` reads)."""

    @property
    def game_id(self) -> str: ...
    @property
    def seats(self) -> tuple[str, str]: ...
    def score(self, seat: int) -> float: ...


@dataclass(frozen=True)
class Outcome:
    """A game's id, seats and winner (seat index, None: a draw), as a record states them."""

    game_id: str
    seats: tuple[str, str]
    winner: int | None

    def score(self, seat: int) -> float:
        return 0.5 if self.winner is None else float(self.winner == seat)

    @classmethod
    def of_record(
        cls, game_id: str, seats: Sequence[str] | None, record: Mapping[str, Any]
    ) -> Outcome:
        """The outcome ``record`` states (its ``players`` when ``seats`` is None); a winner
        that is no seat counts as a draw (``verify`` names the record's fault)."""
        names = tuple(seats if seats is not None else record.get("players") or ("?", "??"))
        winner = record.get("winner")
        return cls(game_id, (str(names[0]), str(names[1])), winner if winner in (0, 1) else None)


class PairingError(ValueError):
    """A round cannot be paired (fewer than two bots)."""


@dataclass(frozen=True)
class Pairing:
    """One match of a round: ``a`` sits in seat 0 of each pair's first game."""

    a: str
    b: str


@dataclass(frozen=True)
class SwissRound:
    """One paired round: its number (from 1), its matches, and the bot with a bye."""

    number: int
    pairings: tuple[Pairing, ...]
    bye: str | None = None


@dataclass(frozen=True)
class History:
    """What the pairing of a round reads of the rounds before it."""

    points: Mapping[str, float]
    met: frozenset[frozenset[str]]
    byes: frozenset[str]
    roles: Mapping[str, tuple[str, ...]]  # per bot, "A"/"B" in the order of its matches


def history_of(
    bots: Sequence[str], rounds: Sequence[SwissRound], scores: Sequence[MatchScore]
) -> History:
    """The history of finished ``rounds`` whose matches scored ``scores``."""
    roles: dict[str, list[str]] = {bot: [] for bot in bots}
    met = set()
    for played in rounds:
        for pairing in played.pairings:
            met.add(frozenset((pairing.a, pairing.b)))
            roles[pairing.a].append("A")
            roles[pairing.b].append("B")
    byes = [(r.number, r.bye) for r in rounds if r.bye is not None]
    return History(
        points=match_points(bots, scores, byes),
        met=frozenset(met),
        byes=frozenset(bot for _, bot in byes),
        roles={bot: tuple(seq) for bot, seq in roles.items()},
    )


def pair_round(bots: Sequence[str], number: int, history: History) -> SwissRound:
    """Round ``number``'s pairing of ``bots`` (in seeding order) after ``history``."""
    if len(bots) < 2:
        raise PairingError(f"a Swiss round needs at least two bots, got {len(bots)}")
    seeding = {bot: index for index, bot in enumerate(bots)}
    ranked = sorted(bots, key=lambda bot: (-history.points[bot], seeding[bot]))
    for repeats in (False, True):
        budget = [SEARCH_STEPS]  # shared by the bye's candidates
        for bye in _bye_candidates(ranked, history):
            field = [bot for bot in ranked if bot != bye]
            found = _pair(field, history, repeats, budget)
            if found is not None:
                pairings = tuple(_roles(p, q, number, history) for p, q in found)
                return SwissRound(number, pairings, bye)
    raise AssertionError("a pairing with repeats allowed always exists")  # pragma: no cover


def _bye_candidates(ranked: Sequence[str], history: History) -> list[str | None]:
    """Who may get the bye, first choice first: none in an even field; else from the bottom
    up, those without one, then (only if every bot had one) everyone."""
    if len(ranked) % 2 == 0:
        return [None]
    fresh = [bot for bot in reversed(ranked) if bot not in history.byes]
    return list(fresh or reversed(ranked))


def _pair(
    field: list[str], history: History, repeats: bool, budget: list[int]
) -> list[tuple[str, str]] | None:
    """Pair ``field`` (ranked) depth first in preference order; None if impossible (or the
    search ran out of ``budget``)."""
    if not field:
        return []
    budget[0] -= 1
    if budget[0] < 0:
        return None
    top, rest = field[0], field[1:]
    for other in _preferences(top, rest, history, repeats):
        remaining = [bot for bot in rest if bot != other]
        tail = _pair(remaining, history, repeats, budget)
        if tail is not None:
            return [(top, other), *tail]
        if budget[0] < 0:
            return None
    return None


def _preferences(top: str, rest: Sequence[str], history: History, repeats: bool) -> list[str]:
    """``top``'s possible opponents among ``rest``, most preferred first (module docstring):
    its score group's lower half, its own half from the bottom, then lower groups; with
    ``repeats``, bots it met after all others."""
    group = [top, *(bot for bot in rest if history.points[bot] == history.points[top])]
    half = len(group) // 2
    upper, lower = group[1:half], group[max(half, 1) :]
    order = [*lower, *reversed(upper), *(bot for bot in rest if bot not in group)]
    fresh = [bot for bot in order if frozenset((top, bot)) not in history.met]
    if not repeats:
        return fresh
    return fresh + [bot for bot in order if bot not in fresh]


def _roles(p: str, q: str, number: int, history: History) -> Pairing:
    """Which of ``p`` (the higher ranked) and ``q`` is bot A (module docstring)."""

    def balance(bot: str) -> int:
        roles = history.roles[bot]
        return roles.count("A") - roles.count("B")

    if balance(p) != balance(q):
        return Pairing(p, q) if balance(p) < balance(q) else Pairing(q, p)
    last_p, last_q = history.roles[p][-1:], history.roles[q][-1:]
    if last_p != last_q and last_p and last_q:
        return Pairing(p, q) if last_p == ("B",) else Pairing(q, p)
    return Pairing(p, q) if number % 2 == 1 else Pairing(q, p)


def round_games(
    played: SwissRound, games_per_pairing: int, tournament_seed: int, *, secret: str
) -> list[PlannedGame]:
    """The games of one round, deal by deal across its matches, each pair's two games
    adjacent (A in seat 0 first, then the twins with the seats swapped)."""
    plan: list[PlannedGame] = []
    for deal in range(games_per_pairing // 2):
        for p in played.pairings:
            stage = f"r{played.number}"
            plan += staged_pair("swiss", stage, (p.a, p.b), deal, tournament_seed, secret=secret)
    return plan


def match_scores(
    played: SwissRound, games: Sequence[PlannedGame], results: Mapping[str, Scored]
) -> list[MatchScore] | None:
    """The round's match scores from ``results`` (by game id), or None while any of its
    ``games`` is unfinished."""
    if any(game.game_id not in results for game in games):
        return None
    points: dict[frozenset[str], dict[str, float]] = {}
    for game in games:
        result = results[game.game_id]
        tally = points.setdefault(frozenset(game.seats), {})
        for seat, bot in enumerate(game.seats):
            tally[bot] = tally.get(bot, 0.0) + result.score(seat)
    return [
        MatchScore(played.number, p.a, p.b, *(points[frozenset((p.a, p.b))][x] for x in (p.a, p.b)))
        for p in played.pairings
    ]


@dataclass(frozen=True)
class SwissState:
    """The rounds paired so far (the last may be unfinished), their games, and the scores
    of the finished ones."""

    rounds: tuple[SwissRound, ...]
    games: tuple[tuple[PlannedGame, ...], ...]
    scores: tuple[MatchScore, ...]
    finished: int  # how many of ``rounds`` are finished

    @property
    def plan(self) -> list[PlannedGame]:
        return [game for games in self.games for game in games]

    @property
    def byes(self) -> list[tuple[int, str]]:
        return [(r.number, r.bye) for r in self.rounds if r.bye is not None]


def swiss_rounds(
    bots: Sequence[str],
    rounds: int,
    games_per_pairing: int,
    tournament_seed: int,
    results: Iterable[Scored],
    *,
    secret: str,
) -> SwissState:
    """Pair round after round from ``results``: round r+1 once every game of round r is
    among them, up to ``rounds`` rounds.  Games of ``results`` outside these rounds are
    ignored (``verify`` reports them)."""
    by_id = {result.game_id: result for result in results}
    paired: list[SwissRound] = []
    games: list[tuple[PlannedGame, ...]] = []
    scores: list[MatchScore] = []
    for number in range(1, rounds + 1):
        played = pair_round(bots, number, history_of(bots, paired, scores))
        planned = round_games(played, games_per_pairing, tournament_seed, secret=secret)
        paired.append(played)
        games.append(tuple(planned))
        finished = match_scores(played, planned, by_id)
        if finished is None:
            return SwissState(tuple(paired), tuple(games), tuple(scores), number - 1)
        scores += finished
    return SwissState(tuple(paired), tuple(games), tuple(scores), len(paired))


def swiss_state(config: TournamentConfig, results: Iterable[Scored], *, secret: str) -> SwissState:
    """``swiss_rounds`` of ``config``'s Swiss event (its bots in their seeding order)."""
    return swiss_rounds(
        [bot.name for bot in config.bots],
        config.swiss_rounds,
        config.games_per_pairing,
        config.seed,
        results,
        secret=secret,
    )


def round_lines(state: SwissState) -> list[str]:
    """What is said as the last round of ``state`` starts: its number and pairing (bot A
    first), and its bye."""
    current = state.rounds[-1]
    head = f"Round {current.number}: {len(current.pairings)} matches"
    if current.bye:
        head += f", bye: {current.bye}"
    return [head, *(f"  {p.a} - {p.b}" for p in current.pairings)]


@dataclass(frozen=True)
class SwissTables:
    """What a Swiss event's tables show: every round paired so far with its match scores
    (None while a match is unfinished), and the standings after the finished rounds."""

    rounds: tuple[tuple[SwissRound, tuple[MatchScore, ...] | None], ...]
    standings: tuple[SwissRow, ...]

    def as_dict(self) -> dict[str, object]:
        """results.json's ``swiss`` member."""
        return {
            "rounds": [
                {
                    "round": played.number,
                    "bye": played.bye,
                    "matches": [
                        {"a": p.a, "b": p.b}
                        | (
                            {}
                            if scores is None
                            else {"points_a": scores[i].points_a, "points_b": scores[i].points_b}
                        )
                        for i, p in enumerate(played.pairings)
                    ],
                }
                for played, scores in self.rounds
            ],
            "standings": [asdict(row) for row in self.standings],
            "bye_points": BYE_POINTS,
        }


def swiss_tables(
    config: TournamentConfig, results: Sequence[Scored], elo: Mapping[str, float]
) -> SwissTables:
    """The Swiss tables of ``results``; ``elo`` is the last tiebreak (the standings' fit).
    The pairings do not depend on the deal secret, so none is needed here."""
    state = swiss_state(config, results, secret="")
    rounds = []
    for index, played in enumerate(state.rounds):
        finished = index < state.finished
        scores = tuple(s for s in state.scores if s.round == played.number) if finished else None
        rounds.append((played, scores))
    names = [bot.name for bot in config.bots]
    byes = [(r.number, r.bye) for r in state.rounds[: state.finished] if r.bye is not None]
    return SwissTables(tuple(rounds), tuple(swiss_standings(names, state.scores, byes, elo)))
