"""A person's seat, between the referee's client and the browser: what the page may show
and which answers it may send.

The person is a client of the referee like any bot (``human.client``): each
DecisionRequest's view comes here as the engine's ``SeatView`` (``wire.view_from_pb``, the
value ``build_view`` gives that seat, and nothing else), and goes to the page as JSON
(``view_json``) with the engine's legal options (``legal_json``).  The page's answer comes
back as JSON naming the request it answers; ``Relay.answer`` refuses it with a message when
that request is no longer the open one (stale, replayed, or a guess) or when it is not a legal
answer to it (checked by the engine's own rules, so an illegal click can never cost the person
the game), and only then queues the engine action for the client to send.

Nothing here does I/O: the tests drive a ``Relay`` in process (tests/test_human_relay.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tacocat_arena.engine import (
    Action,
    Attack,
    DecisionKind,
    Defend,
    Duel,
    IllegalActionError,
    Replace,
    RoundResult,
    SeatView,
    check_attack_shape,
    check_defence,
    legal_options,
)
from tacocat_arena.engine.legal import remove_cards
from tacocat_arena.stats.tables import GameResult


class SeatResult(enum.Enum):
    """A game's result for the person's seat: the page's (from the referee's GameEnd), the
    history's and ``verify``'s (from the stored result), a pair's points."""

    WIN = "win"
    LOSS = "loss"
    DRAW = "draw"
    NO_CONTEST = "no contest"

    @classmethod
    def of(cls, result: GameResult, seat: int) -> SeatResult:
        """The result of finished game ``result`` for ``seat``."""
        if result.winner is None:
            return cls.DRAW
        return cls.WIN if result.winner == seat else cls.LOSS


class TwinOffer(enum.Enum):
    """Where the twin game's offer is (``Relay.twin``; None: not offered)."""

    OFFERED = "offered"
    ACCEPTED = "accepted"
    DECLINED = "declined"


#: A result's points in a pair's score (no contest: none).
POINTS = {SeatResult.WIN: 1.0, SeatResult.DRAW: 0.5}


class Refusal(ValueError):
    """A page's answer the relay does not pass on; the message is shown to the person."""


def view_json(view: SeatView) -> dict[str, Any]:
    """The seat's view as the page gets it: every field of ``SeatView`` but the ruleset
    object (its board part is given as plain lists) and ``log_start`` (an index into the
    referee's whole log, meaningless to a page)."""
    ruleset = view.ruleset
    return {
        "seat": view.seat,
        "round": view.round,
        "kind": None if view.kind is None else view.kind.value,
        "hand": list(view.hand),
        "opponent_hand_size": view.opponent_hand_size,
        "draw_pile_size": view.draw_pile_size,
        "tacocat": view.tacocat,
        "covered": list(view.covered),
        "spaces": ruleset.spaces,
        "hand_sizes": list(ruleset.hand_sizes),
        "arrows": [list(seats) for seats in ruleset.arrows],
        "discards": list(view.discards),
        "events": [dict(event) for event in view.events],
        "past_rounds": [round_json(result) for result in view.past_rounds],
        "attacker": view.attacker,
        "current_attack": list(view.current_attack),
        "max_replace": view.max_replace,
    }


def round_json(result: RoundResult) -> dict[str, Any]:
    """One finished round (public to both seats)."""
    return {
        "round": result.round,
        "winner": result.winner,
        "showdown": list(result.showdown),
        "tacocat_from": result.tacocat_from,
        "tacocat_to": result.tacocat_to,
        "covered": result.covered,
    }


def legal_json(view: SeatView) -> dict[str, Any] | None:
    """The engine's legal options of the view's decision (None: none pending)."""
    options = legal_options(view)
    if options is None:
        return None
    return {
        "kind": options.kind.value,
        "max_replace": options.max_replace,
        "duel_values": list(options.duel_values),
        "attacks": [list(attack) for attack in options.attacks],
        "defence": [list(values) for values in options.defence],
    }


