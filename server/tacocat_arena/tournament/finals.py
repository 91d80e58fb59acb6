"""Finals with cut-offs: round robins of a shrinking field, until the top's order is decided.

Halite's finals played games "until the rankings stabilised", cutting the lower-rated bots
off as they went, so that the top got the most games.  Here a finals event is a sequence of
stages.  Each stage is a round robin of the field still in (``games`` games per pairing:
its deals each played twice, seats swapped, as any round robin's).  After a stage the field
is ranked by its points in every game its bots played against each other (in this stage
and the ones before: they all met equally often, so points are a fair order), ties by the
seeding (the config's order, or ``--seeding``'s standings).  Then:

* With ``until_stable``, the event stops as soon as the top ``top`` places are decided:
  each of the ``top`` boundaries (1st over 2nd, ..., the top-th over the next) has a
  likelihood of superiority (``stats.pairs``' LOS, on the two bots' own duplicate pairs)
  of at least ``confidence``, over at least ``MIN_PAIRS`` pairs.  A field of exactly
  ``top`` bots has ``top - 1`` boundaries.  Each boundary is a statement about two bots;
  the K of them are not one joint confidence (the report says so).
* Otherwise the lower part is dropped: the field keeps ``ceil(field * (1 - cut))`` bots,
  never fewer than ``top + 1`` (so the last boundary stays in play).  A field already that
  small plays on unchanged with ``until_stable``, or ends the event without it.
* ``max_stages`` bounds it all: a field whose top cannot be told apart ends there, and the
  report says it was not decided.

Like a Swiss round and a knockout match, every stage is a pure function of the config and
the finished games (``finals_state``): the next field is chosen only once a stage is
finished, from the store, so a run killed at any point and resumed plays the same stages,
and ``verify`` re-derives every field.  Deals are ``schedule.staged_pair``'s with the
secret; game ids ``fSTAGE-A-B-dDEAL``, a pairing's deals numbered on across its stages.
"""

from __future__ import annotations

import enum
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

from tacocat_arena.stats.pairs import Pentanomial, estimate
from tacocat_arena.tournament.config import FinalsSettings, TournamentConfig
from tacocat_arena.tournament.schedule import PlannedGame, staged_pair
from tacocat_arena.tournament.swiss import Scored

#: The fewest duplicate pairs on which a boundary is called decided.  The pairs' LOS
#: regularizes zero counts, so the variance of a few equal pairs is near 0 and one 2-0
#: pair would give a LOS near 1; the normal approximation needs some pairs behind it.
MIN_PAIRS = 4


class Ended(enum.Enum):
    """Why a finals event stopped (the words the tables use)."""

    DECIDED = "decided"  # every boundary of the top reached the confidence
    FIELD = "field"  # the field could be cut no further (without until_stable)
    MAX_STAGES = "max_stages"  # the stage cap, the top not decided


@dataclass(frozen=True)
class FinalsRow:
    """One bot of a stage's ranking: its points and games against the rest of the field."""

    bot: str
    points: float
    games: int


@dataclass(frozen=True)
class Boundary:
    """How sure the pairs are that ``higher`` (ranked just above) is stronger than ``lower``:
    LOS over their own duplicate pairs (``stats.pairs.estimate``), None before any pair."""

    place: int  # the boundary between places ``place`` and ``place + 1``
    higher: str
    lower: str
    pairs: int
    los: float | None

    def decided(self, confidence: float) -> bool:
        return self.pairs >= MIN_PAIRS and self.los is not None and self.los >= confidence


@dataclass(frozen=True)
class FinalsStage:
    """One stage: its field (in seeding order), its games, and once finished its ranking,
    the top's boundaries after it and the bots it dropped."""

    number: int
    field: tuple[str, ...]
    games: tuple[PlannedGame, ...]
    ranking: tuple[FinalsRow, ...] | None = None
    boundaries: tuple[Boundary, ...] = ()
    dropped: tuple[str, ...] = ()

    @property
    def finished(self) -> bool:
        return self.ranking is not None


