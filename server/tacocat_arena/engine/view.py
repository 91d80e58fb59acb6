"""What one seat may know (RULES-SPEC I1), and nothing it may not (I2).

``build_view`` is the only place that decides what a seat sees; the referee's protobuf view
and the SDK's view are plain mappings of a ``SeatView``.  ``public_event`` strips every event of
the full log down to what the viewing seat may know: its own dealt hand and draws, never the
opponent's hand, its draws or the draw pile.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from tacocat_arena.engine import legal
from tacocat_arena.engine.game import Event, Game
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
    ``events`` is this round's public history, oldest first (see docs/game-record.md); it
    is derived on access from ``log[log_start:log_stop]``, the game's own append-only event
    log, which holds hidden cards and is private to the view: read ``events``, never ``log``.
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
    log: Sequence[Event]
    log_start: int
    log_stop: int
    past_rounds: tuple[RoundResult, ...]
    attacker: Seat | None
    current_attack: tuple[Card, ...]
    max_replace: int

    @property
    def legal(self) -> LegalOptions | None:
        """The legal options of the pending decision (None if none is pending)."""
        return legal_options(self)

    @property
    def round_log(self) -> tuple[Event, ...]:
        """This round's events in the game's own (full) form: internal, hidden cards included."""
        return tuple(self.log[self.log_start : self.log_stop])

    @property
    def events(self) -> tuple[Event, ...]:
        """This round's public history, oldest first, as this seat may know it (I1)."""
        return tuple(public_event(event, self.seat) for event in self.round_log)

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
            game.events,
            game.round_start,
            len(game.events),
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


def public_event(event: Event, seat: Seat) -> Event:
    """The part of a full-log ``event`` that ``seat`` may know (I1, never I2).

    Idempotent: an event already in public form (as a bot's SDK rebuilds it from the wire)
    comes back unchanged.
    """
    kind = event["type"]
    if kind == "deal" and "hands" in event:
        return {
            "type": "deal",
            "round": event["round"],
            "position": event["position"],
            "hand_size": event["hand_size"],
            "hand": event["hands"][seat],
        }
    if kind == "replace":
        shown: dict[str, Any] = {
            "type": "replace",
            "round": event["round"],
            "seat": event["seat"],
            "discarded": event["discarded"],
        }
        if event["seat"] == seat and "drawn" in event:
            shown["drawn"] = event["drawn"]
        return shown
    return event  # duel, attack, defend, showdown, round_end, forfeit, game_end: all public
