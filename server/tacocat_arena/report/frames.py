"""The state of a recorded game after each of its events: what the replay page steps through.

A frame is the whole table after one event of the full log (docs/game-record.md): both
hands, the discard pile in the order cards reached it, the size of the draw pile, the
Tacocat's position, the tiles placed so far and who won the rounds they mark. It reads only
the record's events, as any re-verifier in another language would, so the page needs no
engine and no script of its own that knows the rules: it only draws frames.

Hidden cards are shown because a record is published only after its game is over; a page
about a game in progress must be built from the public per-seat form instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tacocat_arena.engine import Ruleset
from tacocat_arena.play.narrate import describe_event

Card = int


class FrameError(ValueError):
    """A record's events do not describe a game that can be drawn."""


@dataclass(frozen=True)
class Tile:
    """A covered space (M2) and the seat whose round win placed the tile there."""

    space: int
    seat: int


@dataclass(frozen=True)
class Frame:
    """The table after one event; ``index`` is the event's position in the record's log."""

    index: int
    round: int
    kind: str
    text: tuple[str, ...]
    hands: tuple[tuple[Card, ...], tuple[Card, ...]]
    discards: tuple[Card, ...]
    draw_pile: int
    position: int
    tiles: tuple[Tile, ...]
    rounds_won: tuple[int, int]
    played: tuple[Card, ...]
    actor: int | None

    def to_json(self) -> dict[str, Any]:
        """The frame as the replay page's script reads it."""
        return {
            "i": self.index,
            "round": self.round,
            "kind": self.kind,
            "text": list(self.text),
            "hands": [list(self.hands[0]), list(self.hands[1])],
            "discards": list(self.discards),
            "draw": self.draw_pile,
            "pos": self.position,
            "tiles": [[tile.space, tile.seat] for tile in self.tiles],
            "won": list(self.rounds_won),
            "played": list(self.played),
            "actor": self.actor,
        }


def _take(hand: list[Card], cards: Sequence[Card], where: str) -> None:
    for card in cards:
        try:
            hand.remove(card)
        except ValueError:
            raise FrameError(f"{where}: card {card} is not in the hand {sorted(hand)}") from None


def replay_frames(record: Mapping[str, Any], names: Sequence[str]) -> list[Frame]:
    """One frame per event of ``record`` (version 1 or 2), in order; raises FrameError when an
    event refers to a card that is not there."""
    ruleset = Ruleset.from_dict(record["ruleset"])
    hands: list[list[Card]] = [[], []]
    discards: list[Card] = []
    draw = 0
    position = ruleset.centre
    tiles: list[Tile] = []
    won = [0, 0]
    round_number = 0
    frames: list[Frame] = []
    for index, event in enumerate(record.get("events", [])):
        kind = event["type"]
        where = f"event {index} ({kind}, round {event.get('round')})"
        round_number = int(event.get("round", round_number))
        played: tuple[Card, ...] = ()
        actor: int | None = event.get("seat")
        if kind == "deal":
            hands = [sorted(event["hands"][0]), sorted(event["hands"][1])]
            discards = []
            draw = len(event["draw_pile"])
            position = int(event["position"])
        elif kind == "replace":
            seat = int(event["seat"])
            _take(hands[seat], event["discarded"], where)
            hands[seat] = sorted(hands[seat] + list(event["drawn"]))
            discards += event["discarded"]
            draw -= len(event["drawn"])
            played = tuple(event["discarded"])
        elif kind == "duel":
            for seat in (0, 1):
                _take(hands[seat], [event["cards"][seat]], where)
            discards += event["cards"]
            played = tuple(event["cards"])
        elif kind == "attack":
            _take(hands[int(event["seat"])], event["cards"], where)
            discards += event["cards"]
            played = tuple(event["cards"])
        elif kind == "defend":
            seat = int(event["seat"])
            named = [answer for answer in event["answers"] if answer is not None]
            _take(hands[seat], named + list(event["sacrificed"]), where)
            discards += named + list(event["sacrificed"])
            played = tuple(named + list(event["sacrificed"]))
        elif kind == "showdown":
            played = tuple(event["cards"])
        elif kind == "round_end":
            if event["winner"] is not None:
                won[int(event["winner"])] += 1
                tiles.append(Tile(int(event["covered"]), int(event["winner"])))
            position = int(event["tacocat_to"])
            actor = event["winner"]
        elif kind == "game_end":
            actor = event["winner"]
        frames.append(
            Frame(
                index=index,
                round=round_number,
                kind=kind,
                text=tuple(line.strip() for line in describe_event(event, names)) or (kind,),
                hands=(tuple(hands[0]), tuple(hands[1])),
                discards=tuple(discards),
                draw_pile=draw,
                position=position,
                tiles=tuple(tiles),
                rounds_won=(won[0], won[1]),
                played=played,
                actor=actor,
            )
        )
    return frames
