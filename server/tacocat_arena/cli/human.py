"""``tacocat-arena play human BOT``: the printing and the options around ``human.local``."""

from __future__ import annotations

import sys
import webbrowser
from pathlib import Path

import click

from tacocat_arena.cli.run import match_bot, output_console
from tacocat_arena.human.local import HumanMatch, human_config, play_human
from tacocat_arena.human.relay import SeatResult
from tacocat_arena.launch.bots import BotStartError
from tacocat_arena.launch.sandbox import SandboxError
from tacocat_arena.referee import ListenError
from tacocat_arena.referee.stopping import Stopped, run_until_signalled
from tacocat_arena.tournament.config import ConfigError, load_config
from tacocat_arena.tournament.runner import preflight_bots
from tacocat_arena.tournament.storage import StorageError

#: The person's name in the match (the record's player name) unless --name says otherwise.
HUMAN_NAME = "human"
#: "you won by ..." and the others (a finished game has no "no contest").
_WORDS = {SeatResult.WIN: "won", SeatResult.LOSS: "lost", SeatResult.DRAW: "drew"}


def play_human_command(
    bot: str,
    *,
    pair: bool,
    open_browser: bool,
    human_move_timeout_s: float,
    move_timeout_s: float,
    seed: int,
    out: Path,
    name: str = HUMAN_NAME,
) -> HumanMatch:
    """Play the person against ``bot`` (a command or an example bot's name, as ``play``
    takes them); print the page's address, then the result and where the files are."""
    console = output_console()
    bot_name, command = match_bot(bot, 1)
    if bot_name == name:
        bot_name += "-bot"
    try:
        config = load_config(
            None,
            {
                "games_per_pairing": 2,
                "seed": seed,
                "concurrency": 1,
                "move_timeout_s": move_timeout_s,
                "out": out,
            },
            [f"{name}=", f"{bot_name}={command}"],
            external_ok=True,
        )
        config = human_config(config, name, human_move_timeout_s)
        preflight_bots(config)
    except (ConfigError, BotStartError, SandboxError, ValueError) as error:
        raise click.ClickException(str(error)) from None
    console.print(
        f"You ({name}) against {bot_name}: {'a duplicate pair' if pair else 'one game'}; "
        f"{human_move_timeout_s:g} s per move for you, {move_timeout_s:g} s for the bot; "
        f"output in {config.out}"
    )

    def on_url(url: str) -> None:
        console.print(f"Play in your browser: {url}", soft_wrap=True)
        if open_browser and sys.stdin.isatty() and _has_browser():
            webbrowser.open(url)

    try:
        match = run_until_signalled(play_human(config, pair=pair, on_url=on_url, say=console.print))
    except (BotStartError, ListenError, StorageError, OSError) as error:
        raise click.ClickException(str(error)) from None
    except Stopped as stop:
        console.print(f"\nInterrupted: the games finished so far are saved in {config.out}.")
        raise SystemExit(stop.exit_code) from None
    for number, result in enumerate(match.results, 1):
        seat = result.seats.index(name)
        outcome = _WORDS[SeatResult.of(result, seat)]
        rounds = f"{result.rounds} round{'' if result.rounds == 1 else 's'}"
        console.print(
            f"Game {number} (you were seat {seat}): you {outcome} by {result.reason.value} "
            f"after {rounds}"
        )
    if match.pair_points is not None:
        console.print(f"Duplicate pair: you scored {match.pair_points:g} of 2 points")
    console.print(
        f"Results in {config.out} (tacocat-arena verify {config.out}; the report: "
        f"{config.out / 'report.html'})",
        soft_wrap=True,
    )
    return match


def _has_browser() -> bool:
    try:
        webbrowser.get()
    except webbrowser.Error:
        return False
    return True
