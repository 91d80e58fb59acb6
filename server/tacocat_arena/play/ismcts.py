"""Information-set Monte Carlo tree search (Cowling, Powley and Whitehouse, 2012) on the engine.

Each simulation samples a world consistent with what the searching seat knows
(``worlds.sample_world``), walks down a tree whose nodes are information sets, and plays the
rest of the round out with ``GreedyPolicy`` for both seats.  A node is keyed by what the seat
to move sees (its hand, its decision and this round's events as ``build_view`` shows them),
so the opponent's nodes hold only what the opponent could know, and in a simultaneous
decision the second seat's node cannot depend on the first seat's hidden choice: the engine
keeps a committed choice out of every view until both have committed (so the searching seat
may commit first in every simulation, whatever its seat).  Within a node the
actions are chosen by UCB1 on the round's result (+1 won, -1 lost, 0 tied, for the seat to
move); the most visited action at the root is played.

Candidate actions: every duel value and every attack; one defence per distinct outcome (the
cards kept and who wins the trick); and for the replace, the ``replace_ideas`` below.  The
round is the horizon because the whole deck is reshuffled after it (M4).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from itertools import islice

from tacocat_arena.engine import (
    Action,
    Attack,
    DecisionKind,
    Defend,
    Duel,
    Game,
    Replace,
    SeatView,
    build_view,
    enumerate_defences,
)
from tacocat_arena.play.policies import GreedyPolicy
from tacocat_arena.play.worlds import sample_world

GREEDY = GreedyPolicy()
_DEFENCE_LIMIT = 2000  # distinct defences enumerated per node (long jumbos have thousands)


class _Node:
    """One information set: its candidate actions and their visit counts and value sums."""

    __slots__ = ("actions", "visits", "values", "total", "untried")

    def __init__(self, actions: Sequence[Action], rng: random.Random) -> None:
        self.actions = list(actions)
        self.visits = [0] * len(self.actions)
        self.values = [0.0] * len(self.actions)
        self.total = 0
        self.untried = list(range(len(self.actions)))
        rng.shuffle(self.untried)

    def choose(self, uct: float) -> int:
        """An untried action first, then UCB1."""
        if self.untried:
            return self.untried.pop()
        log_total = math.log(self.total)
        best, best_score = 0, -math.inf
        for index, visits in enumerate(self.visits):
            score = self.values[index] / visits + uct * math.sqrt(log_total / visits)
            if score > best_score:
                best, best_score = index, score
        return best


class IsmctsPolicy:
    """Information-set MCTS over sampled worlds; ``iterations`` simulations per decision."""

    def __init__(
        self, iterations: int = 600, *, uct: float = 0.7, rng: random.Random | None = None
    ) -> None:
        if iterations < 1:
            raise ValueError(f"iterations must be at least 1, got {iterations}")
        self.iterations = iterations
        self.uct = uct
        self.rng = rng if rng is not None else random.Random(0)

    def act(self, view: SeatView) -> Action:
        """The most visited root action after ``iterations`` simulations."""
        if view.kind is None:
            raise ValueError("no decision is pending for this view")
        root_actions = candidates(view)
        if len(root_actions) == 1:
            return root_actions[0]
        root = _Node(root_actions, self.rng)
        tree: dict[tuple[object, ...], _Node] = {}
        for _ in range(self.iterations):
            world = sample_world(view, self.rng, whole_game=False)
            self._simulate(world, root, view.seat, world.round, tree)
        return root.actions[max(range(len(root.actions)), key=root.visits.__getitem__)]

    def _simulate(
        self,
        game: Game,
        root: _Node,
        me: int,
        round_number: int,
        tree: dict[tuple[object, ...], _Node],
    ) -> None:
        """One simulation from a world at the root's moment: every world starts in the root
        (the view's information set), whatever its round is numbered (see ``sample_world``)."""
        index = root.choose(self.uct)
        path: list[tuple[_Node, int, int]] = [(root, index, me)]
        game.apply(me, root.actions[index])
        while game.outcome is None and game.round == round_number:
            # In a simultaneous decision the searching seat commits first: the other seat's
            # view does not show the commitment (see above), and the root stays the root.
            pending = game.pending
            seat = me if me in pending else min(pending)
            view = build_view(game, seat)
            key = information_key(view)
            node = tree.get(key)
            if node is None:
                tree[key] = _Node(candidates(view), self.rng)
                break
            index = node.choose(self.uct)
            path.append((node, index, seat))
            game.apply(seat, node.actions[index])
        winner = _play_out_round(game, round_number)
        for node, index, seat in path:
            node.total += 1
            node.visits[index] += 1
            node.values[index] += 0.0 if winner is None else (1.0 if winner == seat else -1.0)


def _play_out_round(game: Game, round_number: int) -> int | None:
    """Finish the round with the greedy policy for both seats; the round's winner."""
    while game.outcome is None and game.round == round_number:
        views = [build_view(game, seat) for seat in sorted(game.pending)]
        for view in views:
            game.apply(view.seat, GREEDY.act(view))
    for result in reversed(game.round_results):
        if result.round == round_number:
            return result.winner
    return None


def information_key(view: SeatView) -> tuple[object, ...]:
    """What the seat to move knows of this round, as a hashable key (its information set)."""
    return (
        view.seat,
        view.kind,
        view.max_replace,
        view.tacocat,
        view.covered,
        tuple(tuple(event.values()) for event in view.events),
    )


def candidates(view: SeatView) -> list[Action]:
    """The actions the search considers for ``view``'s decision (greedy's first)."""
    kind = view.kind
    options: list[Action]
    if kind is DecisionKind.DUEL:
        options = [Duel(value) for value in sorted(set(view.hand))]
    elif kind is DecisionKind.ATTACK:
        options = [Attack(cards) for cards in _legal_attacks(view)]
    elif kind is DecisionKind.DEFEND:
        options = defence_outcomes(view)
    else:
        options = [Replace(cards) for cards in replace_ideas(view)]
    return list(dict.fromkeys([GREEDY.act(view), *options]))


def _legal_attacks(view: SeatView) -> tuple[tuple[int, ...], ...]:
    legal = view.legal
    return legal.attacks if legal is not None else ()


def replace_ideas(view: SeatView) -> list[tuple[int, ...]]:
    """Replace candidates: nothing; every "all cards from value v up" (keeping the lowest);
    the middle cards; and everything but the lowest, all capped at ``max_replace`` (R2)."""
    lowest, *rest = view.hand
    limit = view.max_replace
    ideas = [(), tuple(c for c in rest if 5 <= c <= 8), tuple(rest)]
    ideas += [tuple(c for c in rest if c >= threshold) for threshold in sorted(set(rest))]
    capped = []
    for idea in ideas:
        # over the cap: drop the lowest of the idea first (the high cards matter most to lose)
        capped.append(idea[len(idea) - limit :] if len(idea) > limit else idea)
    return list(dict.fromkeys(tuple(sorted(idea)) for idea in capped))


def defence_outcomes(view: SeatView) -> list[Action]:
    """One defence per distinct outcome: the cards kept and whether the trick is lost."""
    attack, hand = view.current_attack, view.hand
    outcomes: dict[tuple[bool, tuple[int, ...]], Action] = {}
    for answers in islice(enumerate_defences(attack, hand), _DEFENCE_LIMIT):
        rest = list(hand)
        for answer in answers:
            if answer is not None:
                rest.remove(answer)
        sacrifices = answers.count(None)
        outcomes.setdefault((sacrifices > 0, tuple(rest[sacrifices:])), Defend(answers))
    return list(outcomes.values())
