"""Running an event in stages: a Swiss's rounds, a knockout's rounds (and a match's extra
pairs), a finals event's cut fields.  Pair the next stage from the store, play it, and again
until the event is decided.

Each stage is a run of its own plan (``runner.run_tournament`` with the stage's games), so
everything a round robin's run guarantees holds per stage: twins, sandbox, restarts, every
game committed before it counts.  The next stage is planned only from the store once the
last one is finished (``swiss.swiss_state``, ``knockout.knockout_state``,
``finals.finals_state``), so an event
killed at any point and resumed plans every stage as the uninterrupted one would, and
replays no finished game.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.config import TournamentConfig, TournamentFormat
from tacocat_arena.tournament.finals import finals_state, stage_lines
from tacocat_arena.tournament.knockout import knockout_state
from tacocat_arena.tournament.runner import ProgressCallback, TournamentRun, run_tournament
from tacocat_arena.tournament.schedule import PlannedGame, games_planned, plan_for
from tacocat_arena.tournament.storage import TournamentStore
from tacocat_arena.tournament.swiss import round_lines, swiss_state

#: The formats played in stages.
STAGED = frozenset({TournamentFormat.SWISS, TournamentFormat.KNOCKOUT, TournamentFormat.FINALS})


@dataclass(frozen=True)
class Stage:
    """The next stage to play: what to tell the organizer, and its games."""

    lines: Sequence[str]
    games: Sequence[PlannedGame]


def next_stage(
    config: TournamentConfig, results: Iterable[GameResult], *, secret: str
) -> Stage | None:
    """The stage ``results`` leave to play next (None: the event is over)."""
    if config.format is TournamentFormat.SWISS:
        state = swiss_state(config, results, secret=secret)
        if state.finished == config.swiss_rounds:
            return None
        return Stage(round_lines(state), state.games[-1])
    if config.format is TournamentFormat.FINALS:
        finals = finals_state(config, results, secret=secret)
        if finals.ended is not None:
            return None
        return Stage(stage_lines(finals), finals.stages[-1].games)
    bracket = knockout_state(config, results, secret=secret)
    if bracket.champion is not None:
        return None
    name, current = bracket.named_rounds()[-1]
    playing = [match for match in current if match.winner is None]
    lines = [f"{name}: {len(playing)} match{'es' * (len(playing) != 1)} in play"]
    lines += [f"  {m.high} - {m.low} (pair {len(m.games) // 2})" for m in playing]
    return Stage(lines, [game for match in current for game in match.games])


async def run_stages(
    config: TournamentConfig,
    store: TournamentStore,
    *,
    on_start: Callable[[int, int], None] = lambda total, done: None,
    on_game: ProgressCallback = lambda result, done, total: None,
    on_stage: Callable[[Stage], None] = lambda stage: None,
    **options: Any,
) -> TournamentRun:
    """Play ``config``'s event stage by stage to its end; ``on_stage`` is told each stage
    before its games start; ``options`` go to ``run_tournament``."""
    secret = store.deal_secret()
    total = games_planned(config)
    resumed = store.count()
    on_start(total, resumed)

    def game_done(result: GameResult, done: int, stage_total: int) -> None:
        on_game(result, store.count(), max(total, store.count()))

    played = unplayed = 0
    exits: dict[str, tuple[str, ...]] = {}
    startup: dict[str, tuple[float, ...]] = {}
    while (stage := next_stage(config, store.results(), secret=secret)) is not None:
        on_stage(stage)
        run = await run_tournament(
            config,
            store,
            plan=stage.games,
            on_start=lambda planned, done: None,
            on_game=game_done,
            **options,
        )
        options["on_notice"] = lambda text: None  # the sandbox and limits: said once
        played, unplayed = played + run.played, unplayed + run.unplayed
        for ident, ends in run.exits.items():
            exits[ident] = exits.get(ident, ()) + ends
        for ident, times in run.startup_s.items():
            startup[ident] = startup.get(ident, ()) + times
        finished = store.finished_ids()
        if any(game.game_id not in finished for game in stage.games):
            break  # stopped before the stage's end: the next run resumes it
    else:
        # Over: a knockout's level matches and a finals' stages are what it played.
        total = len(plan_for(config, secret=secret, results=store.results()))
    return TournamentRun(total, resumed, played, unplayed, exits, startup)