@dataclass(frozen=True)
class FinalsState:
    """The stages played so far (the last possibly unfinished) and, once over, why."""

    settings: FinalsSettings
    stages: tuple[FinalsStage, ...]
    ended: Ended | None

    @property
    def plan(self) -> list[PlannedGame]:
        return [game for stage in self.stages for game in stage.games]

    @property
    def finished_stages(self) -> list[FinalsStage]:
        """The stages played to their end, in order."""
        return [stage for stage in self.stages if stage.finished]

    @property
    def decided(self) -> bool:
        """Whether the last finished stage's boundaries all reach the confidence."""
        finished = self.finished_stages
        return bool(finished) and all(
            b.decided(self.settings.confidence) for b in finished[-1].boundaries
        )

    @property
    def order(self) -> list[str]:
        """The event's final order so far: the last finished stage's ranking (its dropped
        bots are that ranking's tail), then each earlier stage's dropped bots, later stages
        first."""
        finished = self.finished_stages
        if not finished:
            return []
        order = [row.bot for row in finished[-1].ranking or ()]
        for stage in reversed(finished[:-1]):
            order += stage.dropped
        return order

    def as_dict(self) -> dict[str, object]:
        """results.json's ``finals`` member."""
        return {
            "settings": {
                "cut": self.settings.cut,
                "top": self.settings.top,
                "confidence": self.settings.confidence,
                "until_stable": self.settings.until_stable,
                "max_stages": self.settings.max_stages,
                "min_pairs": MIN_PAIRS,
            },
            "stages": [
                {
                    "stage": stage.number,
                    "field": list(stage.field),
                    "games": len(stage.games),
                    "ranking": None
                    if stage.ranking is None
                    else [asdict(row) for row in stage.ranking],
                    "boundaries": [asdict(b) for b in stage.boundaries],
                    "dropped": list(stage.dropped),
                }
                for stage in self.stages
            ],
            "ended": None if self.ended is None else self.ended.value,
            "decided": self.decided,
            "order": self.order,
        }


def kept(field: int, settings: FinalsSettings) -> int:
    """How many of a field of ``field`` bots the next stage keeps (module docstring)."""
    floor = min(field, settings.top + 1)
    return max(floor, math.ceil(field * (1 - settings.cut) - 1e-9))


def stage_games(
    field: Sequence[str], number: int, games_per_pairing: int, seed: int, *, secret: str
) -> list[PlannedGame]:
    """Stage ``number``'s round robin of ``field``: deal by deal across its pairings, each
    pair's two games adjacent; who is A alternates by deal, pairing and stage."""
    per_stage = games_per_pairing // 2
    plan: list[PlannedGame] = []
    pairs = list(itertools.combinations(field, 2))
    for deal in range(per_stage):
        for index, (first, second) in enumerate(pairs):
            seats = (first, second) if (deal + index + number) % 2 else (second, first)
            dealt = (number - 1) * per_stage + deal  # numbered on across the stages
            plan += staged_pair("finals", f"f{number}", seats, dealt, seed, secret=secret)
    return plan


def _half_points(result: Scored, bot: str) -> int:
    return round(2 * result.score(result.seats.index(bot)))


def ranking(
    field: Sequence[str], games: Sequence[PlannedGame], results: Mapping[str, Scored]
) -> tuple[FinalsRow, ...]:
    """``field`` ranked by its points in ``games`` (finished, in ``results``) between two of
    its bots, ties by its order (the seeding)."""
    inside = set(field)
    points = dict.fromkeys(field, 0.0)
    played = dict.fromkeys(field, 0)
    for game in games:
        if not set(game.seats) <= inside:
            continue
        result = results[game.game_id]
        for seat, bot in enumerate(game.seats):
            points[bot] += result.score(seat)
            played[bot] += 1
    seeding = {bot: index for index, bot in enumerate(field)}
    order = sorted(field, key=lambda bot: (-points[bot], seeding[bot]))
    return tuple(FinalsRow(bot, points[bot], played[bot]) for bot in order)


def boundary(
    place: int,
    higher: str,
    lower: str,
    games: Sequence[PlannedGame],
    results: Mapping[str, Scored],
) -> Boundary:
    """``higher`` against ``lower`` on their duplicate pairs among ``games`` (each pair's two
    games adjacent, as ``staged_pair`` makes them)."""
    pentanomial = Pentanomial()
    both = {higher, lower}
    for first, second in itertools.pairwise(games):
        if second.twin and set(first.seats) == both and set(second.seats) == both:
            half = _half_points(results[first.game_id], higher)
            pentanomial = pentanomial.added(half + _half_points(results[second.game_id], higher))
    fit = estimate(pentanomial)
    return Boundary(place, higher, lower, pentanomial.pairs, None if fit is None else fit.los)