def parse_choice(view: SeatView, data: Any) -> Action:
    """The engine action a page's ``action`` object names, if it is a legal answer to the
    view's decision; ``Refusal`` (naming the rule) otherwise.  Shapes are checked before
    values: the body is a stranger's JSON."""
    kind = view.kind
    if kind is None:
        raise Refusal("there is no decision to answer")
    if not isinstance(data, Mapping) or data.get("kind") != kind.value:
        raise Refusal(f"the decision is {kind.value}: answer it with kind {kind.value!r}")
    try:
        if kind is DecisionKind.REPLACE:
            cards = _cards(data.get("cards"))
            if len(cards) > view.max_replace:
                raise Refusal(
                    f"R2: discard at most {view.max_replace} cards here, not {len(cards)}"
                )
            remove_cards(view.hand, cards, "R1")
            return Replace(tuple(sorted(cards)))
        if kind is DecisionKind.DUEL:
            (card,) = _cards(data.get("cards"), exactly=1)
            remove_cards(view.hand, (card,), "D1")
            return Duel(card)
        if kind is DecisionKind.ATTACK:
            cards = tuple(sorted(_cards(data.get("cards"))))
            remove_cards(view.hand, cards, "P1")
            check_attack_shape(cards, len(view.hand))
            return Attack(cards)
        answers = data.get("answers")
        if not isinstance(answers, list) or len(answers) > len(view.hand):
            raise Refusal("a defence is a list of answers, one per attack card")
        named = tuple(None if a is None else _card(a) for a in answers)
        check_defence(view.current_attack, named, view.hand)
        return Defend(named)
    except IllegalActionError as error:
        raise Refusal(str(error)) from None


