"""``bench envs``: steps per second of each learning-library adapter, here and at another commit.

Every adapter is driven the way a learner drives it, with uniformly random legal ids from its
own action mask or legal-action list, until a loop has taken at least ``steps`` flat steps
(``envs.codec``), and timed in CPU seconds of the process that runs it (one core).  The peers,
PettingZoo's Leduc hold'em and OpenSpiel's pure-Python Kuhn poker, go through the same loops.

Each tree is measured by a child process running this file's ``measure_loop`` with the tree
it measures first on ``sys.path`` (``trees.Child``): this tree, and with ``against`` a git
worktree of another commit in a temporary folder, so both trees are driven by the same loops
(this file's) in the same run.
The two children take turns loop by loop (each going first in half the turns), so the load
of a shared machine changes little between the two figures of a pair; each figure is the
median over the rounds, and each round's ratio is printed beside the median one.

This module imports nothing of ``tacocat_arena`` at its top: the loops import each adapter
when they run it, from whichever tree the child has on its path (and ``bench_envs`` imports
``trees``, which the other tree may lack, only in the parent).
"""

from __future__ import annotations

import os
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: The loops of the adapters (both trees), in the order they are printed.
ADAPTERS = (
    "engine (decisions)",
    "StepGame (flat steps)",
    "PettingZoo raw_env",
    "Gymnasium vs builtin:random",
    "OpenSpiel python_tacocat",
)
#: The peers' loops (run in this tree's child only: they do not depend on the tree), each
#: beside the adapter it is compared with.  The last is OpenSpiel's floor: a Python game that
#: does nothing at all, through the same loop, so its time is pyspiel's own and the loop's.
PEERS = (
    "PettingZoo leduc_holdem_v4 (peer)",
    "OpenSpiel python_kuhn_poker (peer)",
    "OpenSpiel python_null (the floor)",
)
_COMPARED = (ADAPTERS[2], ADAPTERS[4], ADAPTERS[4])


@dataclass(frozen=True)
class Sample:
    """One loop's run in one round: flat steps (None if its library is missing), CPU time."""

    steps: int | None
    cpu_seconds: float
    note: str = ""

    @property
    def steps_per_second(self) -> float:
        return (self.steps or 0) / self.cpu_seconds if self.cpu_seconds else 0.0


@dataclass(frozen=True)
class LoopFigures:
    """One loop of one tree over every round."""

    name: str
    samples: tuple[Sample, ...]

    @property
    def missing(self) -> str:
        """Why the loop did not run ('' if it did)."""
        return next((s.note for s in self.samples if s.steps is None), "")

    @property
    def steps_per_second(self) -> float:
        """The median over the rounds."""
        return statistics.median(s.steps_per_second for s in self.samples)

    @property
    def microseconds_per_step(self) -> float:
        """The median CPU time of one step over the rounds."""
        return statistics.median(1e6 * s.cpu_seconds / (s.steps or 1) for s in self.samples)


@dataclass(frozen=True)
class EnvsComparison:
    """What ``bench envs`` measured: this tree's loops, the peers' and, with ``against``,
    the other tree's."""

    rounds: int
    steps: int
    this: str
    other: str | None
    loops: tuple[LoopFigures, ...]
    peers: tuple[LoopFigures, ...]
    other_loops: tuple[LoopFigures, ...] | None
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]

    def ratios(self, name: str) -> tuple[float, list[float]] | None:
        """The median of the rounds' ratios (this tree's steps/s over the other's, measured in
        turn), and each round's, for loop ``name``: a pair taken seconds apart shares the
        machine's load more than two medians do."""
        if self.other_loops is None:
            return None
        mine = next(f for f in self.loops if f.name == name)
        theirs = next(f for f in self.other_loops if f.name == name)
        if mine.missing or theirs.missing:
            return None
        each = [
            a.steps_per_second / b.steps_per_second
            for a, b in zip(mine.samples, theirs.samples, strict=True)
        ]
        return statistics.median(each), each


def bench_envs(
    steps: int, *, rounds: int = 5, against: str | None = None, seed: int = 1
) -> EnvsComparison:
    """Measure this tree's loops (and the peers') ``rounds`` times, interleaved loop by loop
    with a worktree of commit ``against`` when given; raise ``BenchError`` if it cannot be
    made.  Each tree has one child for the whole run, as a learner has one process: its tables
    fill in the first round, as they would in the first seconds of training."""
    from tacocat_arena.bench.trees import Child, describe_this, this_tree, worktree

    this = this_tree()
    load_before = os.getloadavg()
    mine: dict[str, list[Sample]] = {name: [] for name in (*ADAPTERS, *PEERS)}
    theirs: dict[str, list[Sample]] = {name: [] for name in ADAPTERS}
    with worktree(against) as other, Child(this, __file__, "measure_loop") as child:
        tree = other[1] if other is not None else None
        with Child(tree, __file__, "measure_loop", needed=other is not None) as peer:
            for index in range(rounds):
                for turn, name in enumerate(ADAPTERS):
                    pairs = [(child, mine)] + ([(peer, theirs)] if other is not None else [])
                    if (index + turn) % 2:
                        pairs.reverse()  # each tree goes first in half the turns
                    for runner, into in pairs:
                        into[name].append(Sample(*runner.ask(name, steps, seed + index)))
                for name in PEERS:
                    mine[name].append(Sample(*child.ask(name, steps, seed + index)))
        return EnvsComparison(
            rounds=rounds,
            steps=steps,
            this=describe_this(this),
            other=None if other is None else other[0],
            loops=_figures(ADAPTERS, mine),
            peers=_figures(PEERS, mine),
            other_loops=None if other is None else _figures(ADAPTERS, theirs),
            load_before=load_before,
            load_after=os.getloadavg(),
        )


