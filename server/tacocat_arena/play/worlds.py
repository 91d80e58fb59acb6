"""Sampled worlds: engine games consistent with everything one seat knows (determinizations).

A search that cannot see the opponent's hand plays in imagined worlds instead.  Since every
round reshuffles the whole deck (M4), only this round's hidden cards matter: the opponent's
hand, what it drew and the order of the draw pile.  ``sample_world`` deals them at random
among the cards the seat has not seen, under every constraint the round's public events put
on them (a sacrifice is the lowest card not named, P4, so the opponent's hand holds nothing
lower than a card it sacrificed), then rebuilds the round from its start with
``Game.from_position`` and replays the round's actions.  The world thus reaches the very
decision the view is pending on (the second replace of R2 included), through the engine's
own rules, and the seat's view of it has the same hand and the same events.
"""

from __future__ import annotations

import random
from collections import Counter

from tacocat_arena.engine import (
    Action,
    Attack,
    Card,
    Defend,
    Duel,
    Game,
    Replace,
    SeatView,
)


def sample_world(view: SeatView, rng: random.Random, *, whole_game: bool = True) -> Game:
    """A game at ``view``'s moment whose hidden cards are drawn at random, consistent with the
    view (I1); its later rounds are dealt from a fresh random seed.

    ``whole_game=False`` is for a search that stops at the end of this round: the world then
    counts its rounds from 1 (``Game.from_position`` need not draw the decks of the rounds
    before, which costs a shuffle each), so its views differ from the seat's in ``round``.
    """
    me, opponent = view.seat, 1 - view.seat
    events = view.events
    my_start: tuple[Card, ...] = events[0]["hand"]
    my_drawn: tuple[Card, ...] = ()
    opponent_discards: tuple[Card, ...] = ()
    opponent_played: list[Card] = []
    floor: Card | None = None  # the opponent holds nothing lower (it sacrificed this)
    replacers: list[int] = []
    actions: list[tuple[int, Action]] = []
    for event in events[1:]:
        kind = event["type"]
        if kind == "replace":
            seat = event["seat"]
            actions.append((seat, Replace(event["discarded"])))
            replacers.append(seat)
            if seat == me:
                my_drawn = event["drawn"]
            else:
                opponent_discards = event["discarded"]
        elif kind == "duel":
            cards = event["cards"]
            actions.append((0, Duel(cards[0])))
            actions.append((1, Duel(cards[1])))
            opponent_played.append(cards[opponent])
        elif kind == "attack":
            actions.append((event["seat"], Attack(event["cards"])))
            if event["seat"] == opponent:
                opponent_played.extend(event["cards"])
        elif kind == "defend":
            actions.append((event["seat"], Defend(event["answers"])))
            if event["seat"] == opponent:
                opponent_played.extend(a for a in event["answers"] if a is not None)
                opponent_played.extend(event["sacrificed"])
                if event["sacrificed"]:
                    highest = max(event["sacrificed"])
                    floor = highest if floor is None else max(floor, highest)
    unseen = Counter(view.ruleset.cards())
    for known in (my_start, my_drawn, opponent_discards, opponent_played):
        unseen.subtract(known)
    cards = list(unseen.elements())
    rng.shuffle(cards)
    size = view.opponent_hand_size
    if floor is None:
        hand, pile_rest = cards[:size], cards[size:]
    else:
        eligible = [index for index, card in enumerate(cards) if card >= floor][:size]
        hand = [cards[index] for index in eligible]
        taken = set(eligible)
        pile_rest = [card for index, card in enumerate(cards) if index not in taken]
    # the remaining cards keep their shuffled order: the draw pile below them is uniform
    after_replace = hand + opponent_played
    if opponent_discards:
        rng.shuffle(after_replace)
    opponent_drawn = after_replace[: len(opponent_discards)]
    opponent_start = after_replace[len(opponent_discards) :] + list(opponent_discards)
    draws: list[Card] = []
    for seat in replacers:
        draws.extend(my_drawn if seat == me else opponent_drawn)
    hands = (my_start, tuple(opponent_start))
    game = Game.from_position(
        hands if me == 0 else (hands[1], hands[0]),
        ruleset=view.ruleset,
        draw_pile=tuple(draws + pile_rest),
        tacocat=view.tacocat,
        covered=tuple(i for i, covered in enumerate(view.covered) if covered),
        round_number=view.round if whole_game else 1,
        seed=rng.getrandbits(64),
    )
    for seat, action in actions:
        game.apply(seat, action)
    return game


