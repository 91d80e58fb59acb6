"""A readable, turn-by-turn account of a recorded game (``tacocat-arena replay``).

It reads only the record's events (docs/game-record.md), so it shows everything, hidden cards
included: a record is published once its game is over.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any


def _cards(cards: Sequence[int]) -> str:
    return " ".join(map(str, cards)) if cards else "nothing"


def narrate(
    record: Mapping[str, Any], names: Sequence[str] = ("seat 0", "seat 1")
) -> Iterator[str]:
    """Yield the lines of the account of one game record."""
    marks = tuple(record.get("ruleset", {}).get("hand_sizes", ()))
    for event in record.get("events", []):
        yield from describe_event(event, names, marks)


def _space(position: int, marks: Sequence[int]) -> str:
    """A space as the board shows it: by the number printed on it (its hand size), with the
    engine's position, which the board does not print ("the space marked 7 (position 4)")."""
    if 1 <= position <= len(marks):
        return f"the space marked {marks[position - 1]} (position {position})"
    return f"position {position}"


def describe_event(
    event: Mapping[str, Any],
    names: Sequence[str] = ("seat 0", "seat 1"),
    marks: Sequence[int] = (),
) -> Iterator[str]:
    """Yield the lines that tell one full event in words (the replay page shows them too).

    ``marks`` are the numbers printed on the spaces (the ruleset's hand sizes, seat 0's side
    first): a space is named by the number the board shows on it, and its position."""

    def who(seat: int | None) -> str:
        return "nobody" if seat is None else f"{names[seat]}"

    kind = event["type"]
    if kind == "deal":
        yield (
            f"Round {event['round']}: the Tacocat is on "
            f"{_space(event['position'], marks)}, {event['hand_size']} cards each"
        )
        for seat, hand in enumerate(event.get("hands", ())):  # a spectator's form has none
            yield f"  {who(seat)} is dealt {_cards(hand)}"
    elif kind == "replace":
        if event["discarded"] and "drawn" not in event:  # a spectator's form
            yield f"  {who(event['seat'])} replaces {_cards(event['discarded'])}"
        elif event["discarded"]:
            yield (
                f"  {who(event['seat'])} replaces {_cards(event['discarded'])} "
                f"and draws {_cards(event['drawn'])}"
            )
        else:
            yield f"  {who(event['seat'])} keeps the hand"
    elif kind == "duel":
        a, b = event["cards"]
        outcome = (
            "a tie: duel again"
            if event["winner"] is None
            else f"{who(event['winner'])} attacks first"
        )
        yield f"  duel: {who(0)} {a}, {who(1)} {b}: {outcome}"
    elif kind == "attack":
        yield f"  {who(event['seat'])} attacks with {_cards(event['cards'])}"
    elif kind == "defend":
        sacrificed = iter(event["sacrificed"])
        answers = [
            f"sacrifices {next(sacrificed)} to {attack}"
            if answer is None
            else f"defends {attack} with {answer}"
            for attack, answer in zip(event["attack"], event["answers"], strict=True)
        ]
        yield (
            f"  {who(event['seat'])} {', '.join(answers)}: "
            f"{who(event['trick_winner'])} wins the trick"
        )
    elif kind == "showdown":
        a, b = event["cards"]
        outcome = "a tie" if event["winner"] is None else f"{who(event['winner'])} is lower"
        yield f"  showdown: {who(0)} {a}, {who(1)} {b}: {outcome}"
    elif kind == "round_end":
        if event["winner"] is None:
            yield "  the round is tied: the Tacocat stays, a new round is dealt"
        else:
            yield (
                f"  {who(event['winner'])} wins the round: the Tacocat moves from position "
                f"{event['tacocat_from']} to {event['tacocat_to']}, and "
                f"{_space(event['covered'], marks)} is covered"
            )
    elif kind == "substituted":
        yield (
            f"  the referee moves for {who(event['seat'])} after a failure ({event['reason']}): "
            "the next move is a default, not the bot's own"
        )
    elif kind == "forfeit":
        seat = event["seat"]
        loser = "both seats" if seat is None else who(seat)
        yield f"  {loser} forfeits ({event['reason']}): {event['detail']}"
    elif kind == "game_end":
        winner = event["winner"]
        result = "a draw" if winner is None else f"{who(winner)} wins"
        yield f"Result: {result} ({event['termination']}) after {event['round']} rounds"
