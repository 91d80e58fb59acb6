"""What a tournament report says, as plain values: the event, its settings in words, the
tables, the per-bot figures and the games. report.html and report.md render the same values.

It holds nothing a page may not show: no command line (they hold absolute paths), no token,
and the tournament seed only once every game is over (every deal derives from it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tacocat_arena import __version__
from tacocat_arena.engine import Ruleset, Termination, TieRule
from tacocat_arena.engine.ruleset import default_arrows
from tacocat_arena.referee.settings import FailurePolicy
from tacocat_arena.report.templating import FORFEIT_HEADINGS, ending_words
from tacocat_arena.stats.figures import FORFEIT_KINDS, BotFigures
from tacocat_arena.stats.pair_report import PENTANOMIAL_LABELS
from tacocat_arena.stats.pairs import PairStats
from tacocat_arena.stats.tables import CrossCell, Crosstable, GameResult, StandingsRow
from tacocat_arena.stats.tiebreaks import BYE_POINTS
from tacocat_arena.tournament.commitments import commitment_words
from tacocat_arena.tournament.config import BotSpec, TournamentConfig, TournamentFormat
from tacocat_arena.tournament.finals import MIN_PAIRS, FinalsState, finals_ending
from tacocat_arena.tournament.knockout import KnockoutState
from tacocat_arena.tournament.swiss import SwissTables

POLICY_WORDS: dict[FailurePolicy, str] = {
    FailurePolicy.FORFEIT: (
        "a timeout, an illegal or a malformed answer forfeits the game (a loss)"
    ),
    FailurePolicy.DEFAULT_ACTION: (
        "after a timeout, an illegal or a malformed answer the referee plays a default legal "
        "move for the bot and the game goes on; a lost connection still forfeits"
    ),
}

TIE_WORDS: dict[TieRule, str] = {
    TieRule.REPLAY_ROUND: "equal last cards tie the round: it is dealt again on the same space",
    TieRule.ARROW: (
        "equal last cards go to the player the space's arrow points to "
        "(on a two-arrow space the round is dealt again)"
    ),
}


@dataclass(frozen=True)
class Setting:
    """One line of "how it was played": a label and a sentence."""

    label: str
    words: str


@dataclass(frozen=True)
class GameLine:
    """One game in the list of games, with the relative link to its replay (if published)."""

    game_id: str
    seats: tuple[str, str]
    result: str
    winner: int | None
    ending: str
    rounds: int
    replay_href: str | None


@dataclass(frozen=True)
class CrossRow:
    """One row of the crosstable in standings order: ``cells[j]`` is None on the diagonal."""

    bot: str
    cells: tuple[CrossCell | None, ...]
    points: float


@dataclass(frozen=True)
class PairLine:
    """One pairing's duplicate-pair statistics (pairs.py), as the pages show them."""

    a: str
    b: str
    record: str
    pentanomial: tuple[int, ...]
    unpaired: int
    elo: float | None
    elo_low: float | None
    elo_high: float | None
    los: float | None


def pair_line(stats: PairStats) -> PairLine:
    """The figures of one pairing, None where there is no complete pair yet."""
    found = stats.estimate
    return PairLine(
        a=stats.a,
        b=stats.b,
        record=f"{stats.wins}-{stats.losses}-{stats.draws}",
        pentanomial=tuple(stats.pentanomial.counts),
        unpaired=stats.unpaired,
        elo=None if found is None else found.elo,
        elo_low=None if found is None else found.elo_low,
        elo_high=None if found is None else found.elo_high,
        los=None if found is None else found.los,
    )


