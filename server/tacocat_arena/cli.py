"""The ``tacocat-arena`` command: thin; it parses and delegates."""

from __future__ import annotations

import random

import click

from tacocat_arena import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tacocat-arena")
def main() -> None:
    """Tournaments of bots that play Tacocat Spelled Backwards."""


@main.group()
def bench() -> None:
    """Benchmarks that print figures."""


@bench.command("engine")
@click.option("--games", "-n", default=5000, show_default=True, help="Games to play.")
@click.option("--seed", default=1, show_default=True, help="Seed of the first deal.")
def bench_engine_command(games: int, seed: int) -> None:
    """Play GAMES random-vs-random games in process and print games/s and decisions/s.

    Every action is fully validated by the engine; a decision is one action of one seat.
    Rates are per CPU second of this process, i.e. of one core.
    """
    from tacocat_arena.bench import bench_engine

    if games < 1:
        raise click.BadParameter("must be at least 1", param_hint="--games")
    figures = bench_engine(games, seed=seed)
    click.echo(f"games:        {figures.games}")
    click.echo(f"decisions:    {figures.decisions} ({figures.decisions / games:.1f} per game)")
    click.echo(f"rounds:       {figures.rounds} ({figures.rounds / games:.2f} per game)")
    click.echo(f"cpu time:     {figures.cpu_seconds:.2f} s (wall {figures.wall_seconds:.2f} s)")
    click.echo(f"games/s:      {figures.games_per_second:,.0f}")
    click.echo(f"decisions/s:  {figures.decisions_per_second:,.0f}")


@main.command()
@click.option("--games", "-n", default=10, show_default=True, help="Games to play.")
@click.option("--seed", default=1, show_default=True, help="Seed of the first deal.")
def demo(games: int, seed: int) -> None:
    """Play a quick local match of the reference policies (greedy vs random) and print it."""
    from tacocat_arena.local import play_game
    from tacocat_arena.policies import GreedyPolicy, RandomPolicy

    score = {"greedy": 0.0, "random": 0.0}
    for index in range(games):
        greedy_seat = index % 2
        policies = [RandomPolicy(random.Random(seed + index))] * 2
        policies[greedy_seat] = GreedyPolicy()  # type: ignore[call-overload]
        game = play_game(policies, seed=seed * 1_000_003 + index // 2)
        assert game.outcome is not None
        winner = game.outcome.winner
        if winner is None:
            score["greedy"] += 0.5
            score["random"] += 0.5
        else:
            score["greedy" if winner == greedy_seat else "random"] += 1
    click.echo(f"greedy {score['greedy']} - {score['random']} random over {games} games")
