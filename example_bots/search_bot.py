"""A bot that searches: Monte Carlo rollouts over sampled opponent hands.

For each decision the bot tries every candidate action in a few imagined worlds and keeps
the action that won the most rounds there.  One imagined world (a *determinization*) is:

  1. the cards this seat has not seen (the deck, less its own hand, less this round's public
     discards) shuffled, dealt into an opponent hand of the right size and a draw pile;
  2. an engine position built from it with ``Game.from_position``, at the point of the round
     the decision is about (for a defence: the opponent's attack is applied first);
  3. the candidate action applied, and the rest of the ROUND played out by ``GreedyPolicy``
     for both seats (fast and deterministic), scoring +1 for a round won, -1 lost, 0 tied.

Every candidate is tried in the same worlds, so luck cancels out of the comparison.  The
``budget`` is the number of rollouts per decision (about 22 ms of CPU at the default 150,
as ``tacocat-arena bench search`` measures); the ``seed`` makes the bot reproducible.
Candidates: every legal attack and duel value, the distinct outcomes of the possible
defences, and a handful of replace ideas.  The greedy choice is always listed first, so it
wins ties.

Run it:  python example_bots/search_bot.py
"""

import random
from collections import Counter
from itertools import islice

# The SDK first: it defers what a bot never uses before the engine can load it.
from tacocat_bot import Bot, run

# isort: split

from tacocat_arena.engine import (
    Attack,
    DecisionKind,
    Defend,
    Duel,
    Game,
    Replace,
    build_view,
    enumerate_defences,
)
from tacocat_arena.play.policies import GreedyPolicy

GREEDY = GreedyPolicy()


class SearchBot(Bot):
    name = "search"

    def __init__(self, budget: int = 150, seed: int | None = None) -> None:
        self.budget = budget
        self.rng = random.Random(seed)

    # -- the four decisions: list candidates, let the search pick ----------------------------
    def replace(self, view):
        return self.search(view, replace_candidates(view)).cards

    def duel(self, view):
        return self.search(view, [Duel(value) for value in view.legal.duel_values]).card

    def attack(self, view):
        return self.search(view, [Attack(cards) for cards in view.legal.attacks]).cards

    def defend(self, view):
        return self.search(view, defence_candidates(view)).answers

    # -- the search --------------------------------------------------------------------------
    def search(self, view, candidates):
        """The candidate with the best total score over the same sampled worlds."""
        candidates = list(dict.fromkeys([GREEDY.act(view), *candidates]))  # greedy first
        if len(candidates) == 1:
            return candidates[0]
        totals = [0] * len(candidates)
        for _ in range(max(2, self.budget // len(candidates))):
            opponent_hand, draw_pile = self.sample(view)
            for index, action in enumerate(candidates):
                totals[index] += playout(view, opponent_hand, draw_pile, action)
        return candidates[totals.index(max(totals))]

    def sample(self, view):
        """A random opponent hand and draw pile, consistent with what this seat knows."""
        unseen = Counter(view.ruleset.cards())
        unseen.subtract(view.hand)
        unseen.subtract(view.discards)  # this round's public cards, the attack included
        cards = list(unseen.elements())
        self.rng.shuffle(cards)
        size = view.opponent_hand_size
        return tuple(cards[:size]), tuple(cards[size:])


def playout(view, opponent_hand, draw_pile, action):
    """Apply ``action`` in one imagined world, play out the round: +1 won, -1 lost, 0 tie."""
    me, opponent = view.seat, view.opponent
    hand, phase, attacker = view.hand, view.kind, me
    if phase is DecisionKind.DEFEND:  # rebuild the moment before the opponent's attack
        opponent_hand = opponent_hand + view.current_attack
        phase, attacker = DecisionKind.ATTACK, opponent
    elif phase is DecisionKind.REPLACE and any(e["type"] == "replace" for e in view.events):
        # The opponent replaced first; a position cannot start between the two replaces,
        # so replace by hand (draw from the sampled pile) and start at the duel.
        kept = list(hand)
        for card in action.cards:
            kept.remove(card)
        count = len(action.cards)
        hand, draw_pile = tuple(kept) + draw_pile[:count], draw_pile[count:]
        phase, action = DecisionKind.DUEL, None
    game = Game.from_position(
        (hand, opponent_hand) if me == 0 else (opponent_hand, hand),
        ruleset=view.ruleset,
        draw_pile=draw_pile,
        tacocat=view.tacocat,
        covered=tuple(i for i, covered in enumerate(view.covered) if covered),
        phase=phase,
        attacker=attacker,
    )
    if view.kind is DecisionKind.DEFEND:
        game.apply(opponent, Attack(view.current_attack))
    if action is not None:
        game.apply(me, action)
    while not game.round_results:  # until this round ends
        views = [build_view(game, seat) for seat in sorted(game.pending)]  # both, if together
        for seat_view in views:
            game.apply(seat_view.seat, GREEDY.act(seat_view))
    winner = game.round_results[-1].winner
    return 0 if winner is None else (1 if winner == me else -1)


def replace_candidates(view):
    """A few replace ideas: nothing, the middle cards, the high cards, all but the lowest..."""
    lowest, *rest = view.hand
    ideas = [
        [],
        [card for card in rest if 5 <= card <= 8],  # the middle: bad to fight, bad to keep
        [card for card in rest if card >= 9],  # the high cards: hunt for low ones
        [card for card in rest if card >= 5],
        [card for card in rest if card >= 3],
        rest,  # everything but the lowest card
    ]
    return [Replace(tuple(idea[: view.legal.max_replace])) for idea in ideas]


def defence_candidates(view):
    """One defence per distinct outcome (the hand left, and who wins the trick)."""
    attack, hand = view.current_attack, view.hand
    outcomes = {}
    for answers in islice(enumerate_defences(attack, hand), 2000):  # huge for long jumbos
        rest = list(hand)
        for answer in answers:
            if answer is not None:
                rest.remove(answer)
        sacrifices = answers.count(None)
        outcomes.setdefault((sacrifices > 0, tuple(rest[sacrifices:])), Defend(answers))
    return list(outcomes.values())


if __name__ == "__main__":
    run(SearchBot())