@dataclass(frozen=True)
class ReportSummary:
    """Everything report.html and report.md show."""

    name: str
    built: str
    version: str
    complete: bool
    played: int
    planned: int
    bots: tuple[Setting, ...]
    settings: tuple[Setting, ...]
    standings: tuple[StandingsRow, ...]
    crosstable: tuple[CrossRow, ...]
    figures: tuple[BotFigures, ...]
    forfeit_kinds: tuple[tuple[Termination, str], ...]
    games: tuple[GameLine, ...]
    replays_note: str
    pairings: tuple[PairLine, ...] = ()
    pair_points: tuple[str, ...] = ()
    sprt: str | None = None
    #: A Swiss event's rounds and standings by match points and tiebreaks.
    swiss: SwissTables | None = None
    #: A knockout's bracket, round by round.
    knockout: KnockoutState | None = None
    #: A finals event's stages and how it ended.
    finals: FinalsState | None = None

    @property
    def finals_ending(self) -> str:
        """How the finals ended, in a sentence ("" while they run or for other formats)."""
        if self.finals is None or self.finals.ended is None:
            return ""
        return finals_ending(self.finals)


def bot_kind(bot: BotSpec) -> str:
    """What sort of entrant a bot is, without its command line (it may hold paths)."""
    if bot.is_external:
        return "connects to the referee by itself"
    if bot.command.startswith("builtin:"):
        return f"an example bot, {bot.command}"
    return "a program started by the arena"


def _seconds(value: float) -> str:
    return f"{value:g} s"


def deck_words(ruleset: Ruleset) -> str:
    """ "38 cards: 1×2, 2×3, ..." (value×copies)."""
    counts = ", ".join(f"{value}×{ruleset.deck[value]}" for value in sorted(ruleset.deck))
    return f"{ruleset.deck_size} cards (value×copies: {counts})"


def board_words(ruleset: Ruleset) -> str:
    """The spaces' hand sizes and arrows in a sentence."""
    sizes = " ".join(str(size) for size in ruleset.hand_sizes)
    text = (
        f"{ruleset.spaces} spaces between the goals; cards dealt to each player on each space, "
        f"from the first player's goal to the second's: {sizes}"
    )
    if tuple(ruleset.arrows) == default_arrows(ruleset.spaces):
        return text + (
            "; on the centre both replace cards at once, elsewhere the player farther from "
            "winning replaces first"
        )
    firsts = " ".join(
        "both" if len(seats) == 2 else f"seat {next(iter(seats))}" for seats in ruleset.arrows
    )
    return text + f"; who replaces first on each space: {firsts}"


def _format_settings(config: TournamentConfig) -> tuple[Setting, ...]:
    """A Swiss event's format in words (a round robin's and a gauntlet's tables say theirs)."""
    if config.format is TournamentFormat.KNOCKOUT:
        return (
            Setting(
                "Format",
                "knockout: a seeded bracket (1 meets the lowest seed; the top seeds get the "
                f"byes); a match level on game points plays up to {config.knockout_extra_pairs} "
                "more duplicate pairs, one at a time, then goes to the higher seed",
            ),
        )
    if config.format is TournamentFormat.FINALS:
        f = config.finals
        stop = (
            f"until the order of the top {f.top} is decided (each boundary's LOS >= "
            f"{f.confidence:g} on the two bots' duplicate pairs, over >= {MIN_PAIRS} pairs)"
            if f.until_stable
            else "until the field can be cut no further"
        )
        return (
            Setting(
                "Format",
                f"finals: stages of round robins of the field still in, {config.games_per_pairing} "
                f"games per pairing each; after each stage the field is ranked by its points "
                f"against itself and the lower {f.cut:g} of it dropped (never below "
                f"{f.top + 1} bots); {stop}; at most {f.max_stages} stages",
            ),
        )
    if config.format is not TournamentFormat.SWISS:
        return ()
    return (
        Setting(
            "Format",
            f"Swiss, {config.swiss_rounds} rounds: each round pairs bots of equal match points "
            "who have not met (Dutch style); a match is its games' points, won, drawn or lost; "
            f"an odd field's bye scores {BYE_POINTS:g} (at most one per bot); ties broken by "
            "Buchholz, Sonneborn–Berger, then Elo",
        ),
    )


