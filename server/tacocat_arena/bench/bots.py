"""``bench bots``: every built-in against every other, over duplicate pairs.

Each pairing plays ``pairs`` deals twice, the seats swapped (as tournaments do): on the
engine with no referee, or with ``over_wire`` as users play them, each bot its own process
(``python -m example_bots SPEC``, the SDK's ``run``) talking to a referee on loopback gRPC
under its default clock (1 s a decision; ``decision_ms`` gives more).  The games go one at
a time in the same order both ways, so the bots, seeded alike, play the same moves
(tests/test_parity.py): the two tables are equal unless a bot's code fails over the wire
(``fallbacks``) or it runs out of time (``forfeits``), which the over-the-wire table counts.
A pair's score is the first bot's mean over its two games (a win 1, a draw 1/2), and the
table gives the mean over pairs with a 95% interval (``1.96 * sd / sqrt(pairs)``, the pairs
being independent).  This is the ladder of baselines that docs/sdk.md quotes.  Bots are
seeded from ``seed`` so that a run can be repeated.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import resource
import secrets
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from example_bots.builtin import make_bot

from tacocat_arena.engine import DEFAULT_RULESET
from tacocat_arena.launch.builtins import BuiltinSpec, parse_builtin
from tacocat_arena.play.local import play_game
from tacocat_arena.referee import ClockSettings, Referee, RefereeSettings, start_server, stop_server

DEFAULT_LADDER = ("random", "greedy", "search", "ismcts")
#: The referee's default allowance per decision, as ``play`` and ``run`` give it.
DEFAULT_DECISION_MS = ClockSettings().decision_ms


@dataclass(frozen=True)
class Pairing:
    """The first bot's score against the second over duplicate pairs."""

    first: str
    second: str
    pair_scores: tuple[float, ...]
    cpu_seconds: float
    #: Over the wire only: moves a bot's SDK played by default because its code raised, and
    #: games lost by forfeit (a timeout, most likely), over both bots.
    fallbacks: int = 0
    forfeits: int = 0

    @property
    def score(self) -> float:
        return statistics.fmean(self.pair_scores)

    @property
    def half_width(self) -> float:
        """Half the width of the 95% interval of ``score``."""
        if len(self.pair_scores) < 2:
            return math.inf
        return 1.96 * statistics.stdev(self.pair_scores) / math.sqrt(len(self.pair_scores))


def bench_bots(
    specs: Sequence[str] = DEFAULT_LADDER,
    *,
    pairs: int = 20,
    seed: int = 1,
    over_wire: bool = False,
    decision_ms: int = DEFAULT_DECISION_MS,
    progress: Callable[[str], None] | None = None,
) -> list[Pairing]:
    """Play every pairing of ``specs`` (built-in names or ``builtin:NAME?key=value``), in
    process or, with ``over_wire``, as bot processes over a loopback referee whose clock
    gives ``decision_ms`` a decision (the referee's default; more on a loaded machine)."""
    parsed = [parse_builtin(spec) for spec in specs]
    results = []
    for i, first in enumerate(parsed):
        for second in parsed[i + 1 :]:
            if over_wire:
                results.append(_pairing_over_wire(first, second, pairs, seed, decision_ms))
            else:
                results.append(_pairing(first, second, pairs, seed))
            if progress is not None:
                last = results[-1]
                failures = (
                    f", {last.fallbacks} fallbacks, {last.forfeits} forfeits" if over_wire else ""
                )
                progress(
                    f"{first.label} vs {second.label}: {last.score:.3f} +- {last.half_width:.3f} "
                    f"({last.cpu_seconds:.0f} s CPU{failures})"
                )
    return results


def _pairing(first: BuiltinSpec, second: BuiltinSpec, pairs: int, seed: int) -> Pairing:
    start = time.process_time()
    a, b = make_bot(first, seed=seed), make_bot(second, seed=seed + 1)
    scores = []
    for deal in range(pairs):
        deal_seed = seed * 1_000_003 + deal
        one = play_game((a, b), seed=deal_seed).outcome
        two = play_game((b, a), seed=deal_seed).outcome
        assert one is not None and two is not None
        points = _points(one.winner, 0) + _points(two.winner, 1)
        scores.append(points / 2)
    return Pairing(first.label, second.label, tuple(scores), time.process_time() - start)