def _figures(names: tuple[str, ...], samples: dict[str, list[Sample]]) -> tuple[LoopFigures, ...]:
    return tuple(LoopFigures(name, tuple(samples[name])) for name in names)


def render_comparison(comparison: EnvsComparison) -> list[str]:
    """The lines ``bench envs`` prints: a row per loop, medians over the rounds, the ratios."""
    c = comparison
    other = c.other_loops
    lines = [
        f"bench envs: {c.rounds} round(s), each loop >= {c.steps:,} flat steps a round, "
        "CPU time of its own process (one core); medians over the rounds",
        f"this tree: {c.this}",
    ]
    if c.other is not None:
        lines.append(f"against:   {c.other}, a worktree, loops taken in turns")
    lines.append(
        f"load average {_load(c.load_before)} before, {_load(c.load_after)} after, "
        f"on {os.cpu_count()} cores"
    )
    header = f"{'loop':36} {'steps/s':>9} {'us/step':>8}"
    if other is not None:
        header += f" {'against':>9} {'us/step':>8}  ratio (each round)"
    lines += ["", header]
    for index, mine in enumerate(c.loops):
        if mine.missing:
            lines.append(f"{mine.name:36} {mine.missing}")
            continue
        row = f"{mine.name:36} {_rate(mine)}"
        if other is not None:
            theirs = other[index]
            ratios = c.ratios(mine.name)
            if theirs.missing or ratios is None:
                row += f" {theirs.missing or 'not measured'}"
            else:
                median, each = ratios
                rounds = " ".join(f"{r:.2f}" for r in each)
                row += f" {_rate(theirs)}  {median:.2f}x ({rounds})"
        lines.append(row)
    lines += ["", "peers, through the same loops (this tree's process):"]
    ours_by_name = {figures.name: figures for figures in c.loops}
    for peer, compared in zip(c.peers, _COMPARED, strict=True):
        ours = ours_by_name[compared]
        if peer.missing:
            lines.append(f"{peer.name:36} {peer.missing}")
            continue
        versus = ""
        if not ours.missing and peer.name == PEERS[2]:
            share = peer.microseconds_per_step / ours.microseconds_per_step
            versus = f"  {share:.0%} of ours a step: pyspiel's and the loop's own"
        elif not ours.missing:
            versus = f"  ours {ours.steps_per_second / peer.steps_per_second:.2f}x of it"
        lines.append(f"{peer.name:36} {_rate(peer)}{versus}")
    return lines


def _rate(figures: LoopFigures) -> str:
    return f"{figures.steps_per_second:>9,.0f} {figures.microseconds_per_step:>8.1f}"


def _load(load: tuple[float, float, float]) -> str:
    return " ".join(f"{x:.2f}" for x in load)


# -- the loops (run in a child, with the measured tree on the path) ---------------------------


def _timed(loop: Callable[[int, int], int], steps: int, seed: int) -> tuple[int | None, float, str]:
    try:
        start = time.process_time()
        taken = loop(steps, seed)
        return taken, time.process_time() - start, ""
    except ImportError as error:
        return None, 0.0, f"not installed ({error.name})"


def _engine(steps: int, seed: int) -> int:
    from tacocat_arena.play.local import play_game
    from tacocat_arena.play.policies import RandomPolicy

    policies = (RandomPolicy(random.Random(2 * seed)), RandomPolicy(random.Random(2 * seed + 1)))
    decisions = index = 0
    while decisions < steps:
        decisions += play_game(policies, seed=seed * 1_000_003 + index).decisions
        index += 1
    return decisions


def _step_game(steps: int, seed: int) -> int:
    from tacocat_arena.envs.steps import StepGame

    rng = random.Random(seed)
    taken = index = 0
    while taken < steps:
        game = StepGame(seed=seed * 1_000_003 + index)
        index += 1
        while not game.is_over:
            legal = game.legal_ids()
            game.step(legal[int(rng.random() * len(legal))])
            taken += 1
    return taken


def _aec(environment: Any, steps: int, seed: int) -> int:
    """A PettingZoo AEC loop: seeded once, then reset after every game."""
    rng = random.Random(seed)
    environment.reset(seed=seed)
    taken = 0
    while True:
        for _agent in environment.agent_iter():
            observation, _, termination, truncation, _ = environment.last()
            if termination or truncation:
                environment.step(None)
                continue
            legal = observation["action_mask"].nonzero()[0]
            environment.step(int(legal[int(rng.random() * len(legal))]))
            taken += 1
        if taken >= steps:
            return taken
        environment.reset()


