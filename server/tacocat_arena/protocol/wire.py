"""The protocol's mapping of engine values: views, events, rulesets and actions <-> protobuf.

Both ends use it: the referee turns a ``SeatView`` into a ``DecisionRequest`` and a bot's
``Action`` into an engine action; the Python SDK does the reverse.  Keeping both directions
side by side is what keeps them each other's inverse.  What a seat may see is decided once,
in ``tacocat_arena.engine.view``; this module only maps it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from tacocat.v1 import arena_pb2 as pb
from tacocat_arena.engine import (
    Action,
    Attack,
    Card,
    DecisionKind,
    Defend,
    Duel,
    Event,
    Replace,
    RoundResult,
    Ruleset,
    SeatView,
    Termination,
    TieRule,
)
from tacocat_arena.engine.game import ReadOnlyEvent
from tacocat_arena.engine.legal import defence_options, distinct_values, legal_attacks

PROTOCOL_VERSION = 1

KIND_TO_PB = {
    DecisionKind.REPLACE: pb.DECISION_KIND_REPLACE,
    DecisionKind.DUEL: pb.DECISION_KIND_DUEL,
    DecisionKind.ATTACK: pb.DECISION_KIND_ATTACK,
    DecisionKind.DEFEND: pb.DECISION_KIND_DEFEND,
}
KIND_FROM_PB = {value: key for key, value in KIND_TO_PB.items()}
_ACTION_CASE = {
    DecisionKind.REPLACE: "replace",
    DecisionKind.DUEL: "duel",
    DecisionKind.ATTACK: "attack",
    DecisionKind.DEFEND: "defend",
}
TIE_RULE_TO_PB = {TieRule.REPLAY_ROUND: pb.TIE_RULE_REPLAY_ROUND, TieRule.ARROW: pb.TIE_RULE_ARROW}
TERMINATION_TO_PB = {
    Termination.GOAL: pb.END_REASON_GOAL,
    Termination.ROUND_CAP: pb.END_REASON_ROUND_CAP,
    Termination.FORFEIT_TIMEOUT: pb.END_REASON_TIMEOUT,
    Termination.FORFEIT_ILLEGAL: pb.END_REASON_ILLEGAL_ACTION,
    Termination.FORFEIT_DISCONNECT: pb.END_REASON_DISCONNECT,
    Termination.FORFEIT_CRASH: pb.END_REASON_CRASH,
}
TERMINATION_FROM_PB = {value: key for key, value in TERMINATION_TO_PB.items()}

#: Largest card value accepted from the wire; anything above cannot be in any sane deck.
MAX_WIRE_CARD = 1_000_000
#: Most cards accepted in one action from the wire (a hand is far smaller).
MAX_WIRE_CARDS = 64


class MalformedAction(ValueError):
    """An Action that cannot be read as an answer to the pending decision."""


# -- rulesets -----------------------------------------------------------------------------------
def ruleset_to_pb(ruleset: Ruleset) -> pb.Ruleset:
    """The ruleset as sent in GameStart."""
    return pb.Ruleset(
        deck=[pb.CardCount(value=v, count=c) for v, c in sorted(ruleset.deck.items())],
        hand_sizes=ruleset.hand_sizes,
        arrows=[pb.SpaceArrows(seats=sorted(a)) for a in ruleset.arrows],
        tie_rule=TIE_RULE_TO_PB[ruleset.tie_rule],
        max_rounds=ruleset.max_rounds,
    )


def ruleset_from_pb(message: pb.Ruleset) -> Ruleset:
    """Inverse of ``ruleset_to_pb``."""
    tie_rule = TieRule.ARROW if message.tie_rule == pb.TIE_RULE_ARROW else TieRule.REPLAY_ROUND
    return Ruleset(
        deck={c.value: c.count for c in message.deck},
        hand_sizes=tuple(message.hand_sizes),
        arrows=tuple(frozenset(a.seats) for a in message.arrows),
        tie_rule=tie_rule,
        max_rounds=message.max_rounds,
    )


# -- events ---------------------------------------------------------------------------------------
def event_to_pb(event: Event) -> pb.PublicEvent | None:
    """One public event (``public_event`` form) as a PublicEvent; None for events the wire
    reports elsewhere (forfeit and game_end travel in GameEnd)."""
    kind = event["type"]
    if kind == "deal":
        return pb.PublicEvent(
            deal=pb.Deal(
                round=event["round"],
                space=event["position"],
                hand_size=event["hand_size"],
                dealt=event.get("hand", ()),
            )
        )
    if kind == "replace":
        cards = sorted(event["discarded"])
        return pb.PublicEvent(
            replaced=pb.Replaced(
                seat=event["seat"], cards=cards, count=len(cards), drawn=event.get("drawn", ())
            )
        )
    if kind == "substituted":
        return pb.PublicEvent(
            substituted=pb.Substituted(seat=event["seat"], reason=event["reason"])
        )
    if kind == "duel":
        return pb.PublicEvent(
            duel_revealed=pb.DuelRevealed(
                cards=event["cards"], tie=event["winner"] is None, winner_seat=event["winner"]
            )
        )
    if kind == "attack":
        return pb.PublicEvent(attacked=pb.Attacked(seat=event["seat"], cards=event["cards"]))
    if kind == "defend":
        sacrificed = iter(event["sacrificed"])
        answers = [
            pb.DefenceAnswer(attack_card=attack_card, sacrificed=True, card=next(sacrificed))
            if answer is None
            else pb.DefenceAnswer(attack_card=attack_card, card=answer)
            for attack_card, answer in zip(event["attack"], event["answers"], strict=True)
        ]
        return pb.PublicEvent(
            defended=pb.Defended(
                seat=event["seat"], answers=answers, trick_winner=event["trick_winner"]
            )
        )
    if kind == "showdown":
        return pb.PublicEvent(
            showdown=pb.Showdown(
                cards=event["cards"], tie=event["winner"] is None, winner_seat=event["winner"]
            )
        )
    if kind == "round_end":
        return pb.PublicEvent(
            round_ended=pb.RoundEnded(
                round=event["round"],
                tie=event["winner"] is None,
                winner_seat=event["winner"],
                tacocat_from=event["tacocat_from"],
                tacocat_to=event["tacocat_to"],
                covered_space=event["covered"],
            )
        )
    return None


def event_bytes(event: Event) -> bytes | None:
    """``event_to_pb``, serialised."""
    message = event_to_pb(event)
    return None if message is None else message.SerializeToString()


def event_from_pb(
    message: pb.PublicEvent, round_number: int, seat: int | None = None
) -> Event | None:
    """A PublicEvent in the engine's public-event form (see docs/game-record.md), as
    ``public_event`` gives it to ``seat``: with the seat's own dealt hand, and the cards it
    drew in its own replacements.  ``seat=None`` (a spectator) reads the public part only."""
    case = message.WhichOneof("event")
    if case == "deal":
        deal = message.deal
        dealt: Event = {
            "type": "deal",
            "round": deal.round,
            "position": deal.space,
            "hand_size": deal.hand_size,
        }
        if seat is not None and deal.dealt:
            dealt["hand"] = tuple(deal.dealt)
        return dealt
    if case == "replaced":
        replaced = message.replaced
        event: Event = {
            "type": "replace",
            "round": round_number,
            "seat": replaced.seat,
            "discarded": tuple(replaced.cards),
        }
        if seat is not None and replaced.seat == seat:
            event["drawn"] = tuple(replaced.drawn)
        return event
    if case == "substituted":
        return {
            "type": "substituted",
            "round": round_number,
            "seat": message.substituted.seat,
            "reason": message.substituted.reason,
        }
    if case == "duel_revealed":
        duel = message.duel_revealed
        return {
            "type": "duel",
            "round": round_number,
            "cards": tuple(duel.cards),
            "winner": _optional(duel, "winner_seat"),
        }
    if case == "attacked":
        return {
            "type": "attack",
            "round": round_number,
            "seat": message.attacked.seat,
            "cards": tuple(message.attacked.cards),
        }
    if case == "defended":
        defended = message.defended
        return {
            "type": "defend",
            "round": round_number,
            "seat": defended.seat,
            "attack": tuple(a.attack_card for a in defended.answers),
            "answers": tuple(None if a.sacrificed else a.card for a in defended.answers),
            "sacrificed": tuple(a.card for a in defended.answers if a.sacrificed),
            "trick_winner": defended.trick_winner,
        }
    if case == "showdown":
        showdown = message.showdown
        return {
            "type": "showdown",
            "round": round_number,
            "cards": tuple(showdown.cards),
            "winner": _optional(showdown, "winner_seat"),
        }
    if case == "round_ended":
        ended = message.round_ended
        return {
            "type": "round_end",
            "round": ended.round,
            "winner": _optional(ended, "winner_seat"),
            "tacocat_from": ended.tacocat_from,
            "tacocat_to": ended.tacocat_to,
            "covered": _optional(ended, "covered_space"),
        }
    return None


def _optional(message: Any, name: str) -> Any:
    """The value of an ``optional`` field, or None when it is not set (0 is a valid seat)."""
    return getattr(message, name) if message.HasField(name) else None


def round_result_to_pb(result: RoundResult) -> pb.RoundSummary:
    """A finished round as a RoundSummary."""
    return pb.RoundSummary(
        round=result.round,
        tie=result.winner is None,
        winner_seat=result.winner,
        showdown_cards=result.showdown,
        tacocat_from=result.tacocat_from,
        tacocat_to=result.tacocat_to,
        covered_space=result.covered,
    )


def round_result_from_pb(message: pb.RoundSummary) -> RoundResult:
    """Inverse of ``round_result_to_pb``."""
    cards = tuple(message.showdown_cards)
    return RoundResult(
        message.round,
        _optional(message, "winner_seat"),
        (cards[0], cards[1]) if len(cards) == 2 else (0, 0),
        message.tacocat_from,
        message.tacocat_to,
        _optional(message, "covered_space"),
    )


# -- views --------------------------------------------------------------------------------------
def board_to_pb(ruleset: Ruleset, tacocat: int, covered: Sequence[bool]) -> pb.Board:
    """The board: Tacocat position, covered spaces 1..N, hand sizes and arrows."""
    return pb.Board(
        tacocat=tacocat,
        covered=covered[1:-1],
        hand_sizes=ruleset.hand_sizes,
        arrows=[pb.SpaceArrows(seats=sorted(a)) for a in ruleset.arrows],
    )


def covered_from_pb(board: pb.Board) -> tuple[bool, ...]:
    """``board_to_pb``'s covered spaces back as the engine holds them: a flag per position,
    the two goals (never covered) included."""
    return (False, *board.covered, False)


class ViewEncoder:
    """Keeps the protobuf SeatView of one seat of one game up to date, in place.

    A request re-sends the seat's whole view (I1), but little of it changes between two
    requests, so the message is kept and only the changes are written into it: new events
    are appended (a round's history is cleared when the next round starts), finished rounds
    are appended, the board's hand sizes and arrows are written once.  ``message`` may be
    a sub-message of a larger one (the referee keeps one DecisionRequest per seat).
    """

    def __init__(
        self,
        seat: int,
        message: pb.SeatView | None = None,
        converted: list[bytes | None] | None = None,
    ) -> None:
        self.seat = seat
        # The wire form of most events is the same for both seats, so the two seats of a game
        # may share ``converted``: the game's log converted to serialised PublicEvents, by log
        # index.  A deal and a replacement are not (each seat's holds its own dealt hand and
        # drawn cards, I1, and never the other's, I2): those are converted for each seat.
        # Bytes rather than messages: bytes are invisible to the cyclic garbage collector
        # (a message is one more object each full collection walks) and merging them into
        # the request is as fast as appending a message.
        self._converted_log: list[bytes | None] = [] if converted is None else converted
        self.message = pb.SeatView() if message is None else message
        self.message.seat = seat
        self._round = -1
        self._converted = 0
        self._past = 0
        self._static_board = False
        self._last: SeatView | None = None  # the view last written

    def update(self, view: SeatView) -> pb.SeatView:
        """Bring ``message`` up to date with ``view`` (a later view of the same seat)."""
        message = self.message
        if view.round != self._round:
            self._round, self._converted = view.round, 0
            message.round = view.round
            del message.events[:]
        seen, start = view.events, view.log_start
        events = message.events
        shared = self._converted_log
        if len(shared) < start:
            # Earlier rounds' events neither seat converted: never sent again, never read.
            shared.extend([None] * (start - len(shared)))
        for offset in range(self._converted, len(seen)):
            index = start + offset
            event = seen[offset]
            if event["type"] in _SEAT_PRIVATE:
                if len(shared) == index:
                    shared.append(None)  # keeps the indexes; never read
                converted = event_bytes(event)
            else:
                if len(shared) == index:
                    shared.append(event_bytes(event))
                converted = shared[index]
            if converted is not None:
                events.add().MergeFromString(converted)
        self._converted = len(seen)
        if not self._static_board:
            message.board.CopyFrom(board_to_pb(view.ruleset, view.tacocat, view.covered))
            self._static_board = True
        message.board.tacocat = view.tacocat
        # Repeated fields are rewritten only when they changed (comparing tuples is far
        # cheaper than rewriting a protobuf field).
        last = self._last
        if last is None or view.covered is not last.covered:
            del message.board.covered[:]
            message.board.covered.extend(view.covered[1:-1])
        if last is None or view.hand != last.hand:
            del message.hand[:]
            message.hand.extend(view.hand)
        if last is None or view.discards != last.discards:
            del message.discards[:]
            message.discards.extend(view.discards)
        if last is None or view.current_attack != last.current_attack:
            del message.current_attack[:]
            message.current_attack.extend(view.current_attack)
        for result in view.past_rounds[self._past :]:
            message.past_rounds.append(round_result_to_pb(result))
        self._past = len(view.past_rounds)
        message.opponent_hand_size = view.opponent_hand_size
        message.draw_pile_size = view.draw_pile_size
        if view.attacker is None:
            message.ClearField("attacker")
        else:
            message.attacker = view.attacker
        self._last = view
        return message

    def events(self, view: SeatView) -> list[pb.PublicEvent]:
        """This round's public events of ``view`` as protobuf messages."""
        return list(self.update(view).events)


#: The events whose seat's form holds cards only that seat may know (``public_event``).
_SEAT_PRIVATE = frozenset(("deal", "replace"))


def write_legal(
    target: pb.LegalOptions, view: SeatView, *, simultaneous: bool, second: bool
) -> None:
    """Overwrite ``target`` with the legal options of ``view``'s pending decision."""
    kind = view.kind
    if kind is DecisionKind.REPLACE:
        target.ParseFromString(_replace_options(view.max_replace, simultaneous, second))
    elif kind is DecisionKind.DEFEND:
        target.ParseFromString(_defend_options(view.current_attack, view.hand))
    else:
        target.ParseFromString(_hand_options(kind is DecisionKind.DUEL, view.hand))


# The option messages depend only on a few small tuples, which repeat across decisions and
# games: they are built once and kept serialised (parsing them into the request is as fast
# as copying a message, and bytes, unlike messages, are nothing the cyclic garbage
# collector has to walk).  A few thousand each: the hands keep coming for tens of thousands
# of games, and a cache that only fills looks like a leak in a long-running arena.
@lru_cache(maxsize=64)
def _replace_options(max_discard: int, simultaneous: bool, second: bool) -> bytes:
    return pb.LegalOptions(
        replace=pb.ReplaceOptions(
            min_discard=0, max_discard=max_discard, simultaneous=simultaneous, second=second
        )
    ).SerializeToString()


@lru_cache(maxsize=4096)
def _hand_options(duel: bool, hand: tuple[Card, ...]) -> bytes:
    # Keyed by a bool, not the DecisionKind: a key holding an enum member stays tracked.
    if duel:
        message = pb.LegalOptions(duel=pb.DuelOptions(values=distinct_values(hand)))
    else:
        message = pb.LegalOptions(
            attack=pb.AttackOptions(attacks=[pb.Attack(cards=a) for a in legal_attacks(hand)])
        )
    return message.SerializeToString()


@lru_cache(maxsize=4096)
def _defend_options(attack: tuple[Card, ...], hand: tuple[Card, ...]) -> bytes:
    options = defence_options(attack, hand)
    return pb.LegalOptions(
        defend=pb.DefendOptions(
            cards=[
                pb.AttackCardOptions(attack_card=card, defend_with=values)
                for card, values in zip(attack, options, strict=True)
            ]
        )
    ).SerializeToString()


def view_from_pb(
    message: pb.SeatView, ruleset: Ruleset, kind: DecisionKind | None, max_replace: int = 0
) -> SeatView:
    """Rebuild an engine ``SeatView`` from the wire (the SDK's side): the same value as
    ``build_view`` gives in process for that seat, events included (tests/test_parity.py),
    except ``log_start``, an index into the referee's whole log, which is 0 here."""
    covered = covered_from_pb(message.board)
    seat = message.seat
    events = tuple(
        ReadOnlyEvent(e)
        for e in (event_from_pb(ev, message.round, seat) for ev in message.events)
        if e is not None
    )
    return SeatView(
        seat=message.seat,
        round=message.round,
        kind=kind,
        hand=tuple(message.hand),
        opponent_hand_size=message.opponent_hand_size,
        draw_pile_size=message.draw_pile_size,
        tacocat=message.board.tacocat,
        covered=covered,
        ruleset=ruleset,
        discards=tuple(message.discards),
        events=events,
        log_start=0,
        past_rounds=tuple(round_result_from_pb(r) for r in message.past_rounds),
        attacker=_optional(message, "attacker"),
        current_attack=tuple(message.current_attack),
        max_replace=max_replace,
    )


# -- actions -------------------------------------------------------------------------------------
def action_to_pb(
    game_id: str, request_id: int, action: Action, fallback: str | None = None
) -> pb.Action:
    """An engine action as the Action answering a request; ``fallback`` (one line) says the
    action is not the bot's own decision but a default played because its code failed."""
    message = pb.Action(game_id=game_id, request_id=request_id)
    if fallback is not None:
        message.fallback = fallback
    if isinstance(action, Replace):
        message.replace.discard.extend(action.cards)
    elif isinstance(action, Duel):
        message.duel.card = action.card
    elif isinstance(action, Attack):
        message.attack.cards.extend(action.cards)
    else:
        message.defend.answers.extend(
            pb.DefenceChoice(sacrifice=True) if a is None else pb.DefenceChoice(defend_with=a)
            for a in action.answers
        )
    return message


def action_from_pb(message: pb.Action, kind: DecisionKind) -> Action:
    """Read a bot's Action as an answer to a ``kind`` decision; MalformedAction if it is not
    one (wrong case, absurd sizes).  Legality is the engine's business, not this one's."""
    case = message.WhichOneof("action")
    if case != _ACTION_CASE[kind]:
        raise MalformedAction(
            f"the pending decision is {kind.value}: answer with Action.{_ACTION_CASE[kind]}, "
            f"not {'nothing' if case is None else 'Action.' + case}"
        )
    if case == "duel":
        return _duel(_card(message.duel.card))
    if case == "replace":
        # Ascending, as every multiset on the wire: the Replaced event each seat gets then
        # names the discards in the order the engine's own event does.
        return _replace(tuple(sorted(_cards(message.replace.discard))))
    if case == "attack":
        return _attack(_cards(message.attack.cards))
    answers = message.defend.answers
    if len(answers) > MAX_WIRE_CARDS:
        raise MalformedAction(f"{len(answers)} defence answers is more than any hand holds")
    result: list[Card | None] = []
    for index, choice in enumerate(answers):
        which = choice.WhichOneof("choice")
        if which == "defend_with":
            result.append(_card(choice.defend_with))
        elif which == "sacrifice" and choice.sacrifice:
            result.append(None)
        else:
            raise MalformedAction(
                f"defence answer {index} sets neither defend_with nor sacrifice=true"
            )
    return _defend(tuple(result))


# Actions are immutable values, so the same answer is one shared object: a game in flight
# then holds no object of its own per action for the garbage collector to walk (see
# referee/heap.py), and a cache hit is cheaper than building a frozen dataclass.
_duel = lru_cache(maxsize=64)(Duel)
_replace = lru_cache(maxsize=4096)(Replace)
_attack = lru_cache(maxsize=4096)(Attack)
_defend = lru_cache(maxsize=16384)(Defend)


def _card(value: int) -> Card:
    if not 1 <= value <= MAX_WIRE_CARD:
        raise MalformedAction(f"card value {value} is out of range")
    return int(value)


def _cards(values: Iterable[int]) -> tuple[Card, ...]:
    cards = tuple(values)
    if len(cards) > MAX_WIRE_CARDS:
        raise MalformedAction(f"{len(cards)} cards is more than any hand holds")
    return tuple(_card(v) for v in cards)


def default_action(view: SeatView) -> Action:
    """The referee's default legal action (FailurePolicy DEFAULT_ACTION; see arena.proto)."""
    kind = view.kind
    if kind is DecisionKind.DUEL:
        return Duel(view.hand[0])
    if kind is DecisionKind.ATTACK:
        return Attack(legal_attacks(view.hand)[0])
    if kind is DecisionKind.DEFEND:
        return Defend((None,) * len(view.current_attack))
    return Replace(())


# -- errors --------------------------------------------------------------------------------------
def ignored_error(
    game_id: str, request_id: int, code: pb.ErrorCode, text: str
) -> pb.RefereeMessage:
    """The Error answering a message the referee ignores (it changes nothing: the request,
    if any, stays open and its clock runs on)."""
    return pb.RefereeMessage(
        error=pb.Error(
            game_id=game_id,
            request_id=request_id,
            code=code,
            message=text,
            outcome=pb.ERROR_OUTCOME_IGNORED,
        )
    )


def describe(message: Any) -> str:
    """A short text form of a protobuf message for error texts."""
    return " ".join(str(message).split())[:200]
