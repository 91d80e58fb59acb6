"""Information-set Monte Carlo tree search (Cowling, Powley and Whitehouse, 2012) on the engine.

This is their single-observer ISMCTS (SO-ISMCTS): the tree's nodes are the information sets
of the searching seat.  Each simulation samples a world consistent with what the seat knows
(``worlds.sample_world``), walks down the tree choosing actions by UCB1, and plays the rest
of the round out with ``GreedyPolicy`` for both seats; the round's result (+1 won, -1 lost,
0 tied) is credited to every action on the path, from the point of view of the seat that
chose it.  The seat's own decisions are keyed by its view (``information_key``); the
opponent's decisions by the searching seat's view at that moment, since that is all it
knows of them, and the opponent's candidate actions are those legal with the hand it holds
in this world, so UCB1 counts, for each action, the visits in which it was available
("availability", the paper's fix for actions that are legal in some worlds only).

In a simultaneous decision the searching seat commits first in every simulation: the engine
keeps a committed choice out of every view until both have committed, so the opponent's node
(keyed by a view that does not show the commitment) cannot depend on it.  The most visited
action at the root is played.

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
    """One information set: per action its visits, value sum and availability count."""

    __slots__ = ("stats",)

    def __init__(self) -> None:
        self.stats: dict[Action, list[float]] = {}  # action -> [visits, value, available]

    def choose(self, actions: Sequence[Action], uct: float, rng: random.Random) -> Action:
        """An available action never tried first (at random), then UCB1 over availability."""
        stats = self.stats
        untried = [action for action in actions if action not in stats]
        for action in actions:
            if action in stats:
                stats[action][2] += 1
        if untried:
            action = untried[int(rng.random() * len(untried))]
            stats[action] = [0.0, 0.0, 1.0]
            return action
        best, best_score = actions[0], -math.inf
        for action in actions:
            visits, value, available = stats[action]
            score = value / visits + uct * math.sqrt(math.log(available) / visits)
            if score > best_score:
                best, best_score = action, score
        return best

    def most_visited(self) -> Action:
        return max(self.stats, key=lambda action: self.stats[action][0])


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
        root = _Node()
        tree: dict[tuple[object, ...], _Node] = {}
        for _ in range(self.iterations):
            world = sample_world(view, self.rng, whole_game=False)
            self._simulate(world, root, root_actions, view.seat, tree)
        return root.most_visited()

    def _simulate(
        self,
        game: Game,
        root: _Node,
        root_actions: Sequence[Action],
        me: int,
        tree: dict[tuple[object, ...], _Node],
    ) -> None:
        """One simulation from a world at the root's moment: every world starts in the root
        (the view's information set), whatever its round is numbered (see ``sample_world``)."""
        round_number = game.round
        action = root.choose(root_actions, self.uct, self.rng)
        path: list[tuple[_Node, Action, int]] = [(root, action, me)]
        game.apply(me, action)
        while game.outcome is None and game.round == round_number:
            pending = game.pending
            seat = me if me in pending else min(pending)
            mine = build_view(game, me)
            key = (seat == me, *information_key(mine))
            node = tree.get(key)
            if node is None:
                tree[key] = node = _Node()
                expanded = True
            else:
                expanded = False
            view = mine if seat == me else build_view(game, seat)
            action = node.choose(candidates(view), self.uct, self.rng)
            path.append((node, action, seat))
            game.apply(seat, action)
            if expanded:
                break  # one new node per simulation, then the playout
        winner = _play_out_round(game, round_number)
        for node, action, seat in path:
            entry = node.stats[action]
            entry[0] += 1
            entry[1] += 0.0 if winner is None else (1.0 if winner == seat else -1.0)


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