def _pairing_over_wire(
    first: BuiltinSpec, second: BuiltinSpec, pairs: int, seed: int, decision_ms: int
) -> Pairing:
    """``_pairing`` as users play it: the same deals and seeds, in the same order."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.process_time()
    bots = (_seeded(first, seed), _seeded(second, seed + 1))
    scores, fallbacks, forfeits = asyncio.run(_wire_games(bots, pairs, seed, decision_ms))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    children = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    cpu = time.process_time() - start + children  # the referee's and both bots'
    return Pairing(first.label, second.label, scores, cpu, fallbacks, forfeits)


def _seeded(spec: BuiltinSpec, seed: int) -> BuiltinSpec:
    """``spec`` with the seed ``_pairing`` gives its bot, unless it names one itself."""
    if "seed" in spec.kwargs:
        return spec
    return BuiltinSpec(spec.name, (*spec.options, ("seed", seed)))


async def _wire_games(
    bots: tuple[BuiltinSpec, BuiltinSpec], pairs: int, seed: int, decision_ms: int
) -> tuple[tuple[float, ...], int, int]:
    names = ("first", "second")
    tokens = {name: secrets.token_hex(16) for name in names}
    referee = Referee(tokens, RefereeSettings(clock=ClockSettings(decision_ms=decision_ms)))
    server, port = await start_server(referee)
    processes = []
    try:
        for name, spec in zip(names, bots, strict=True):
            env = dict(
                os.environ,
                TACOCAT_ARENA_ADDRESS=f"127.0.0.1:{port}",
                TACOCAT_ARENA_TOKEN=tokens[name],
                TACOCAT_ARENA_BOT=name,
            )
            processes.append(
                await asyncio.create_subprocess_exec(
                    *spec.argv(), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                )
            )
        for name in names:
            await referee.wait_for_session(name, 60)
        scores, fallbacks, forfeits = [], 0, 0
        for deal in range(pairs):
            deal_seed = seed * 1_000_003 + deal
            points = 0.0
            for seat, seating in enumerate((names, names[::-1])):
                report = await referee.play(
                    f"d{deal}s{seat}", seating, seed=deal_seed, ruleset=DEFAULT_RULESET
                )
                points += _points(report.outcome.winner, seat)
                fallbacks += sum(report.fallbacks)
                forfeits += report.forfeit_by is not None
            scores.append(points / 2)
        await referee.end_all_sessions("bench over")
        for process in processes:
            # The figures are in: a bot slow to exit (a loaded machine) is killed below.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), 30)
        return tuple(scores), fallbacks, forfeits
    finally:
        for process in processes:
            if process.returncode is None:
                process.kill()
                await process.wait()
        await stop_server(server, 1)


def _points(winner: int | None, seat: int) -> float:
    return 0.5 if winner is None else float(winner == seat)


def render_table(
    results: Sequence[Pairing], *, over_wire: bool = False, decision_ms: int = DEFAULT_DECISION_MS
) -> str:
    """A Markdown crosstable (row's score against column, 95% interval) and the ladder;
    ``over_wire`` adds a line counting fallback moves and forfeits (0 is a figure too)."""
    names: list[str] = []
    for result in results:
        for name in (result.first, result.second):
            if name not in names:
                names.append(name)
    cell: dict[tuple[str, str], str] = {}
    totals = dict.fromkeys(names, 0.0)
    for result in results:
        cell[result.first, result.second] = f"{result.score:.2f} ± {result.half_width:.2f}"
        cell[result.second, result.first] = f"{1 - result.score:.2f} ± {result.half_width:.2f}"
        totals[result.first] += result.score
        totals[result.second] += 1 - result.score
    lines = [
        "| bot | " + " | ".join(names) + " | mean |",
        "|---" * (len(names) + 2) + "|",
    ]
    for name in sorted(names, key=lambda n: -totals[n]):
        row = [cell.get((name, other), "—") for other in names]
        mean = totals[name] / max(1, len(names) - 1)
        lines.append(f"| {name} | " + " | ".join(row) + f" | {mean:.2f} |")
    if over_wire:
        games = 2 * sum(len(r.pair_scores) for r in results)
        lines += [
            "",
            f"Over the referee (loopback gRPC, bots as processes, {decision_ms} ms a decision): "
            f"{games} "
            f"games, {sum(r.fallbacks for r in results)} fallback moves (a bot's code "
            f"raised), {sum(r.forfeits for r in results)} forfeits.",
        ]
    return "\n".join(lines)