def config_settings(config: TournamentConfig, *, complete: bool) -> tuple[Setting, ...]:
    """The tournament's settings in words."""
    games = config.games_per_pairing
    clock = _seconds(config.move_timeout_s) + " per decision"
    clock += (
        f", plus a time bank of {_seconds(config.time_bank_s)} per bot per game"
        if config.time_bank_s
        else ", no time bank"
    )
    clock += f"; {config.grace_ms} ms of grace for the referee and the network"
    ruleset = config.ruleset
    seed = (
        f"{config.seed}: with the deal secret published in results.json, anyone can "
        "re-derive every deal and check it"
        if complete
        else "kept secret until every game is over (the deals derive from it)"
    )
    return (
        Setting(
            "Games",
            f"{games} per pairing: {games // 2} deal{'s' * (games > 2)}, each played twice "
            "with the seats swapped (duplicate), so luck of the deal evens out",
        ),
        *_format_settings(config),
        Setting("Clock", clock),
        Setting("Failures", POLICY_WORDS[config.failure_policy]),
        Setting("Deck", deck_words(ruleset)),
        Setting("Board", board_words(ruleset)),
        Setting("Ties", TIE_WORDS[ruleset.tie_rule]),
        Setting(
            "Round cap",
            f"a game still undecided after {ruleset.max_rounds} rounds is a draw",
        ),
        Setting("Seed", seed),
    )


def crosstable_rows(rows: Sequence[StandingsRow], cross: Crosstable) -> tuple[CrossRow, ...]:
    """The crosstable in standings order, with each row bot's points."""
    order = [row.bot for row in rows]
    return tuple(
        CrossRow(
            bot=a,
            cells=tuple(None if a == b else cross[a][b] for b in order),
            points=sum(cell.points for cell in cross.get(a, {}).values()),
        )
        for a in order
    )


def game_line(result: GameResult, href: str | None) -> GameLine:
    """One game of the list: its result, ending in words and replay link."""
    score = {None: "½–½", 0: "1–0", 1: "0–1"}[result.winner]
    return GameLine(
        game_id=result.game_id,
        seats=result.seats,
        result=score,
        winner=result.winner,
        ending=ending_words(result.reason),
        rounds=result.rounds,
        replay_href=href,
    )


def build_summary(
    config: TournamentConfig,
    standings: Sequence[StandingsRow],
    cross: Crosstable,
    figures: Mapping[str, BotFigures],
    games: Sequence[GameLine],
    *,
    complete: bool,
    planned: int,
    replays_note: str,
    pairings: Sequence[PairStats] = (),
    sprt: str | None = None,
    built: datetime | None = None,
    swiss: SwissTables | None = None,
    knockout: KnockoutState | None = None,
    finals: FinalsState | None = None,
    commitment: Mapping[str, Any] | None = None,
) -> ReportSummary:
    """The report's values for ``config``'s tournament as it stands; ``commitment`` what it
    published at its start (tournament/commitments.py), shown with its settings."""
    when = (built or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    return ReportSummary(
        name=config.event_name,
        built=when,
        version=__version__,
        complete=complete,
        played=len(games),
        planned=planned,
        bots=tuple(Setting(bot.name, bot_kind(bot)) for bot in config.bots),
        settings=config_settings(config, complete=complete)
        + (() if commitment is None else (Setting("Commitment", commitment_words(commitment)),)),
        standings=tuple(standings),
        crosstable=crosstable_rows(standings, cross),
        figures=tuple(figures[row.bot] for row in standings),
        forfeit_kinds=tuple((kind, FORFEIT_HEADINGS[kind]) for kind in FORFEIT_KINDS),
        games=tuple(games),
        replays_note=replays_note,
        pairings=tuple(pair_line(stats) for stats in pairings),
        pair_points=PENTANOMIAL_LABELS,
        sprt=sprt,
        swiss=swiss,
        knockout=knockout,
        finals=finals,
    )