class RoundWorlds:
    """Many worlds at one view's moment, for a search that stops at the end of this round.

    ``sample_world`` rebuilds the round from its start and replays it, which costs more than
    the rest of a simulation; but at the view's moment a world differs from another only in
    the opponent's hand and the draw pile.  So one world is built (the template) and each
    ``sample`` copies it with those dealt anew, uniformly among the cards the seat has not
    seen and under the same constraint (nothing below a card the opponent sacrificed).
    The copies are numbered the ruleset's last round, so the engine ends the game when the
    round ends instead of dealing a next round that nothing would read; each copy's event log
    and seat logs start empty at the view's moment.

    ``kept_lowest`` reads one more thing into the opponent's replace: that it kept its lowest
    card (the showdown card; no built-in bot ever discards it), so the cards it kept held one
    no higher than the lowest it discarded.  Worlds are then drawn by rejection: the hand as
    above, the cards it drew among those it has held since, retried (up to
    ``KEPT_LOWEST_TRIES`` times) until what it kept fits.
    """

    KEPT_LOWEST_TRIES = 100

    #: The one world to deal every time, or None to deal them at random: the true hidden
    #: cards, for ``analyze``'s figure *with hindsight* (never a bot's search).
    known: tuple[tuple[Card, ...], tuple[Card, ...]] | None = None

    def __init__(self, view: SeatView, rng: random.Random, *, kept_lowest: bool = False) -> None:
        self.rng = rng
        self.opponent = 1 - view.seat
        unseen = Counter(view.ruleset.cards())
        unseen.subtract(view.hand)
        unseen.subtract(view.discards)  # this round's public cards, the attack included
        self.unseen = list(unseen.elements())
        self.size = view.opponent_hand_size
        self.floor = _sacrifice_floor(view)
        discarded, self.played = _opponent_replace(view)
        # replacing the whole hand keeps nothing: then there is nothing to read
        held = self.size + len(self.played)
        self.lowest_discard = min(discarded) if kept_lowest and 0 < len(discarded) < held else None
        self.discarded = len(discarded)
        template = sample_world(view, rng, whole_game=False)
        template.round = view.ruleset.max_rounds
        template.events, template.actions, template.seen = [], [], ([], [])
        self._template = template

    def sample(self) -> Game:
        """A fresh world: the opponent's hand and the draw pile dealt anew."""
        return self.build(*self.deal())

    def deal(self) -> tuple[tuple[Card, ...], tuple[Card, ...]]:
        """The hidden cards of one world: the opponent's sorted hand and the draw pile."""
        if self.known is not None:
            return self.known
        lowest_discard = self.lowest_discard
        if lowest_discard is None:
            return self._deal()
        count, shuffle = self.discarded, self.rng.shuffle
        for _ in range(self.KEPT_LOWEST_TRIES):
            hand, pile = self._deal()
            held = [*hand, *self.played]  # its hand just after the replace
            shuffle(held)
            if min(held[count:]) <= lowest_discard:  # held[:count] stand for what it drew
                break
        return hand, pile

    def _deal(self) -> tuple[tuple[Card, ...], tuple[Card, ...]]:
        cards = self.unseen[:]
        self.rng.shuffle(cards)
        size, floor = self.size, self.floor
        if floor is None:
            hand, pile = cards[:size], cards[size:]
        else:
            hand, pile = [], []
            for card in cards:
                (hand if card >= floor and len(hand) < size else pile).append(card)
        hand.sort()
        return tuple(hand), tuple(pile)

    def build(self, hand: tuple[Card, ...], pile: tuple[Card, ...]) -> Game:
        """The world at the view's moment in which the opponent holds ``hand`` over ``pile``."""
        game = self._template.copy(deals=False)
        game.hands[self.opponent] = hand
        game.draw_pile = list(pile)
        return game


def _opponent_replace(view: SeatView) -> tuple[tuple[Card, ...], list[Card]]:
    """What the opponent discarded this round, and every card it has played since."""
    opponent = 1 - view.seat
    discarded: tuple[Card, ...] = ()
    played: list[Card] = []
    for event in view.events:
        kind = event["type"]
        if kind == "replace" and event["seat"] == opponent:
            discarded = event["discarded"]
        elif kind == "duel":
            played.append(event["cards"][opponent])
        elif kind == "attack" and event["seat"] == opponent:
            played.extend(event["cards"])
        elif kind == "defend" and event["seat"] == opponent:
            played.extend(answer for answer in event["answers"] if answer is not None)
            played.extend(event["sacrificed"])
    return discarded, played


def _sacrifice_floor(view: SeatView) -> Card | None:
    """The opponent holds nothing lower than the highest card it sacrificed this round (P4)."""
    floor: Card | None = None
    for event in view.events:
        if event["type"] == "defend" and event["seat"] != view.seat and event["sacrificed"]:
            highest = max(event["sacrificed"])
            floor = highest if floor is None else max(floor, highest)
    return floor
