"""One tournament's life cycle, from its folder to its last game: the one procedure ``run``
(and ``play``), each tier of ``grade`` and a person's match (``human.local``: steps 1 to 4,
then its games one at a time) go through.

1. **store**: the folder's database (``TournamentStore``), claimed for this config's
   fingerprint (a fresh run refuses a folder of finished games; ``--resume`` continues them),
   its games appended to ``games.jsonl`` pair by pair as they commit;
2. **secret**: the store's deal secret, drawn once and kept, or one given (``grade`` deals
   every student's games from its grading run's secret);
3. **plan and commitment**: the plan (``tournament_plan``) and ``commitment.json`` written
   before the first game, so the deals are committed to before anyone plays;
4. **monitor**: a two-bot event's ``MatchMonitor`` (score, pairs, the SPRT if asked for;
   not a staged event's, whose plan grows), fed the games already saved and each one as it
   finishes, which stops the games once decided;
5. **games**: ``run_tournament``, or stage by stage for a Swiss or knockout event
   (``stages.run_stages``); a caller that plays elsewhere (``--workers``) feeds the monitor
   through ``Event.watch``;
6. **outputs**: ``Event.ending`` says whether the event is complete and what was planned;
   ``report.outputs.finish_event`` writes the result files and closes the store (the report
   room sits above this one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tacocat_arena.stats.live import MatchMonitor
from tacocat_arena.stats.sprt import Sprt, SprtState
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.commitments import publish_commitment
from tacocat_arena.tournament.config import ConfigError, TournamentConfig
from tacocat_arena.tournament.games_log import GAMES_FILE, GamesLog
from tacocat_arena.tournament.runner import ProgressCallback, TournamentRun, run_tournament
from tacocat_arena.tournament.schedule import PlannedGame, tournament_plan
from tacocat_arena.tournament.stages import STAGED, Stage, run_stages
from tacocat_arena.tournament.storage import TournamentStore


@dataclass(frozen=True)
class Ending:
    """How an event's outputs are written: complete or partial, of how many games, with
    the sequential test's state (``report.outputs.write_outputs``'s arguments)."""

    complete: bool
    planned: int
    sprt: SprtState | None


@dataclass
class Event:
    """A tournament whose folder is claimed and whose deals are committed to, ready to play."""

    config: TournamentConfig
    store: TournamentStore
    plan: list[PlannedGame]
    #: ``commitment.json``'s contents, as written before the first game.
    commitment: dict[str, Any]
    #: A two-bot event's monitor (None for more bots).
    monitor: MatchMonitor | None

    def watch(self, on_game: ProgressCallback) -> ProgressCallback:
        """``on_game``, called once the monitor has counted the game."""

        def counted(result: GameResult, done: int, total: int) -> None:
            if self.monitor is not None:
                self.monitor.add(result)
            on_game(result, done, total)

        return counted

    @property
    def is_decided(self) -> bool:
        """Whether the monitor's sequential test has decided: no further game starts."""
        return self.monitor is not None and self.monitor.is_decided

    @property
    def sprt(self) -> SprtState | None:
        """The sequential test's state (None without one)."""
        return self.monitor.sprt if self.monitor is not None else None

    def ending(self, outcome: TournamentRun) -> Ending:
        """Complete once every planned game is in, or the test has decided (read before the
        store is closed)."""
        complete = self.store.count() == outcome.planned or self.is_decided
        return Ending(complete, outcome.planned, self.sprt)

    def close(self) -> None:
        self.store.close()


def open_event(
    config: TournamentConfig,
    *,
    resume: bool = False,
    secret: str | None = None,
    sprt: Sprt | None = None,
) -> Event:
    """Steps 1 to 4 for ``config``: StorageError (or OSError) for a folder that cannot be
    claimed, ConfigError for an SPRT asked of more than two bots.  ``secret`` replaces the
    drawn deal secret (refused once games were dealt with another)."""
    if sprt is not None and config.format in STAGED:
        raise ConfigError(
            f"--sprt stops a match of a fixed plan; a {config.format.value} event plans "
            "its stages as it goes"
        )
    if sprt is not None and len(config.bots) != 2:
        raise ConfigError("--sprt compares two bots; this tournament has more")
    store = TournamentStore(config.out)
    try:
        store.claim(config.fingerprint(), resume=resume)
        if secret is not None:
            store.adopt_secret(secret)
        store.on_commit.append(GamesLog(config.out / GAMES_FILE, store).add)  # pair by pair
        plan = tournament_plan(config, store)
        committed = publish_commitment(config.out, config, store.deal_secret())
    except BaseException:
        store.close()
        raise
    monitor = None
    # No monitor for a staged event: its plan grows stage by stage, and the monitor counts
    # pairs in a fixed plan (the first stage's would refuse stage 2's first game).
    if len(config.bots) == 2 and config.format not in STAGED:
        a, b = (bot.name for bot in config.bots)
        monitor = MatchMonitor(plan, a, b, sprt)
        for result in store.results():
            monitor.add(result)
    return Event(config, store, plan, committed, monitor)


async def play_event(
    event: Event,
    *,
    on_start: Callable[[int, int], None] = lambda total, done: None,
    on_game: ProgressCallback = lambda result, done, total: None,
    on_stage: Callable[[Stage], None] = lambda stage: None,
    on_notice: Callable[[str], None] = lambda text: None,
    pairs_per_phase: int | None = None,
) -> TournamentRun:
    """Step 5: every game missing from the store, the monitor told of each; a Swiss or
    knockout event stage by stage.  With a sequential test the pairs are played in phases of
    ``pairs_per_phase`` (``run_tournament``), so that pairs end as the test goes."""
    config, counted = event.config, event.watch(on_game)
    if config.format in STAGED:
        return await run_stages(
            config,
            event.store,
            on_start=on_start,
            on_game=counted,
            on_stage=on_stage,
            on_notice=on_notice,
        )
    testing = event.monitor is not None and event.monitor.sprt is not None
    return await run_tournament(
        config,
        event.store,
        on_start=on_start,
        on_game=counted,
        should_stop=lambda: event.is_decided,
        on_notice=on_notice,
        plan=event.plan,
        pairs_per_phase=pairs_per_phase if testing else None,
    )
