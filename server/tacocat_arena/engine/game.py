"""The authoritative game: state, pending decisions, ``apply`` and the event log.

A ``Game`` is a function of (ruleset, seed, actions): it holds no clock and no global random
state.  Its own ``random.Random(seed)`` draws exactly one float per card for every round's
shuffle (see ``round_deck``), so round ``r``'s deck depends only on (seed, r): one seed dealt
again with the seats swapped gives every seat the same cards, round for round; that is what
makes duplicate tournaments fair.

Only ``apply`` and ``forfeit`` change a game, and ``apply`` validates the whole action before
touching anything: an illegal action raises and leaves the game exactly as it was.  Hands,
discards and the covered spaces are tuples that are replaced, never mutated, and the event
log is append-only, so a view can share them without copying (that is most of the engine's
speed).  Board positions: 0 is seat 0's goal, ``1..N`` the spaces,
``N + 1`` seat 1's goal.

Beside the full log (hidden cards included, for records), the game keeps each seat's public
form of the current round's events, appended as they happen (``seen``): a seat's view holds
only that, so nothing RULES-SPEC I2 forbids is reachable from a view at all.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from tacocat_arena.engine import legal
from tacocat_arena.engine.errors import ActionError, IllegalActionError, InvalidActionError
from tacocat_arena.engine.ruleset import DEFAULT_RULESET, Ruleset, TieRule
from tacocat_arena.engine.types import (
    ACTION_KIND,
    SEAT_0,
    SEAT_1,
    Action,
    Attack,
    Card,
    DecisionKind,
    Defend,
    Duel,
    Failure,
    Forfeit,
    Outcome,
    Replace,
    RoundResult,
    Seat,
    Termination,
)

Event = dict[str, Any]


class ReadOnlyEvent(dict[str, Any]):
    """A public event as views hold it: a dict (JSON-ready, compares equal to a plain one)
    that refuses changes, so no bot can rewrite the history another seat or a record sees."""

    __slots__ = ()

    def _refuse(self, *args: object, **kwargs: object) -> None:
        raise TypeError("a view's events are read-only; copy one with dict(event)")

    __setitem__ = __delitem__ = _refuse
    clear = pop = popitem = setdefault = update = __ior__ = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[type[ReadOnlyEvent], tuple[dict[str, Any]]]:
        return (ReadOnlyEvent, (dict(self),))  # copy and pickle build it whole


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


MAX_SEED = 2**64
_NO_PENDING: frozenset[Seat] = frozenset()
_BOTH: frozenset[Seat] = frozenset((SEAT_0, SEAT_1))
_ONLY = (frozenset((SEAT_0,)), frozenset((SEAT_1,)))

# The rule a misplaced action of each kind breaks, for the "not your turn" messages.
_PHASE_RULE = {
    DecisionKind.REPLACE: "R1",
    DecisionKind.DUEL: "D1",
    DecisionKind.ATTACK: "P1",
    DecisionKind.DEFEND: "P2",
}


def move_tacocat(
    tacocat: int, covered: tuple[bool, ...], winner: Seat
) -> tuple[int, tuple[bool, ...]]:
    """Where a round won by ``winner`` leaves the Tacocat, and the covered spaces after it:
    one space toward the winner's goal (M1), the space it left covered (M2), covered spaces
    skipped (M3).  ``covered`` holds one flag per position, the goals included."""
    step = -1 if winner == SEAT_0 else 1  # M1: seat 0's goal is position 0
    covered = covered[:tacocat] + (True,) + covered[tacocat + 1 :]  # M2
    position, last = tacocat + step, len(covered) - 2
    while 1 <= position <= last and covered[position]:
        position += step  # M3: skip covered spaces
    return position, covered


def round_deck(ruleset: Ruleset, seed: int, round_number: int) -> list[Card]:
    """The shuffled deck of one round: depends only on (ruleset deck, seed, round) (S2, M4)."""
    rng = random.Random(seed)
    for _ in range((round_number - 1) * ruleset.deck_size):
        rng.random()
    return _shuffled(ruleset, rng)


def _shuffled(ruleset: Ruleset, rng: random.Random) -> list[Card]:
    """Sort the deck by one fresh float per card: a uniform shuffle that always draws
    exactly ``deck_size`` numbers, which is what keeps rounds independent of play."""
    draw = rng.random
    cards = ruleset.cards()
    keys = [draw() for _ in cards]
    return [cards[i] for i in sorted(range(len(cards)), key=keys.__getitem__)]


class Game:
    """One game of Tacocat Spelled Backwards between seat 0 and seat 1."""

    __slots__ = (
        "ruleset",
        "seed",
        "round",
        "tacocat",
        "covered",
        "hands",
        "draw_pile",
        "discards",
        "phase",
        "pending",
        "replace_cap",
        "_committed",
        "attacker",
        "current_attack",
        "outcome",
        "events",
        "actions",
        "substitutions",
        "round_start",
        "round_results",
        "seen",
        "decisions",
        "_simultaneous",
        "_rng",
    )

    def __init__(self, ruleset: Ruleset = DEFAULT_RULESET, seed: int = 0) -> None:
        if not isinstance(seed, int) or not 0 <= seed < MAX_SEED:
            raise ValueError(f"seed must be an integer in [0, 2**64), got {seed!r}")
        self.ruleset = ruleset
        self.seed = seed
        self.round = 0
        self.tacocat = ruleset.centre  # S1
        self.covered = (False,) * (ruleset.spaces + 2)  # S1: nothing covered; goals never are
        self.hands: list[tuple[Card, ...]] = [(), ()]
        self.draw_pile: list[Card] = []
        self.discards: tuple[Card, ...] = ()
        self.phase: DecisionKind | None = None
        self.pending: frozenset[Seat] = _NO_PENDING
        self.replace_cap: int | None = None
        self._committed: dict[Seat, Action] = {}
        self.attacker: Seat | None = None
        self.current_attack: tuple[Card, ...] = ()
        self.outcome: Outcome | None = None
        self.events: list[Event] = []
        self.actions: list[tuple[Seat, Action | Forfeit]] = []
        # Index in ``actions`` -> why the referee played that action in the seat's place.
        self.substitutions: dict[int, Failure] = {}
        self.round_start = 0
        self.round_results: tuple[RoundResult, ...] = ()
        # Each seat's public form of this round's events (I1), in log order; views copy them.
        self.seen: tuple[list[Event], list[Event]] = ([], [])
        self.decisions = 0
        self._simultaneous = False
        self._rng = random.Random(seed)
        self._deal()

    @classmethod
    def from_position(
        cls,
        hands: tuple[tuple[Card, ...], tuple[Card, ...]],
        *,
        ruleset: Ruleset = DEFAULT_RULESET,
        draw_pile: tuple[Card, ...] = (),
        tacocat: int | None = None,
        covered: tuple[int, ...] = (),
        phase: DecisionKind = DecisionKind.REPLACE,
        attacker: Seat = SEAT_0,
        round_number: int = 1,
        seed: int = 0,
    ) -> Game:
        """A game whose current round starts from a hand-built position (tests, puzzles,
        teaching).  ``phase`` is where the round stands: REPLACE (the usual start), DUEL, or
        ATTACK by ``attacker``.  Later rounds are dealt from ``seed`` as usual.  The cards of
        the position need not add up to the deck; hands must be of equal size (P6 relies on it).
        """
        if len(hands[0]) != len(hands[1]) or not hands[0]:
            raise ValueError("both hands must hold the same number of cards, at least one")
        if phase is DecisionKind.DEFEND:
            raise ValueError("start from ATTACK and apply the attack instead of DEFEND")
        game = cls(ruleset, seed)
        if tacocat is not None:
            if not 1 <= tacocat <= ruleset.spaces:
                raise ValueError(f"tacocat must be a space 1..{ruleset.spaces}, got {tacocat}")
            game.tacocat = tacocat
        game.covered = tuple(i in covered for i in range(ruleset.spaces + 2))
        if game.covered[game.tacocat]:
            raise ValueError(f"the Tacocat cannot stand on covered space {game.tacocat} (M2)")
        game.round = round_number
        for _ in range(round_number - 1):
            _shuffled(ruleset, game._rng)  # keep later rounds' decks a function of (seed, r)
        game.hands = [tuple(sorted(hands[0])), tuple(sorted(hands[1]))]
        game.draw_pile = list(draw_pile)
        game.events = []
        game.seen = ([], [])
        game._log_deal(len(hands[0]))
        arrows = ruleset.arrows_at(game.tacocat)
        game._simultaneous = len(arrows) == 2
        if phase is DecisionKind.REPLACE:
            game.pending = _BOTH if game._simultaneous else _ONLY[next(iter(arrows))]
        elif phase is DecisionKind.DUEL:
            game._start_duel()
        else:
            game._start_attack(attacker)
        return game

    # -- queries ------------------------------------------------------------------------------
    @property
    def round_events(self) -> tuple[Event, ...]:
        """This round's events so far (full log form, hidden cards included)."""
        return tuple(self.events[self.round_start :])

    @property
    def is_over(self) -> bool:
        """True once the game has an outcome."""
        return self.outcome is not None

    def decision_for(self, seat: Seat) -> DecisionKind | None:
        """The kind of decision ``seat`` owes now, or None (it has none, or already committed)."""
        return self.phase if seat in self.pending else None

    def replace_limit(self, seat: Seat) -> int:
        """Most cards ``seat`` may replace now: its hand, or the first replacer's count (R2)."""
        hand_size = len(self.hands[seat])
        return hand_size if self.replace_cap is None else min(self.replace_cap, hand_size)

    def legal_attacks(self, seat: Seat) -> tuple[tuple[Card, ...], ...]:
        """Every legal attack for ``seat`` now (P1, P3, P6)."""
        return legal.legal_attacks(tuple(self.hands[seat]))

    def copy(self, *, deals: bool = True) -> Game:
        """An independent copy, to play on without touching this game (searches and learning
        environments branch from one).  Values are immutable and shared; the containers
        ``apply`` changes in place are copied.  The copy's generator goes on from this one's
        state, so it deals the same later rounds.  Copying the generator costs several times
        the rest, so ``deals=False`` leaves it out, for a copy that ends within its round
        (a search's world): such a copy has no generator, and dealing a round fails."""
        copy = Game.__new__(Game)
        for name in Game.__slots__:
            setattr(copy, name, getattr(self, name))
        copy.hands = list(self.hands)
        copy.draw_pile = list(self.draw_pile)
        copy._committed = dict(self._committed)
        copy.events = list(self.events)
        copy.actions = list(self.actions)
        copy.substitutions = dict(self.substitutions)
        copy.seen = (list(self.seen[0]), list(self.seen[1]))
        if deals:
            copy._rng = random.Random()
            copy._rng.setstate(self._rng.getstate())
        else:
            copy._rng = None  # type: ignore[assignment]
        return copy

    # -- applying actions ------------------------------------------------------------------
    def apply(self, seat: Seat, action: Action) -> None:
        """Validate and apply ``seat``'s action; raise ``ActionError`` and change nothing if
        it is not legal now."""
        entry = _DISPATCH.get(type(action))  # keyed by type: hashing an Enum is slow
        if entry is None or entry[0] is not self.phase or seat not in self.pending:
            self._refuse(seat, action, ACTION_KIND.get(type(action)))
        entry[1](self, seat, action)  # type: ignore[index]

    def substitute(self, seat: Seat, action: Action, failure: Failure) -> None:
        """Apply ``action`` that the referee plays in ``seat``'s place after ``failure``
        (failure policy "default_action").  A public ``substituted`` event comes first, so a
        default move is never mistaken for the seat's own, in the log or in a record."""
        mark = len(self.events)
        self._log(
            {"type": "substituted", "round": self.round, "seat": seat, "reason": failure.value}
        )
        try:
            self.apply(seat, action)
        except ActionError:
            del self.events[mark:]  # apply changed nothing else: the game is as it was
            self.seen[0].pop()
            self.seen[1].pop()
            raise
        self.substitutions[len(self.actions) - 1] = failure

    def forfeit(self, seat: Seat | None, termination: Termination, detail: str = "") -> None:
        """End the game with ``seat`` losing by a referee-imposed ``termination``; ``None``
        means both seats failed at once, and nobody wins."""
        if self.outcome is not None:
            raise InvalidActionError("W1", "the game is already over")
        if not termination.is_forfeit:
            raise ValueError(f"{termination} is not a forfeit")
        self.actions.append((seat, Forfeit(termination, detail)))  # type: ignore[arg-type]
        self._log(
            {
                "type": "forfeit",
                "round": self.round,
                "seat": seat,
                "reason": termination.value,
                "detail": detail,
            }
        )
        self._finish(Outcome(termination, None if seat is None else 1 - seat))

    def _refuse(self, seat: Seat, action: Action, kind: DecisionKind | None) -> None:
        if kind is None:
            raise InvalidActionError("A0", f"{action!r} is not an action")
        if self.outcome is not None:
            raise InvalidActionError("W1", "the game is over")
        if seat not in (SEAT_0, SEAT_1):
            raise InvalidActionError("C1", f"seat must be 0 or 1, got {seat!r}")
        rule = _PHASE_RULE[self.phase] if self.phase is not None else "W1"
        if seat in self._committed:
            raise InvalidActionError(rule, f"seat {seat} has already committed this decision")
        phase_name = self.phase.value if self.phase is not None else "end"
        if seat not in self.pending:
            raise InvalidActionError(
                rule,
                f"seat {seat} has no decision pending; waiting for the {phase_name} "
                f"of seat {' and '.join(map(str, sorted(self.pending)))}",
            )
        phase = self.phase.value if self.phase is not None else "no"
        raise InvalidActionError(rule, f"seat {seat} owes a {phase} decision, not a {kind.value}")

    def _replace(self, seat: Seat, action: Replace) -> None:
        cards = tuple(action.cards)
        limit = self.replace_limit(seat)
        if len(cards) > limit:
            rule = "R2" if self.replace_cap is not None else "R1"
            raise IllegalActionError(
                rule, f"may replace at most {limit} cards now, not {len(cards)}"
            )
        rest = legal.remove_cards(self.hands[seat], cards, "R1")
        drawing = (
            sum(len(c.cards) for c in self._committed.values() if isinstance(c, Replace))
            if self._committed
            else 0
        )
        if drawing + len(cards) > len(self.draw_pile):
            # Only a hand-built position (from_position) can hold so short a pile (C3).
            raise IllegalActionError(
                "R1", f"the draw pile holds only {len(self.draw_pile) - drawing} cards"
            )
        self.decisions += 1
        self.actions.append((seat, action))
        if self._simultaneous:
            # R3: simultaneous; resolve when both have committed, seat 0 drawing first.
            self._committed[seat] = action
            self.pending = self.pending - {seat}
            if self.pending:
                return
            both, self._committed = self._committed, {}
            for each in (SEAT_0, SEAT_1):
                chosen = both[each].cards  # type: ignore[union-attr]
                self._do_replace(each, legal.remove_cards(self.hands[each], chosen, "R1"), chosen)
            self._start_duel()
            return
        self._do_replace(seat, rest, cards)
        if self.replace_cap is None:
            self.replace_cap = len(cards)  # R2: the second replacer may take at most k
            self.pending = _ONLY[1 - seat]
        else:
            self._start_duel()

    def _do_replace(self, seat: Seat, rest: list[Card], cards: tuple[Card, ...]) -> None:
        count = len(cards)
        drawn = self.draw_pile[:count]
        del self.draw_pile[:count]
        rest.extend(drawn)
        rest.sort()
        self.hands[seat] = tuple(rest)
        self.discards += cards
        drawn_cards = tuple(drawn)
        shown = {"type": "replace", "round": self.round, "seat": seat, "discarded": cards}
        full = {**shown, "drawn": drawn_cards}
        if seat == SEAT_0:
            self._log_private(full, full, shown)  # I2: the drawn cards only to the drawer
        else:
            self._log_private(full, shown, full)

    def _duel(self, seat: Seat, action: Duel) -> None:
        if action.card not in self.hands[seat]:
            raise IllegalActionError(
                "D1", f"card {action.card} is not in your hand {self.hands[seat]}"
            )
        self.decisions += 1
        self.actions.append((seat, action))
        self._committed[seat] = action
        self.pending = self.pending - {seat}
        if self.pending:
            return  # D1: nothing is revealed until both have committed
        card0 = self._committed[SEAT_0].card  # type: ignore[union-attr]
        card1 = self._committed[SEAT_1].card  # type: ignore[union-attr]
        self._committed = {}
        hand0, hand1 = list(self.hands[SEAT_0]), list(self.hands[SEAT_1])
        hand0.remove(card0)
        hand1.remove(card1)
        self.hands = [tuple(hand0), tuple(hand1)]
        self.discards += (card0, card1)
        winner = None if card0 == card1 else (SEAT_0 if card0 > card1 else SEAT_1)  # D2, D3
        self._log({"type": "duel", "round": self.round, "cards": (card0, card1), "winner": winner})
        if len(self.hands[SEAT_0]) == 1:
            self._showdown()  # D4 after a tie, P8 after a decided duel
        elif winner is None:
            self._start_duel()  # D3
        else:
            self._start_attack(winner)  # P1

    def _attack(self, seat: Seat, action: Attack) -> None:
        hand = self.hands[seat]
        attacks = legal.legal_attacks(hand)
        cards = tuple(action.cards)
        if cards not in attacks:
            cards = tuple(sorted(cards))
            if cards not in attacks:
                legal.check_attack_shape(cards, len(hand))  # raises with the broken rule
                legal.remove_cards(hand, cards, "P1")
                raise AssertionError(f"{cards} passed every check but is not a legal attack")
        rest = legal.remove_cards(hand, cards, "P1")
        self.decisions += 1
        self.actions.append((seat, action))
        self.hands[seat] = tuple(rest)
        self.discards += cards
        self.current_attack = cards
        self._log({"type": "attack", "round": self.round, "seat": seat, "cards": cards})
        self.phase = DecisionKind.DEFEND
        self.pending = _ONLY[1 - seat]

    def _defend(self, seat: Seat, action: Defend) -> None:
        answers = tuple(action.answers)
        attack = self.current_attack
        rest = legal.check_defence(attack, answers, self.hands[seat])
        named = [answer for answer in answers if answer is not None]
        self.decisions += 1
        self.actions.append((seat, action))
        sacrifices = len(answers) - len(named)
        sacrificed = tuple(rest[:sacrifices])  # P4: the lowest cards not named, lowest first
        kept = tuple(rest[sacrifices:])
        self.hands[seat] = kept
        self.discards += tuple(named) + sacrificed
        trick_winner = 1 - seat if sacrifices else seat  # P2, P5
        self._log(
            {
                "type": "defend",
                "round": self.round,
                "seat": seat,
                "attack": attack,
                "answers": answers,
                "sacrificed": sacrificed,
                "trick_winner": trick_winner,
            }
        )
        self.current_attack = ()
        if len(kept) == 1:
            self._showdown()  # P8
        else:
            self._start_attack(trick_winner)

    # -- round structure -------------------------------------------------------------------
    def _deal(self) -> None:
        self.round += 1
        self.round_start = len(self.events)
        self.seen = ([], [])
        size = self.ruleset.hand_size_at(self.tacocat)
        deck = _shuffled(self.ruleset, self._rng)  # S2, M4
        self.hands = [tuple(sorted(deck[:size])), tuple(sorted(deck[size : 2 * size]))]
        self.draw_pile = deck[2 * size :]
        self.discards = ()
        self.current_attack = ()
        self.attacker = None
        self.replace_cap = None
        self._committed = {}
        self._log_deal(size)
        self.phase = DecisionKind.REPLACE
        arrows = self.ruleset.arrows_at(self.tacocat)
        self._simultaneous = len(arrows) == 2
        self.pending = _BOTH if self._simultaneous else _ONLY[next(iter(arrows))]  # R1, R3

    def _log_deal(self, size: int) -> None:
        hands = (self.hands[0], self.hands[1])
        common = {"type": "deal", "round": self.round, "position": self.tacocat, "hand_size": size}
        self._log_private(
            {**common, "hands": hands, "draw_pile": tuple(self.draw_pile)},
            {**common, "hand": hands[0]},
            {**common, "hand": hands[1]},
        )

    def _start_duel(self) -> None:
        self.phase = DecisionKind.DUEL
        self.pending = _BOTH
        self.replace_cap = None

    def _start_attack(self, seat: Seat) -> None:
        self.phase = DecisionKind.ATTACK
        self.attacker = seat
        self.pending = _ONLY[seat]

    def _showdown(self) -> None:
        card0 = self.hands[SEAT_0][0]
        card1 = self.hands[SEAT_1][0]
        winner = None if card0 == card1 else (SEAT_0 if card0 < card1 else SEAT_1)  # P9, P10
        self._log(
            {"type": "showdown", "round": self.round, "cards": (card0, card1), "winner": winner}
        )
        if winner is None and self.ruleset.tie_rule is TieRule.ARROW:
            arrows = self.ruleset.arrows_at(self.tacocat)
            if len(arrows) == 1:
                winner = next(iter(arrows))
        self._end_round(winner, (card0, card1))

    def _end_round(self, winner: Seat | None, showdown: tuple[Card, Card]) -> None:
        start = self.tacocat
        covered: int | None = None
        if winner is not None:
            self.tacocat, self.covered = move_tacocat(start, self.covered, winner)
            covered = start
        self.round_results += (
            RoundResult(self.round, winner, showdown, start, self.tacocat, covered),
        )
        self._log(
            {
                "type": "round_end",
                "round": self.round,
                "winner": winner,
                "tacocat_from": start,
                "tacocat_to": self.tacocat,
                "covered": covered,
            }
        )
        if self.tacocat == 0 or self.tacocat == self.ruleset.spaces + 1:
            self._finish(Outcome(Termination.GOAL, winner))  # W1
        elif self.round >= self.ruleset.max_rounds:
            self._finish(Outcome(Termination.ROUND_CAP, None))  # W2
        else:
            self._deal()  # M4, P10

    def _finish(self, outcome: Outcome) -> None:
        self.outcome = outcome
        self.phase = None
        self.pending = _NO_PENDING
        self._committed = {}
        self._log(
            {
                "type": "game_end",
                "round": self.round,
                "termination": outcome.termination.value,
                "winner": outcome.winner,
            }
        )

    def _log(self, event: Event) -> None:
        """Append an event both seats may see whole, to the log and to both seats' views."""
        shown = ReadOnlyEvent(event)  # one immutable copy, shared by the log and both seats
        self.events.append(shown)  # append only
        self.seen[0].append(shown)
        self.seen[1].append(shown)

    def _log_private(self, event: Event, shown0: Event, shown1: Event) -> None:
        """Append an event holding cards not every seat may see, with each seat's form (I2)."""
        self.events.append(event)
        self.seen[0].append(ReadOnlyEvent(shown0))
        self.seen[1].append(ReadOnlyEvent(shown1))


_DISPATCH: dict[type, tuple[DecisionKind, Callable[[Game, Seat, Any], None]]] = {
    Replace: (DecisionKind.REPLACE, Game._replace),
    Duel: (DecisionKind.DUEL, Game._duel),
    Attack: (DecisionKind.ATTACK, Game._attack),
    Defend: (DecisionKind.DEFEND, Game._defend),
}