def finals_stages(
    bots: Sequence[str],
    settings: FinalsSettings,
    games_per_pairing: int,
    seed: int,
    results: Iterable[Scored],
    *,
    secret: str,
) -> FinalsState:
    """Play the finals forward from ``results``: each stage, once every game of it is
    among them, ranks its field and decides the next (module docstring)."""
    by_id = {result.game_id: result for result in results}
    stages: list[FinalsStage] = []
    played: list[PlannedGame] = []
    field = tuple(bots)
    for number in range(1, settings.max_stages + 1):
        games = tuple(stage_games(field, number, games_per_pairing, seed, secret=secret))
        if any(game.game_id not in by_id for game in games):
            stages.append(FinalsStage(number, field, games))
            return FinalsState(settings, tuple(stages), None)
        played += games
        ranked = ranking(field, played, by_id)
        places = min(settings.top, len(field) - 1)
        bounds = tuple(
            boundary(place, ranked[place - 1].bot, ranked[place].bot, played, by_id)
            for place in range(1, places + 1)
        )
        decided = all(b.decided(settings.confidence) for b in bounds)
        keep = kept(len(field), settings)
        ended = None
        if settings.until_stable and decided:
            ended = Ended.DECIDED
        elif keep == len(field) and not settings.until_stable:
            ended = Ended.FIELD
        elif number == settings.max_stages:
            ended = Ended.MAX_STAGES
        dropped = () if ended else tuple(row.bot for row in ranked[keep:])
        stages.append(FinalsStage(number, field, games, ranked, bounds, dropped))
        if ended:
            return FinalsState(settings, tuple(stages), ended)
        field = tuple(bot for bot in field if bot not in dropped)  # seeding order
    raise AssertionError("unreachable: the last stage ends the event")


def finals_state(
    config: TournamentConfig, results: Iterable[Scored], *, secret: str
) -> FinalsState:
    """``finals_stages`` of ``config``'s finals (its bots in their seeding order)."""
    return finals_stages(
        [bot.name for bot in config.bots],
        config.finals,
        config.games_per_pairing,
        config.seed,
        results,
        secret=secret,
    )


def stage_lines(state: FinalsState) -> list[str]:
    """What is said as the last stage of ``state`` starts: its number, field and games."""
    current = state.stages[-1]
    return [
        f"Stage {current.number}: a round robin of {len(current.field)} bots, "
        f"{len(current.games)} games",
        f"  field: {', '.join(current.field)}",
    ]


def finals_lines(state: FinalsState) -> list[str]:
    """The finals in words: each stage's ranking and cut, then how it ended."""
    settings = state.settings
    lines = []
    for stage in state.stages:
        head = f"Stage {stage.number} ({len(stage.field)} bots, {len(stage.games)} games)"
        if stage.ranking is None:
            lines.append(f"{head}: in play")
            continue
        lines.append(
            f"{head}: "
            + ", ".join(f"{row.bot} {row.points:g}/{row.games}" for row in stage.ranking)
        )
        for b in stage.boundaries:
            los = "-" if b.los is None else f"{b.los:.3f}"
            mark = "decided" if b.decided(settings.confidence) else "open"
            lines.append(
                f"  {b.place}/{b.place + 1}: {b.higher} over {b.lower}, LOS {los} over "
                f"{b.pairs} pair{'' if b.pairs == 1 else 's'} ({mark})"
            )
        if stage.dropped:
            lines.append(f"  dropped: {', '.join(stage.dropped)}")
    if state.ended is not None:
        lines.append(finals_ending(state))
    return lines


def finals_ending(state: FinalsState) -> str:
    """How the event ended, in a sentence (the tables and reports use it)."""
    settings = state.settings
    top = state.order[: settings.top]
    stages = f"{len(state.stages)} stage{'s' * (len(state.stages) != 1)}"
    what = (
        f"the order of the top {settings.top} ({', '.join(top)}): every boundary's LOS >= "
        f"{settings.confidence:g} over >= {MIN_PAIRS} pairs"
    )
    if state.ended is Ended.DECIDED:
        return f"Decided after {stages}: {what}"
    verdict = "decided" if state.decided else "not decided"
    if state.ended is Ended.FIELD:
        return f"Ended after {stages}, the field cut to its smallest; {what}: {verdict}"
    return f"Stopped at the cap of {settings.max_stages} stages; {what}: {verdict}"


def finals_words(config: TournamentConfig) -> str:
    """The run's header words for a finals event (``run``'s first line)."""
    f = config.finals
    stop = (
        f"until the top {f.top} are decided at LOS {f.confidence:g}"
        if f.until_stable
        else "until the field can be cut no further"
    )
    return f"finals (cut {f.cut:g} a stage, {stop}, at most {f.max_stages} stages), "
