"""The steps the events' kill -9 and ``--resume`` tests share (tests/test_swiss_run.py,
tests/test_finals_run.py): a field whose games are functions of their deals, a second run
dealt with the first's secret, a kill -9 of its whole process group part way through a round
or a stage, and each game's outcome by id to compare the two runs by."""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

from process_support import start_process
from test_tournament_cli import cli_argv, db_rows, wait_no_processes, write_config

from tacocat_arena.tournament.config import load_config
from tacocat_arena.tournament.storage import TournamentStore

BOT = Path(__file__).resolve().parent / "bots" / "view_seeded_bot.py"


def deal_bound_bots(token: str) -> dict[str, str]:
    """Three random bots seeded by what they see (v1-v3) and two greedy ones (g1, g2, clearly
    stronger), each command tagged with ``token``: every game is a function of its deal."""
    return {f"v{salt}": f"{sys.executable} {BOT} {salt} {token}" for salt in (1, 2, 3)} | {
        f"g{n}": f"{sys.executable} -m example_bots.greedy_bot {token}" for n in (1, 2)
    }


def deal_bound_config(tmp_path: Path, token: str, **event: Any) -> Path:
    """A config of the ``deal_bound_bots`` (2 games a pairing, 2 at once, unsandboxed, a
    10 s move timeout) for the event ``event`` describes (its format, seed and settings).

    One duplicate pair a pairing: a stage's pairs' first games (the A processes), then their
    twins (B), so a kill in a stage's first half still leaves most of it to play; a bot's
    processes start anew each stage (``stages.run_stages``), which is most of the CPU, and the
    greedy bots win all but about one game in a hundred against the random ones."""
    return write_config(
        tmp_path,
        deal_bound_bots(token),
        games=2,
        concurrency=2,
        move_timeout=10.0,
        sandbox="none",
        **event,
    )


def games(out: Path) -> dict[str, tuple]:
    """Each game's seats, deal seed and outcome (winner, termination), by id."""
    return {
        game_id: (row[1], row[2], row[3], json.loads(row[4]).get("winner"),
                  json.loads(row[4]).get("termination"))
        for game_id, row in db_rows(out).items()
    }  # fmt: skip


def secret(out: Path) -> str:
    """The deal secret of the run stored in ``out``."""
    db = sqlite3.connect(f"file:{out / 'tournament.sqlite'}?mode=ro", uri=True)
    try:
        return db.execute("SELECT value FROM meta WHERE key = 'deal_secret'").fetchone()[0]
    finally:
        db.close()


def deal_like(whole: Path, out: Path, config: Path, overrides: dict[str, Any]) -> None:
    """Claim ``out`` for ``config`` (with ``overrides``, as the command line gives them) and
    deal it with ``whole``'s secret, as ``--resume`` keeps its own: the two runs must then
    agree game by game."""
    store = TournamentStore(out)
    store.claim(load_config(config, overrides, []).fingerprint(), resume=False)
    store.adopt_secret(secret(whole))
    store.close()


def kill_9_mid(
    config: Path, out: Path, *args: str, prefix: str, total: int, what: str, tmp_path: Path,
    token: str,
) -> None:  # fmt: skip
    """Run ``run CONFIG ARGS --out OUT`` until some but not all of the ``total`` games whose
    ids start with ``prefix`` (``what``: round 2, stage 2) are committed, then kill -9 its
    process group; fails if it ended first, or if a bot process outlives it."""
    cli = start_process(
        cli_argv(config, *args, "--out", out, "--quiet"), name=prefix, log_dir=tmp_path
    )
    deadline = time.monotonic() + 240
    try:
        while not 0 < sum(game.startswith(prefix) for game in db_rows(out)) < total:
            assert cli.poll() is None, "the event ended before it could be killed:\n" + cli.output()
            assert time.monotonic() < deadline, f"{what} did not start within 240 s"
            time.sleep(0.02)
    finally:
        cli.signal_group(9)
        cli.wait(30)
    assert wait_no_processes(token) == [], "bot processes outlived the killed event"