def _card(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 1000:
        raise Refusal(f"{value!r} is not a card value")
    return value


def _cards(values: Any, *, exactly: int | None = None) -> tuple[int, ...]:
    if not isinstance(values, list) or len(values) > 64:
        raise Refusal("cards must be a list of card values")
    if exactly is not None and len(values) != exactly:
        raise Refusal(f"choose exactly {exactly} card")
    return tuple(_card(value) for value in values)


@dataclass(frozen=True)
class Open:
    """The request the page may answer now: the page's number for it (``ask``: a stale or
    replayed number is refused), the referee's game and request id, its view, and when its
    clock runs out (``time.time()`` seconds; None: no clock).

    The page answers by ``ask``, not by the referee's request id: each game of a pair is
    played in a session of its own, whose request ids start again at 1, so an answer to the
    first game's request 3 must not pass for one to the twin game's."""

    ask: int
    game_id: str
    request_id: int
    view: SeatView
    deadline: float | None


class Relay:
    """The state of the person's seat, as the page shows it, and the answers on their way.

    The client calls the ``on_*`` methods as the referee's messages arrive; the page reads
    ``state()`` (a JSON-able dict, numbered by ``seq``) after each ``wait_change``, and
    POSTs answers to ``answer``.  An accepted answer is put on ``answers`` for the client.
    """

    def __init__(self, name: str, opponent: str, *, games: int = 1) -> None:
        self.name = name
        self.opponent = opponent
        self.seq = 0
        self.games = games
        self.game_index = 0
        self.seat: int | None = None
        self.allowance_ms = 0
        self.open: Open | None = None
        #: The page's numbers of requests, one more per request over the whole match.
        self.asks = 0
        self.answered: set[int] = set()
        #: The page's last view: the open request's, or the last one seen (between
        #: requests, while the bot thinks).
        self.view: dict[str, Any] | None = None
        self.notice = ""
        self.ended: dict[str, Any] | None = None
        self.results: list[dict[str, Any]] = []
        #: The twin game's offer (None: not offered).
        self.twin: TwinOffer | None = None
        self.finished = False
        self.answers: asyncio.Queue[tuple[str, int, Action]] = asyncio.Queue()
        self._changed = asyncio.Event()
        self._twin_answer: asyncio.Future[bool] | None = None

    # -- the referee's side ------------------------------------------------------------------
    def on_game_start(self, game_id: str, seat: int, allowance_ms: int) -> None:
        """A game starts: the person's seat and clock."""
        self.game_index += 1
        self.seat = seat
        self.allowance_ms = allowance_ms
        self.open = None
        self.ended = None
        self.view = None
        self.notice = f"game {self.game_index}: you are seat {seat}"
        self._touch()

    def on_request(
        self, game_id: str, request_id: int, view: SeatView, time_left_ms: int, bank_ms: int
    ) -> None:
        """A decision the person must answer (the referee's clock already runs)."""
        deadline = time.time() + (time_left_ms + bank_ms) / 1000 if time_left_ms else None
        self.asks += 1
        self.open = Open(self.asks, game_id, request_id, view, deadline)
        self.view = view_json(view)
        self.notice = ""
        self._touch()

    def on_error(self, game_id: str, request_id: int, message: str) -> None:
        """The referee refused or timed out a decision of the person's."""
        current = self.open
        if current is not None and (current.game_id, current.request_id) == (game_id, request_id):
            self.open = None
        self.notice = message
        self._touch()

    def on_game_end(self, result: Mapping[str, Any], view: Mapping[str, Any] | None) -> None:
        """The game is over: its result (from the person's side) and final public view."""
        self.open = None
        self.ended = dict(result)
        self.results.append(dict(result))
        if view is not None:
            self.view = dict(view)
        self._touch()

    def finish(self) -> None:
        """Every game is over: the page says so and stops its stream."""
        self.finished = True
        self.open = None
        self._touch()

    # -- the page's side ---------------------------------------------------------------------
    def answer(self, ask: Any, data: Any) -> Action:
        """Accept the page's answer to its request number ``ask``, or raise ``Refusal``."""
        if not isinstance(ask, int) or isinstance(ask, bool):
            raise Refusal("the answer names no request")
        current = self.open
        if ask in self.answered:
            raise Refusal(f"request {ask} was already answered: this is a replay")
        if current is None or current.ask != ask:
            raise Refusal(
                f"request {ask} is not the open one (it timed out, its game ended or it "
                "never was): your answer was not sent"
            )
        action = parse_choice(current.view, data)
        self.answered.add(ask)
        self.open = None
        self.notice = f"you played: {action}"
        self.answers.put_nowait((current.game_id, current.request_id, action))
        self._touch()
        return action

    async def offer_twin(self, timeout_s: float) -> bool:
        """Offer the twin game and wait for the person's choice (False after ``timeout_s``:
        a person who left does not get a second game played in their absence)."""
        self.twin = TwinOffer.OFFERED
        self._twin_answer = asyncio.get_running_loop().create_future()
        self._touch()
        try:
            accepted = await asyncio.wait_for(asyncio.shield(self._twin_answer), timeout_s)
        except TimeoutError:
            accepted = False
        self.twin = TwinOffer.ACCEPTED if accepted else TwinOffer.DECLINED
        self._touch()
        return accepted

    def choose_twin(self, accept: Any) -> None:
        """The person's answer to the twin offer; ``Refusal`` when none is open."""
        if not isinstance(accept, bool):
            raise Refusal("answer the offer with true or false")
        answer = self._twin_answer
        if self.twin is not TwinOffer.OFFERED or answer is None or answer.done():
            raise Refusal("no twin game is on offer")
        answer.set_result(accept)

    def state(self) -> dict[str, Any]:
        """What the page shows: only the person's own view and public facts."""
        current = self.open
        return {
            "seq": self.seq,
            "you": self.name,
            "opponent": self.opponent,
            "seat": self.seat,
            "game": self.game_index,
            "games": self.games,
            "allowance_ms": self.allowance_ms,
            "request": None
            if current is None
            else {
                "id": current.ask,
                "kind": current.view.kind.value if current.view.kind else None,
                "deadline": current.deadline,
                "legal": legal_json(current.view),
            },
            "view": self.view,
            "notice": self.notice,
            "ended": self.ended,
            "results": self.results,
            "pair_points": pair_score(self.results),
            "twin": None if self.twin is None else self.twin.value,
            "finished": self.finished,
            "now": time.time(),
        }

    def _touch(self) -> None:
        """A change: wake every stream waiting in ``wait_change`` (sync: the client's and
        the page's handlers call it between awaits)."""
        self.seq += 1
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_change(self, seen: int, timeout_s: float) -> None:
        """Return once ``seq`` is past ``seen``, or after ``timeout_s``."""
        if self.seq != seen:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout_s)


def pair_score(results: Sequence[Mapping[str, Any]]) -> float | None:
    """The person's points over a duplicate pair (win 1, draw 0.5), the luck-corrected score:
    the same deal from both seats, so a lucky deal counts once for each side.  None before
    both games are done."""
    if len(results) < 2:
        return None
    points = {result.value: value for result, value in POINTS.items()}
    return sum(points.get(str(r.get("result")), 0.0) for r in results[:2])
