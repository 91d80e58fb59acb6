"""Running a Swiss event: pair a round from the store, play it, and again until the last.

Each round is a run of its own plan (``runner.run_tournament`` with the round's games), so
everything a round robin's run guarantees holds per round: twins, sandbox, restarts, every
game committed before it counts.  The next round is paired only from the store once the
round is finished (``swiss.swiss_state``), so an event killed at any point and resumed pairs
every round as the uninterrupted one would, and replays no finished game.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.config import TournamentConfig
from tacocat_arena.tournament.runner import ProgressCallback, TournamentRun, run_tournament
from tacocat_arena.tournament.schedule import games_planned
from tacocat_arena.tournament.storage import TournamentStore
from tacocat_arena.tournament.swiss import SwissState, swiss_state


async def run_swiss(
    config: TournamentConfig,
    store: TournamentStore,
    *,
    on_start: Callable[[int, int], None] = lambda total, done: None,
    on_game: ProgressCallback = lambda result, done, total: None,
    on_round: Callable[[SwissState], None] = lambda state: None,
    **options: Any,
) -> TournamentRun:
    """Play ``config``'s Swiss event to its last round; ``on_round`` is told each round's
    pairing (the state whose last round is about to be played) before its games start;
    ``options`` go to ``run_tournament``."""
    secret = store.deal_secret()
    total = games_planned(config)
    resumed = store.count()
    on_start(total, resumed)

    def game_done(result: GameResult, done: int, round_total: int) -> None:
        on_game(result, store.count(), total)

    played = unplayed = 0
    exits: dict[str, tuple[str, ...]] = {}
    startup: dict[str, tuple[float, ...]] = {}
    while True:
        state = swiss_state(config, store.results(), secret=secret)
        if state.finished == config.swiss_rounds:
            break
        on_round(state)
        run = await run_tournament(
            config,
            store,
            plan=state.games[-1],
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
        if swiss_state(config, store.results(), secret=secret).finished < len(state.rounds):
            break  # stopped before the round's end (should_stop): the next run resumes it
    return TournamentRun(total, resumed, played, unplayed, exits, startup)
