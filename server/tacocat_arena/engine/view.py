"""What one seat may know (RULES-SPEC I1), and nothing it may not (I2).

``build_view`` is the only place that decides what a seat sees, and ``spectator_view`` what
anyone watching a game in flight sees (what both seats may know); the referee's protobuf view
and the SDK's view are plain mappings of a ``SeatView``.  A view holds values only: small
tuples, the ruleset, and the seat's own public copy of this round's events, which the game
appends as events happen (``Game.seen``, built with ``public_event``).  It holds no reference
to the game, its full log, its draw pile or its random state, so nothing RULES-SPEC I2 forbids
is reachable from it by any attribute, however deep (tests/test_view_walk.py walks them all).
"""

from __future__ import annotations

from typing import NamedTuple

from tacocat_arena.engine import legal
from tacocat_arena.engine.game import Event, Game, public_event
from tacocat_arena.engine.ruleset import Ruleset
from tacocat_arena.engine.types import Card, DecisionKind, RoundResult, Seat


class LegalOptions(NamedTuple):
    """The legal choices of the pending decision, in easy-to-use form.

    - replace: discard any sub-multiset of the hand with at most ``max_replace`` cards;
    - duel: one of ``duel_values``;
    - attack: one of ``attacks`` (complete list: singles, sets, sequences);
    - defend: for attack card ``i``, ``None`` (sacrifice) or a value from ``defence[i]``;
      named cards must be distinct cards of the hand (a multiset).
    """

    kind: DecisionKind
    max_replace: int = 0
    duel_values: tuple[Card, ...] = ()
    attacks: tuple[tuple[Card, ...], ...] = ()
    defence: tuple[tuple[Card, ...], ...] = ()


class SeatView(NamedTuple):
    """Everything ``seat`` may know at one moment (I1).

    An immutable named tuple (cheap to build: one is made for every decision).
    Board positions: 0 is seat 0's goal, ``1..N`` the spaces, ``N + 1`` seat 1's goal.
    ``events`` is this round's public history as this seat may know it, oldest first (see
    docs/game-record.md), each a read-only dict; ``log_start`` is the index of its first
    event in the game's whole log (so that encoders of both seats can share conversions).
    """

    seat: Seat
    round: int
    kind: DecisionKind | None
    hand: tuple[Card, ...]
    opponent_hand_size: int
    draw_pile_size: int
    tacocat: int
    covered: tuple[bool, ...]
    ruleset: Ruleset
    discards: tuple[Card, ...]
    events: tuple[Event, ...]
    log_start: int
    past_rounds: tuple[RoundResult, ...]
    attacker: Seat | None
    current_attack: tuple[Card, ...]
    max_replace: int

    @property
    def legal(self) -> LegalOptions | None:
        """The legal options of the pending decision (None if none is pending)."""
        return legal_options(self)

    @property
    def opponent(self) -> Seat:
        """The other seat."""
        return 1 - self.seat

    @property
    def hand_size(self) -> int:
        """The current space's hand size for this round (C3)."""
        return self.ruleset.hand_size_at(self.tacocat)

    @property
    def goal(self) -> int:
        """This seat's goal position."""
        return 0 if self.seat == 0 else self.ruleset.spaces + 1

    def distance_to_goal(self, seat: Seat | None = None) -> int:
        """Uncovered spaces the Tacocat must still cross to reach ``seat``'s goal, plus one."""
        seat = self.seat if seat is None else seat
        step = -1 if seat == 0 else 1
        position, moves = self.tacocat, 0
        while 1 <= position <= self.ruleset.spaces:
            position += step
            while 1 <= position <= self.ruleset.spaces and self.covered[position]:
                position += step
            moves += 1
        return moves


def build_view(game: Game, seat: Seat) -> SeatView:
    """The view of ``seat`` now; its ``legal`` options are derived from it on access."""
    kind = game.phase if seat in game.pending else None
    max_replace = game.replace_limit(seat) if kind is DecisionKind.REPLACE else 0
    # Positional construction: this runs once per decision and kwargs cost a third of it.
    return _new(
        SeatView,
        (
            seat,
            game.round,
            kind,
            game.hands[seat],
            len(game.hands[1 - seat]),
            len(game.draw_pile),
            game.tacocat,
            game.covered,
            game.ruleset,
            game.discards,
            tuple(game.seen[seat]),
            game.round_start,
            game.round_results,
            game.attacker,
            game.current_attack,
            max_replace,
        ),
    )


def legal_options(view: SeatView) -> LegalOptions | None:
    """The legal options of the decision ``view`` is pending on, or None."""
    kind, hand = view.kind, view.hand
    if kind is None:
        return None
    if kind is DecisionKind.DUEL:
        return _new(LegalOptions, (kind, 0, legal.distinct_values(hand), (), ()))
    if kind is DecisionKind.ATTACK:
        return _new(LegalOptions, (kind, 0, (), legal.legal_attacks(hand), ()))
    if kind is DecisionKind.DEFEND:
        defence = legal.defence_options(view.current_attack, hand)
        return _new(LegalOptions, (kind, 0, (), (), defence))
    return _new(LegalOptions, (kind, view.max_replace, (), (), ()))


_new = tuple.__new__


class SpectatorView(NamedTuple):
    """What anyone watching a game in flight may know at one moment: what both seats may
    know, and nothing only one of them may (no hand, no card drawn, no draw pile's order, no
    simultaneous choice before both are revealed).  The arena's live page is built from it
    alone (web/views.py), so a spectator who passes it on to a bot gives that bot nothing
    its own view does not hold.  ``events`` is the whole game's log so far in public form
    (``spectator_event``), oldest first; ``rounds_won`` counts each seat's rounds."""

    round: int
    tacocat: int
    covered: tuple[bool, ...]
    ruleset: Ruleset
    hand_sizes: tuple[int, int]
    draw_pile_size: int
    rounds_won: tuple[int, int]
    events: tuple[Event, ...]


def spectator_view(game: Game) -> SpectatorView:
    """The view of a spectator of ``game`` now."""
    won = [result.winner for result in game.round_results]
    return SpectatorView(
        round=game.round,
        tacocat=game.tacocat,
        covered=game.covered,
        ruleset=game.ruleset,
        hand_sizes=(len(game.hands[0]), len(game.hands[1])),
        draw_pile_size=len(game.draw_pile),
        rounds_won=(won.count(0), won.count(1)),
        events=tuple(spectator_event(event) for event in game.events),
    )


def spectator_event(event: Event) -> Event:
    """The part of a full-log ``event`` that a spectator may know: what both seats may know.

    A live game's page is built from these alone (no hand, no draw, no draw pile), so a
    spectator who passes it on to a bot gives that bot nothing its own view does not hold.
    """
    kind = event["type"]
    if kind == "deal":
        return {
            "type": "deal",
            "round": event["round"],
            "position": event["position"],
            "hand_size": event["hand_size"],
        }
    if kind == "replace":
        return {
            "type": "replace",
            "round": event["round"],
            "seat": event["seat"],
            "discarded": event["discarded"],
        }
    return event  # duel, attack, defend, showdown, round_end, forfeit, game_end: all public


__all__ = [
    "LegalOptions",
    "SeatView",
    "SpectatorView",
    "build_view",
    "legal_options",
    "public_event",
    "spectator_event",
    "spectator_view",
]
