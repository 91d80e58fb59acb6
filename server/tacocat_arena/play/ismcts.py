"""Information-set Monte Carlo tree search (Cowling, Powley and Whitehouse, 2012) on the engine.

The tree's nodes are the information sets of the searching seat (single-observer ISMCTS).
Each simulation deals a world consistent with what the seat knows (``worlds.RoundWorlds``),
walks down the tree choosing actions by UCB1, adds one node, and plays the rest of the round
out with the greedy policy for both seats; the round's result (+1 won, -1 lost, 0 tied) is
credited to every action on the path, from the point of view of the seat that chose it.  A
node is keyed by what the searching seat has seen since its parent (public events and its
own draws), so two simulations share a node exactly when the seat could not tell them apart;
its candidate actions are those of its hand, so the tree searches the seat's later decisions
of the round too, where the search bot (``example_bots/search_bot.py``) plays them greedily.

Three choices, each measured against the search bot (figures in docs/sdk.md):

- ``paired`` (default): at the root every candidate is tried in the same worlds (each world
  dealt once, then copied for each root action), as the search bot does, and the best total
  wins; the luck of the deal cancels out of the root's comparison.  Below the root, UCB1.
  Otherwise UCB1 at the root too, and the most visited action.
- ``greedy_opponent`` (default): the opponent's decisions inside the tree are the greedy
  policy's, like its playout.  Otherwise they are nodes of the same tree keyed by the
  searching seat's information set, with candidates from the hand the opponent holds in
  that world and availability counts in UCB1 (the paper's SO-ISMCTS).
- ``kept_lowest`` (off by default): worlds in which the opponent kept its lowest card when it
  replaced (``worlds.RoundWorlds``).

In a simultaneous decision the searching seat commits first in every simulation: the engine
keeps a committed choice out of every view and log until both have committed, so nothing the
opponent's choice depends on can show the commitment.

Candidate actions: every duel value and every attack; one defence per distinct outcome (the
cards kept and who wins the trick); and for the replace, the ``replace_ideas`` below.  The
round is the horizon because the whole deck is reshuffled after it (M4), and a round has no
margin: the next position depends on the winner alone, so +1/-1 per round already orders the
outcomes as the game does (a tie replays the same position, worth about the mean of the two).

Speed, all of it spent on iterations: a world is a copy of one template with the hidden cards
dealt anew, not a replay of the round; no view is built inside a simulation (keys read the
seat's event log, the candidates and the greedy playout read the game's hands), and the
candidates and greedy choices are cached per hand.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from functools import lru_cache
from itertools import islice
from typing import cast

from tacocat_arena.engine import (
    Action,
    Attack,
    Card,
    DecisionKind,
    Defend,
    Duel,
    Game,
    Replace,
    SeatView,
    enumerate_defences,
    legal_attacks,
)
from tacocat_arena.play.policies import greedy_action
from tacocat_arena.play.worlds import RoundWorlds

_DEFENCE_LIMIT = 2000  # distinct defences enumerated per node (long jumbos have thousands)
_REPLACE = DecisionKind.REPLACE


class _Node:
    """One information set: per action its visits, value sum and availability count, and the
    information sets that follow it (keyed by what the searching seat sees next)."""

    __slots__ = ("stats", "children")

    def __init__(self) -> None:
        self.stats: dict[Action, list[float]] = {}  # action -> [visits, value, available]
        self.children: dict[tuple[object, ...], _Node] = {}

    def choose(self, actions: Sequence[Action], uct: float, rng: random.Random) -> Action:
        """An available action never tried first (at random), then UCB1 over availability."""
        stats = self.stats
        untried = []
        for action in actions:
            entry = stats.get(action)
            if entry is None:
                untried.append(action)
            else:
                entry[2] += 1
        if untried:
            action = untried[int(rng.random() * len(untried))]
            stats[action] = [0.0, 0.0, 1.0]
            return action
        best, best_score = actions[0], -math.inf
        log, sqrt = math.log, math.sqrt
        for action in actions:
            visits, value, available = stats[action]
            score = value / visits + uct * sqrt(log(available) / visits)
            if score > best_score:
                best, best_score = action, score
        return best

    def most_visited(self) -> Action:
        return max(self.stats, key=lambda action: self.stats[action][0])


class IsmctsPolicy:
    """Information-set MCTS over sampled worlds; ``iterations`` simulations per decision."""

    def __init__(
        self,
        iterations: int = 600,
        *,
        uct: float = 0.7,
        paired: bool = True,
        greedy_opponent: bool = True,
        kept_lowest: bool = False,
        rng: random.Random | None = None,
    ) -> None:
        if iterations < 1:
            raise ValueError(f"iterations must be at least 1, got {iterations}")
        self.iterations = iterations
        self.uct = uct
        self.paired = paired
        self.greedy_opponent = greedy_opponent
        self.kept_lowest = kept_lowest
        self.rng = rng if rng is not None else random.Random(0)

    def act(self, view: SeatView) -> Action:
        """The root action of the best value (``paired``) or the most visited one, after
        ``iterations`` simulations."""
        if view.kind is None:
            raise ValueError("no decision is pending for this view")
        root_actions = candidates(view)
        if len(root_actions) == 1:
            return root_actions[0]
        root = _Node()
        worlds = RoundWorlds(view, self.rng, kept_lowest=self.kept_lowest)
        me = view.seat
        if not self.paired:
            for _ in range(self.iterations):
                self._simulate(worlds.sample(), root, root_actions, me)
            return root.most_visited()
        self._paired(view, root_actions, root, worlds)
        stats = root.stats  # every action seen equally often: greedy's (first) wins ties
        return max(root_actions, key=lambda action: stats[action][1])

    def evaluate(
        self,
        view: SeatView,
        actions: Sequence[Action],
        known: tuple[tuple[Card, ...], tuple[Card, ...]] | None = None,
    ) -> dict[Action, list[float]]:
        """Each of ``actions`` (legal for ``view``) tried in the same worlds, as ``act`` tries
        its candidates when ``paired``: per action, the round's result for the seat in each
        world, in the order the worlds were dealt (+1 won, -1 lost, 0 tied).  The search
        below the root is the same tree as ``act``'s; ``analyze`` reads its values.  ``known``
        (the opponent's sorted hand and the draw pile): every world is that one, the true deal,
        for the figure *with hindsight*; a bot never has it."""
        if view.kind is None:
            raise ValueError("no decision is pending for this view")
        if not actions:
            raise ValueError("no action to evaluate")
        worlds = RoundWorlds(view, self.rng, kept_lowest=self.kept_lowest)
        worlds.known = known
        return self._paired(view, list(dict.fromkeys(actions)), _Node(), worlds)

    def _paired(
        self, view: SeatView, root_actions: Sequence[Action], root: _Node, worlds: RoundWorlds
    ) -> dict[Action, list[float]]:
        """Every root action simulated once in each dealt world; each one's results."""
        results: dict[Action, list[float]] = {action: [] for action in root_actions}
        me = view.seat
        for _ in range(max(2, self.iterations // len(root_actions))):
            hidden = worlds.deal()
            for action in root_actions:
                value = self._simulate(worlds.build(*hidden), root, root_actions, me, action)
                results[action].append(value)
        return results

    def _simulate(
        self,
        game: Game,
        root: _Node,
        root_actions: Sequence[Action],
        me: int,
        first: Action | None = None,
    ) -> float:
        """One simulation in a world at the root's moment: ``first`` (or UCB1's choice at the
        root), down the tree, one new node, then the greedy playout to the round's end (the
        world's game ends with its round); the round's result for ``me``."""
        uct, rng = self.uct, self.rng
        seen = game.seen[me]  # what this seat has seen since the root, as the engine logs it
        if first is None:
            action = root.choose(root_actions, uct, rng)
        else:
            action = first
            root.stats.setdefault(action, [0.0, 0.0, 0.0])
        path: list[tuple[_Node, Action, int]] = [(root, action, me)]
        game.apply(me, action)
        node, mark, greedy_opponent = root, 0, self.greedy_opponent
        while game.outcome is None:
            seat = me if me in game.pending else 1 - me
            if greedy_opponent and seat != me:
                game.apply(seat, _greedy(game, seat))  # the opponent modelled, not searched
                continue
            key = (seat, game.phase, tuple([tuple(event.values()) for event in seen[mark:]]))
            mark = len(seen)
            child = node.children.get(key)
            expanded = child is None
            if child is None:
                node.children[key] = child = _Node()
            node = child
            action = node.choose(_game_candidates(game, seat), uct, rng)
            path.append((node, action, seat))
            game.apply(seat, action)
            if expanded:
                break  # one new node per simulation, then the playout
        while game.outcome is None:
            for seat in sorted(game.pending):
                game.apply(seat, _greedy(game, seat))
        winner = game.round_results[-1].winner
        for node, action, seat in path:
            entry = node.stats[action]
            entry[0] += 1
            entry[1] += 0.0 if winner is None else (1.0 if winner == seat else -1.0)
        return 0.0 if winner is None else (1.0 if winner == me else -1.0)


def _greedy(game: Game, seat: int) -> Action:
    kind = cast(DecisionKind, game.phase)  # a game in play always has a phase
    limit = game.replace_limit(seat) if kind is _REPLACE else 0
    return greedy_action(kind, game.hands[seat], limit, game.current_attack)


def _game_candidates(game: Game, seat: int) -> tuple[Action, ...]:
    kind = cast(DecisionKind, game.phase)  # a game in play always has a phase
    limit = game.replace_limit(seat) if kind is _REPLACE else 0
    return _candidates(kind, game.hands[seat], limit, game.current_attack)


def candidates(view: SeatView) -> list[Action]:
    """The actions the search considers for ``view``'s decision (greedy's first)."""
    if view.kind is None:
        raise ValueError("no decision is pending for this view")
    hand, attack = tuple(view.hand), tuple(view.current_attack)
    return list(_candidates(view.kind, hand, view.max_replace, attack))


@lru_cache(maxsize=65536)
def _candidates(
    kind: DecisionKind, hand: tuple[Card, ...], max_replace: int, attack: tuple[Card, ...]
) -> tuple[Action, ...]:
    options: list[Action]
    if kind is DecisionKind.DUEL:
        options = [Duel(value) for value in sorted(set(hand))]
    elif kind is DecisionKind.ATTACK:
        options = [Attack(cards) for cards in legal_attacks(hand)]
    elif kind is DecisionKind.DEFEND:
        options = defence_outcomes(attack, hand)
    else:
        options = [Replace(cards) for cards in replace_ideas(hand, max_replace)]
    greedy = greedy_action(kind, hand, max_replace, attack)
    return tuple(dict.fromkeys([greedy, *options]))


def replace_ideas(hand: tuple[Card, ...], limit: int) -> list[tuple[Card, ...]]:
    """Replace candidates: nothing; every "all cards from value v up" (keeping the lowest);
    the middle cards; and everything but the lowest, all capped at ``limit`` (R2)."""
    lowest, *rest = hand
    ideas = [(), tuple(c for c in rest if 5 <= c <= 8), tuple(rest)]
    ideas += [tuple(c for c in rest if c >= threshold) for threshold in sorted(set(rest))]
    capped = []
    for idea in ideas:
        # over the cap: drop the lowest of the idea first (the high cards matter most to lose)
        capped.append(idea[len(idea) - limit :] if len(idea) > limit else idea)
    return list(dict.fromkeys(tuple(sorted(idea)) for idea in capped))


def defence_outcomes(attack: tuple[Card, ...], hand: tuple[Card, ...]) -> list[Action]:
    """One defence per distinct outcome: the cards kept and whether the trick is lost."""
    outcomes: dict[tuple[bool, tuple[Card, ...]], Action] = {}
    for answers in islice(enumerate_defences(attack, hand), _DEFENCE_LIMIT):
        rest = list(hand)
        for answer in answers:
            if answer is not None:
                rest.remove(answer)
        sacrifices = answers.count(None)
        outcomes.setdefault((sacrifices > 0, tuple(rest[sacrifices:])), Defend(answers))
    return list(outcomes.values())
