"""The state of a recorded game after each of its events: what the replay page steps through.

A frame is the whole table after one event of the full log (docs/game-record.md): both
hands, the discard pile in the order cards reached it, the size of the draw pile, the
Tacocat's position, the tiles placed so far and who won the rounds they mark. It reads only
the record's events, as any re-verifier in another language would, so the page needs no
engine and no script of its own that knows the rules: it only draws frames.

Hidden cards are shown because a record is published only after its game is over. A game in
progress is drawn from its spectator events instead (``spectator_frames``: the public form of
``engine.spectator_event``): the same table, hands as sizes only, and no hidden card anywhere
in its frames, so the live page needs no second viewer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
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
    """The table after one event; ``index`` is the event's position in the game's log.

    ``hands`` is None in a spectator's frame (a game in progress): only ``hand_sizes`` then.
    """

    index: int
    round: int
    kind: str
    text: tuple[str, ...]
    hands: tuple[tuple[Card, ...], tuple[Card, ...]] | None
    hand_sizes: tuple[int, int]
    discards: tuple[Card, ...]
    draw_pile: int
    position: int
    tiles: tuple[Tile, ...]
    rounds_won: tuple[int, int]
    played: tuple[Card, ...]
    actor: int | None

    def to_json(self) -> dict[str, Any]:
        """The frame as the replay page's script reads it (no ``hands`` key when hidden)."""
        shown: dict[str, Any] = {
            "i": self.index,
            "round": self.round,
            "kind": self.kind,
            "text": list(self.text),
            "sizes": list(self.hand_sizes),
            "discards": list(self.discards),
            "draw": self.draw_pile,
            "pos": self.position,
            "tiles": [[tile.space, tile.seat] for tile in self.tiles],
            "won": list(self.rounds_won),
            "played": list(self.played),
            "actor": self.actor,
        }
        if self.hands is not None:
            shown["hands"] = [list(self.hands[0]), list(self.hands[1])]
        return shown


class _Table:
    """The table as the events so far left it; ``hands`` stay None while they are hidden."""

    def __init__(self, ruleset: Ruleset) -> None:
        self.ruleset = ruleset
        #: The numbers printed on the spaces (their hand sizes), as the narration names them.
        self.marks = tuple(ruleset.hand_size_at(p) for p in range(1, ruleset.spaces + 1))
        self.hands: list[list[Card]] | None = None
        self.sizes = [0, 0]
        self.discards: list[Card] = []
        self.draw = 0
        self.position = ruleset.centre
        self.tiles: list[Tile] = []
        self.won = [0, 0]

    def take(self, seat: int, cards: Sequence[Card], where: str) -> None:
        """Cards leave ``seat``'s hand for the discard pile."""
        self.sizes[seat] -= len(cards)
        self.discards += cards
        if self.hands is None:
            return
        for card in cards:
            try:
                self.hands[seat].remove(card)
            except ValueError:
                hand = sorted(self.hands[seat])
                raise FrameError(f"{where}: card {card} is not in the hand {hand}") from None

    def apply(self, event: Mapping[str, Any], where: str) -> tuple[tuple[Card, ...], int | None]:
        """Play ``event`` on the table; return the cards it played and who acted."""
        kind = event["type"]
        actor: int | None = event.get("seat")
        if kind == "deal":
            size = int(event["hand_size"])
            self.sizes = [size, size]
            shown = event.get("hands")
            self.hands = None if shown is None else [sorted(shown[0]), sorted(shown[1])]
            self.discards = []
            self.draw = self.ruleset.deck_size - 2 * size
            self.position = int(event["position"])
            return (), actor
        if kind == "replace":
            seat, discarded = int(event["seat"]), list(event["discarded"])
            self.take(seat, discarded, where)
            self.sizes[seat] += len(discarded)  # as many drawn as discarded (R1)
            self.draw -= len(discarded)
            if self.hands is not None:
                self.hands[seat] = sorted(self.hands[seat] + list(event["drawn"]))
            return tuple(discarded), actor
        if kind == "duel":
            for seat in (0, 1):
                self.take(seat, [event["cards"][seat]], where)
            return tuple(event["cards"]), actor
        if kind == "attack":
            self.take(int(event["seat"]), event["cards"], where)
            return tuple(event["cards"]), actor
        if kind == "defend":
            named = [answer for answer in event["answers"] if answer is not None]
            cards = named + list(event["sacrificed"])
            self.take(int(event["seat"]), cards, where)
            return tuple(cards), actor
        if kind == "showdown":
            return tuple(event["cards"]), actor
        if kind == "round_end":
            if event["winner"] is not None:
                self.won[int(event["winner"])] += 1
                self.tiles.append(Tile(int(event["covered"]), int(event["winner"])))
            self.position = int(event["tacocat_to"])
        return (), event.get("winner") if kind in ("round_end", "game_end") else actor

    def frame(self, index: int, round_number: int, event: Mapping[str, Any], names: Sequence[str],
              played: tuple[Card, ...], actor: int | None) -> Frame:  # fmt: skip
        """The table now, as the frame of ``event``."""
        kind = event["type"]
        hands = self.hands
        return Frame(
            index=index,
            round=round_number,
            kind=kind,
            text=tuple(line.strip() for line in describe_event(event, names, self.marks))
            or (kind,),
            hands=None if hands is None else (tuple(hands[0]), tuple(hands[1])),
            hand_sizes=(self.sizes[0], self.sizes[1]),
            discards=tuple(self.discards),
            draw_pile=self.draw,
            position=self.position,
            tiles=tuple(self.tiles),
            rounds_won=(self.won[0], self.won[1]),
            played=played,
            actor=actor,
        )


def _frames(
    events: Iterable[Mapping[str, Any]], names: Sequence[str], ruleset: Ruleset
) -> list[Frame]:
    table = _Table(ruleset)
    round_number = 0
    frames: list[Frame] = []
    for index, event in enumerate(events):
        where = f"event {index} ({event['type']}, round {event.get('round')})"
        round_number = int(event.get("round", round_number))
        played, actor = table.apply(event, where)
        frames.append(table.frame(index, round_number, event, names, played, actor))
    return frames


def replay_frames(record: Mapping[str, Any], names: Sequence[str]) -> list[Frame]:
    """One frame per event of ``record`` (version 1 or 2), in order; raises FrameError when an
    event refers to a card that is not there."""
    return _frames(record.get("events", []), names, Ruleset.from_dict(record["ruleset"]))


def spectator_frames(
    events: Iterable[Mapping[str, Any]], names: Sequence[str], ruleset: Ruleset
) -> list[Frame]:
    """One frame per spectator event of a game in progress (``engine.spectator_event``'s
    form): the public table, hands as sizes, nothing hidden."""
    return _frames(events, names, ruleset)
