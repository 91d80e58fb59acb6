"""The plan: who plays whom, in which seat, on which deal (round robin, gauntlet, Swiss).

In a round robin every pair of bots meets ``games_per_pairing`` times; in a gauntlet one bot
meets every other that often and the others do not meet (``gauntlet``).  Each deal seed is
played twice with the seats swapped (duplicate), so both bots hold the same cards in turn and
the cards' luck cancels as far as it can.  Deal seeds derive from the tournament seed, the
pairing and the deal index (SHA-256), and from the tournament's secret: drawn at its start,
kept in its store and published in results.json once it is complete, so no bot can predict
a deal from the config, and anyone can re-derive every deal afterwards.  Each pairing gets
its own deals: a bot that remembered cards could otherwise recognise a deal it had met in
another pairing.  Games are ordered deal by deal across pairings, and the two games of a
duplicate pair are adjacent, so an interrupted tournament has played every pairing about
equally.  A Swiss event's plan grows round by round from the results (``tournament.swiss``),
a knockout's and a finals event's likewise: ``plan_for`` gives the stages planned so far.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tacocat_arena.tournament.config import TournamentConfig, TournamentFormat
from tacocat_arena.tournament.storage import TournamentStore


@dataclass(frozen=True)
class PlannedGame:
    """One game of the plan."""

    game_id: str
    seats: tuple[str, str]  # bot names in seat 0 and seat 1
    seed: int
    deal: int  # index of the deal within its pairing
    #: The second game of its duplicate pair (played by each bot's twin instance).
    twin: bool = False


def deal_seed(tournament_seed: int, pairing: tuple[str, str], deal: int, *, secret: str) -> int:
    """The engine seed of one deal of one pairing (names in plan order).  ``secret`` is
    required, so a predictable deal is never the silent default: with ``secret=""`` (plans
    for tests and tools, said outright) the config seed alone decides it."""
    prefix = f"tacocat-arena:{secret}:" if secret else "tacocat-arena:"
    key = f"{prefix}{tournament_seed}:{pairing[0]}:{pairing[1]}:{deal}"
    digest = hashlib.sha256(key.encode()).digest()
    return int.from_bytes(digest[:8], "big")


def staged_pair(
    kind: str,
    stage: str,
    seats: tuple[str, str],
    deal: int,
    tournament_seed: int,
    *,
    secret: str,
) -> tuple[PlannedGame, PlannedGame]:
    """One duplicate pair of an event played in stages (a Swiss round, a knockout round):
    ``seats[0]`` in seat 0 of the first game, then the twins' game with the seats swapped;
    ids ``STAGE-A-B-dDEAL``; the deal seed as ``deal_seed``'s with the event's ``kind`` and
    the stage in the key, so a repeat meeting gets new cards."""
    prefix = f"tacocat-arena:{secret}:" if secret else "tacocat-arena:"
    a, b = seats
    key = f"{prefix}{tournament_seed}:{kind}:{stage}:{a}:{b}:{deal}"
    seed = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    return (
        PlannedGame(f"{stage}-{a}-{b}-d{deal}", (a, b), seed, deal),
        PlannedGame(f"{stage}-{b}-{a}-d{deal}", (b, a), seed, deal, twin=True),
    )


def round_robin(
    bots: Sequence[str], games_per_pairing: int, tournament_seed: int, *, secret: str
) -> list[PlannedGame]:
    """The whole plan, in playing order."""
    if games_per_pairing % 2:
        raise ValueError("games_per_pairing must be even (each deal is played twice)")
    pairs = list(itertools.combinations(bots, 2))
    plan: list[PlannedGame] = []
    for deal in range(games_per_pairing // 2):
        for index, (first, second) in enumerate(pairs):
            seed = deal_seed(tournament_seed, (first, second), deal, secret=secret)
            # Alternate who sits in seat 0 first, so neither bot always opens a deal.
            a, b = (first, second) if (deal + index) % 2 == 0 else (second, first)
            plan.append(PlannedGame(f"{a}-{b}-d{deal}", (a, b), seed, deal))
            plan.append(PlannedGame(f"{b}-{a}-d{deal}", (b, a), seed, deal, twin=True))
    return plan


def gauntlet(
    champion: str,
    bots: Sequence[str],
    games_per_pairing: int,
    tournament_seed: int,
    *,
    secret: str,
) -> list[PlannedGame]:
    """The gauntlet plan: ``champion`` against each other bot, the others never meet.

    Deals, seats and order follow ``round_robin``'s rules, and the champion's pairings get
    the deals the same pairings would get in a round robin with the champion listed first.
    """
    if champion not in bots:
        raise ValueError(f"the gauntlet's bot {champion!r} is not among the bots")
    order = [champion, *(bot for bot in bots if bot != champion)]
    plan = round_robin(order, games_per_pairing, tournament_seed, secret=secret)
    return [game for game in plan if champion in game.seats]


def plan_for(
    config: TournamentConfig, *, secret: str, results: Iterable[Any] = ()
) -> list[PlannedGame]:
    """The plan of ``config``'s tournament, in playing order, by its format; its deals mix
    ``secret`` into their seeds.  A Swiss event's is the rounds that ``results`` (its
    finished games: ``GameResult``, or ``swiss.Scored``) let pair so far."""
    names = [bot.name for bot in config.bots]
    games, seed = config.games_per_pairing, config.seed
    if config.format is TournamentFormat.SWISS:
        from tacocat_arena.tournament.swiss import swiss_state  # it builds on this module

        return swiss_state(config, results, secret=secret).plan
    if config.format is TournamentFormat.KNOCKOUT:
        from tacocat_arena.tournament.knockout import knockout_state

        return knockout_state(config, results, secret=secret).plan
    if config.format is TournamentFormat.FINALS:
        from tacocat_arena.tournament.finals import finals_state

        return finals_state(config, results, secret=secret).plan
    if config.format is TournamentFormat.GAUNTLET:
        return gauntlet(config.gauntlet_name, names, games, seed, secret=secret)
    return round_robin(names, games, seed, secret=secret)


def tournament_plan(config: TournamentConfig, store: TournamentStore) -> list[PlannedGame]:
    """The plan of the tournament kept in ``store``: the one place a run, its workers and its
    progress make it, with the store's deal secret (kept by ``--resume``)."""
    return plan_for(config, secret=store.deal_secret(), results=store.results())


def games_planned(config: TournamentConfig) -> int:
    """How many games ``config``'s tournament plays in all, known at its start (a Swiss
    event's before its later rounds are paired)."""
    if config.format is TournamentFormat.SWISS:
        return config.swiss_rounds * (len(config.bots) // 2) * config.games_per_pairing
    if config.format is TournamentFormat.KNOCKOUT:  # at least: level matches play on
        return (len(config.bots) - 1) * config.games_per_pairing
    if config.format is TournamentFormat.FINALS:  # at least: its first stage
        bots = len(config.bots)
        return bots * (bots - 1) // 2 * config.games_per_pairing
    return len(plan_for(config, secret=""))