def _pettingzoo(steps: int, seed: int) -> int:
    from tacocat_arena.envs.pettingzoo import raw_env

    return _aec(raw_env(), steps, seed)


def _leduc(steps: int, seed: int) -> int:
    from pettingzoo.classic import leduc_holdem_v4

    return _aec(leduc_holdem_v4.raw_env(), steps, seed)


def _gymnasium(steps: int, seed: int) -> int:
    from tacocat_arena.envs.gymnasium import TacocatEnv

    rng = random.Random(seed)
    environment = TacocatEnv(opponent="builtin:random", seat=None)
    _, info = environment.reset(seed=seed)
    taken = 0
    while True:
        terminated = False
        while not terminated:
            legal = info["action_mask"].nonzero()[0]
            _, _, terminated, _, info = environment.step(int(legal[int(rng.random() * len(legal))]))
            taken += 1
        if taken >= steps:
            return taken
        _, info = environment.reset()


def _spiel(name: str, steps: int, seed: int) -> int:
    """An OpenSpiel loop; a chance node with many outcomes (the tacocat deal) is dealt by
    index, one with few (Kuhn's cards) from its listed outcomes."""
    import pyspiel
    from open_spiel.python import games  # noqa: F401  (registers python_kuhn_poker)

    rng = random.Random(seed)
    game = pyspiel.load_game(name)
    deals = game.max_chance_outcomes()
    taken = index = 0
    while taken < steps:
        state = game.new_initial_state()
        index += 1
        while not state.is_terminal():
            if state.is_chance_node():
                if deals > 64:
                    state.apply_action((seed * 1_000_003 + index) % deals)
                else:
                    outcomes = state.chance_outcomes()
                    state.apply_action(outcomes[int(rng.random() * len(outcomes))][0])
                continue
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.random() * len(legal))])
            taken += 1
    return taken


#: The null game's decisions a game (about a tacocat game's flat steps) and legal ids.
_NULL_LENGTH = 50
_NULL_LEGAL = [0, 1, 2]


def _null(steps: int, seed: int) -> int:
    """The floor of the OpenSpiel loop: ``python_null``, registered on first use, whose
    methods do nothing but count (a chance node of 65,536 deals, then 50 decisions)."""
    import pyspiel

    if "python_null" not in pyspiel.registered_names():
        _register_null(pyspiel)
    return _spiel("python_null", steps, seed)


def _register_null(pyspiel: Any) -> None:
    game_type = pyspiel.GameType(
        short_name="python_null",
        long_name="a Python game that does nothing (the bench's floor)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=2,
        min_num_players=2,
        provides_information_state_string=False,
        provides_information_state_tensor=False,
        provides_observation_string=False,
        provides_observation_tensor=False,
        parameter_specification={},
    )
    chance, terminal = int(pyspiel.PlayerId.CHANCE), int(pyspiel.PlayerId.TERMINAL)

    class NullGame(pyspiel.Game):
        def __init__(self, params: Any = None) -> None:
            info = pyspiel.GameInfo(
                num_distinct_actions=len(_NULL_LEGAL),
                max_chance_outcomes=1 << 16,
                num_players=2,
                min_utility=-1.0,
                max_utility=1.0,
                utility_sum=0.0,
                max_game_length=_NULL_LENGTH + 1,
            )
            super().__init__(game_type, info, params or {})

        def new_initial_state(self) -> NullState:
            return NullState(self)

    class NullState(pyspiel.State):
        def __init__(self, game: NullGame) -> None:
            super().__init__(game)
            self.taken = -1

        def current_player(self) -> int:
            taken = self.taken
            return chance if taken < 0 else terminal if taken >= _NULL_LENGTH else taken % 2

        def _legal_actions(self, player: int) -> list[int]:
            return _NULL_LEGAL

        def _apply_action(self, action: int) -> None:
            self.taken += 1

        def is_terminal(self) -> bool:
            return self.taken >= _NULL_LENGTH

        def returns(self) -> list[float]:
            return [0.0, 0.0]

    pyspiel.register_game(game_type, NullGame)


def _openspiel(steps: int, seed: int) -> int:
    import tacocat_arena.envs.openspiel  # noqa: F401  (registers python_tacocat)

    return _spiel("python_tacocat", steps, seed)


def _kuhn(steps: int, seed: int) -> int:
    return _spiel("python_kuhn_poker", steps, seed)


_LOOPS: dict[str, Callable[[int, int], int]] = {
    ADAPTERS[0]: _engine,
    ADAPTERS[1]: _step_game,
    ADAPTERS[2]: _pettingzoo,
    ADAPTERS[3]: _gymnasium,
    ADAPTERS[4]: _openspiel,
    PEERS[0]: _leduc,
    PEERS[1]: _kuhn,
    PEERS[2]: _null,
}


def measure_loop(name: str, steps: int, seed: int) -> tuple[int | None, float, str]:
    """Run loop ``name`` once (in a child, see ``trees.CHILD``): steps, CPU seconds, note."""
    return _timed(_LOOPS[name], steps, seed)
