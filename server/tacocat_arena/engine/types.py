"""Small values of the game: seats, decision kinds, actions and outcomes (RULES-SPEC C1, W1-W2).

Actions are frozen dataclasses with a readable text form.  Card values are plain ints and
multisets of cards are tuples of ints; seats are the ints 0 and 1 (``SEAT_0``/``SEAT_1``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final, NamedTuple, TypeAlias

Seat: TypeAlias = int
Card: TypeAlias = int

SEAT_0: Final[Seat] = 0
SEAT_1: Final[Seat] = 1
SEATS: Final[tuple[Seat, Seat]] = (SEAT_0, SEAT_1)


def other(seat: Seat) -> Seat:
    """The opponent of ``seat``."""
    return 1 - seat


class DecisionKind(enum.Enum):
    """What a pending decision asks for."""

    REPLACE = "replace"  # R1-R3: discard any number of cards, draw as many
    DUEL = "duel"  # D1: one card, chosen simultaneously
    ATTACK = "attack"  # P1/P3: one card, a set or a sequence
    DEFEND = "defend"  # P2/P4: one answer per attack card


@dataclass(frozen=True, slots=True)
class Replace:
    """Discard ``cards`` face up and draw as many (R1-R3); an empty tuple keeps the hand."""

    cards: tuple[Card, ...] = ()

    def __str__(self) -> str:
        return "replace " + (" ".join(map(str, self.cards)) or "nothing")


@dataclass(frozen=True, slots=True)
class Duel:
    """Commit one card to the duel (D1)."""

    card: Card

    def __str__(self) -> str:
        return f"duel {self.card}"


@dataclass(frozen=True, slots=True)
class Attack:
    """Attack with one card, a set or a sequence (P1, P3)."""

    cards: tuple[Card, ...]

    def __str__(self) -> str:
        return "attack " + " ".join(map(str, self.cards))


@dataclass(frozen=True, slots=True)
class Defend:
    """One answer per attack card, in order: a card value that defends it, or None (P2, P4).

    ``None`` is a sacrifice: it removes the lowest card among those the defence does not name.
    """

    answers: tuple[Card | None, ...]

    def __str__(self) -> str:
        return "defend " + " ".join("x" if a is None else str(a) for a in self.answers)


Action: TypeAlias = Replace | Duel | Attack | Defend

ACTION_KIND: Final[dict[type, DecisionKind]] = {
    Replace: DecisionKind.REPLACE,
    Duel: DecisionKind.DUEL,
    Attack: DecisionKind.ATTACK,
    Defend: DecisionKind.DEFEND,
}


class Termination(enum.Enum):
    """Every way a game can end."""

    GOAL = "goal"  # W1: the Tacocat reached a goal
    ROUND_CAP = "round_cap"  # W2: max_rounds reached without a winner: a draw
    FORFEIT_TIMEOUT = "timeout"  # referee: a seat ran out of time
    FORFEIT_ILLEGAL = "illegal_action"  # referee: a seat played an illegal action
    FORFEIT_DISCONNECT = "disconnect"  # referee: a seat's bot went away
    FORFEIT_CRASH = "crash"  # referee: a seat's bot process died

    @property
    def is_forfeit(self) -> bool:
        """True for the endings the referee imposes on a seat."""
        return self not in (Termination.GOAL, Termination.ROUND_CAP)


class Failure(enum.Enum):
    """How a seat's decision failed, so that the referee had to rule (referee policy): the
    seat forfeits, or the referee plays a default action in its place (a substitution)."""

    TIMEOUT = "timeout"  # no answer in time
    ILLEGAL = "illegal_action"  # a well-formed answer the rules forbid
    MALFORMED = "malformed"  # an answer that does not decode to an action of the kind asked
    DISCONNECT = "disconnect"  # the bot went away

    @property
    def termination(self) -> Termination:
        """The forfeit this failure costs under the forfeit policy."""
        return _FAILURE_TERMINATION[self]


_FAILURE_TERMINATION = {
    Failure.TIMEOUT: Termination.FORFEIT_TIMEOUT,
    Failure.ILLEGAL: Termination.FORFEIT_ILLEGAL,
    Failure.MALFORMED: Termination.FORFEIT_ILLEGAL,
    Failure.DISCONNECT: Termination.FORFEIT_DISCONNECT,
}


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended; ``winner`` is None for a draw."""

    termination: Termination
    winner: Seat | None

    def result(self) -> str:
        """Result string from seat 0's point of view: "1-0", "0-1" or "1/2-1/2"."""
        if self.winner is None:
            return "1/2-1/2"
        return "1-0" if self.winner == SEAT_0 else "0-1"


@dataclass(frozen=True, slots=True)
class Forfeit:
    """A referee's ruling that a seat loses (kept among a game's actions so it replays)."""

    termination: Termination
    detail: str = ""

    def __str__(self) -> str:
        return f"forfeit ({self.termination.value})"


class RoundResult(NamedTuple):
    """A finished round, as everyone may know it (P9, P10, M1-M3)."""

    round: int
    winner: Seat | None  # None: a tie (P10)
    showdown: tuple[Card, Card]  # the last cards, index = seat
    tacocat_from: int
    tacocat_to: int
    covered: int | None  # the space covered (M2), None on a tie
