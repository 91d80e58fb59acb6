"""Write the golden records of tests/golden/ (run from the repository root, only on purpose).

Each record is a game played in process by seeded policies, as the referee would record it
(record version 2: timings, refusals, substitution marks).  tests/test_golden_records.py
replays every file and requires the engine to reproduce its events exactly: a change to the
shuffle or to an event's shape fails there.  After such a change is intended, run
``python tests/golden/regenerate.py`` and review the diff.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from google.protobuf import text_format

from tacocat.v1 import arena_pb2 as pb
from tacocat_arena.engine import (
    DEFAULT_RULESET,
    Action,
    ActionError,
    Attack,
    DecisionKind,
    DecisionNote,
    Duel,
    Failure,
    Game,
    Refused,
    Ruleset,
    Termination,
    TieRule,
    build_view,
    to_record,
)
from tacocat_arena.play.policies import GreedyPolicy, RandomPolicy
from tacocat_arena.protocol.wire import MalformedAction, action_from_pb, default_action

HERE = Path(__file__).resolve().parent
CLOCK = {"decision_ms": 1000, "bank_ms": 2000, "grace_ms": 100}
ARROW_SHORT = Ruleset(tie_rule=TieRule.ARROW, max_rounds=3)


def play(
    ruleset: Ruleset, seed: int, *, stop_after: int | None = None, substitute: bool = False
) -> tuple[Game, dict[int, DecisionNote]]:
    """Greedy (seat 0) against random (seat 1); every decision takes 10 + index ms."""
    game = Game(ruleset, seed)
    policies = (GreedyPolicy(), RandomPolicy(random.Random(seed)))
    notes: dict[int, DecisionNote] = {}
    pending = {"timeout", "illegal"} if substitute else set()
    while not game.is_over and (stop_after is None or len(game.actions) < stop_after):
        seat = min(game.pending)
        view = build_view(game, seat)
        index = len(game.actions)
        wanted = "illegal" if view.kind is DecisionKind.DUEL else "timeout"
        if seat == 1 and wanted in pending:
            # Seat 1's first decision times out, its first duel card is illegal: the referee
            # plays the default action in its place each time.
            pending.discard(wanted)
            if wanted == "illegal":
                error = f"D1: card 99 is not in your hand {view.hand}"
                refused = Refused(Failure.ILLEGAL, error, "D1", Duel(99))
                game.substitute(seat, default_action(view), Failure.ILLEGAL)
                notes[index] = DecisionNote(12.0, error, refused)
            else:
                game.substitute(seat, default_action(view), Failure.TIMEOUT)
                notes[index] = DecisionNote(3100.5, "no answer within 1000 ms plus 2000 ms bank")
            continue
        game.apply(seat, policies[seat].act(view))
        notes[index] = DecisionNote(10.0 + index)
    return game, notes


def forfeit(termination: Termination, seed: int) -> dict[str, object]:
    game, notes = play(DEFAULT_RULESET, seed, stop_after=9)
    seat = min(game.pending)
    refused = None
    ms: float | None = 25.0
    if termination is Termination.FORFEIT_TIMEOUT:
        detail, ms = f"seat {seat}: no answer within 1000 ms plus 2000 ms bank", 3100.0
    elif termination is Termination.FORFEIT_ILLEGAL:
        refused = refusal(game, seat)
        detail = f"seat {seat}: {refused.error}"
    else:
        detail, ms = f"seat {seat}: the bot went away ({termination.value})", None
    game.forfeit(seat, termination, detail)
    notes[len(game.actions) - 1] = DecisionNote(ms, refused=refused)
    policy = "forfeit"
    return to_record(game, notes, {**CLOCK, "failure_policy": policy}, ("greedy", "random"))


def refusal(game: Game, seat: int) -> Refused:
    """How the referee refuses the answer this fixture's bot sends: an attack of its whole
    hand (P6), a duel card it does not hold (D1), and to any other decision the duel card
    99, an answer of the wrong kind, which the wire cannot decode (malformed, no rule).
    The texts are the engine's and the wire's own, as the referee records them."""
    view = build_view(game, seat)
    assert view.kind is not None
    sent: Action = Attack(view.hand) if view.kind is DecisionKind.ATTACK else Duel(99)
    message = pb.Action(attack=pb.Attack(cards=list(view.hand)))
    if isinstance(sent, Duel):
        message = pb.Action(duel=pb.Duel(card=99))
    try:
        action_from_pb(message, view.kind)
    except MalformedAction as error:
        arrived = text_format.MessageToString(message, as_one_line=True)
        note = f"could not be decoded as a {view.kind.value}; the message was: {arrived}"
        return Refused(Failure.MALFORMED, str(error), note=note)
    try:
        game.copy().apply(seat, sent)
    except ActionError as error:
        return Refused(Failure.ILLEGAL, str(error), error.rule, sent)
    raise AssertionError(f"{sent} is legal for seat {seat}")


def arrow_seed() -> int:
    """The first seed whose short arrow-rule game has a tied showdown that the arrow decides
    (the round still has a winner)."""
    for seed in range(1000):
        game, _ = play(ARROW_SHORT, seed)
        tied = {e["round"] for e in game.events if e["type"] == "showdown" and e["winner"] is None}
        won = {
            e["round"] for e in game.events if e["type"] == "round_end" and e["winner"] is not None
        }
        if tied & won:
            return seed
    raise LookupError("no seed gives a tie decided by the arrow")


def golden() -> dict[str, dict[str, object]]:
    """Every golden record, by file name."""
    records: dict[str, dict[str, object]] = {}
    game, notes = play(DEFAULT_RULESET, 20261201)
    policy = {**CLOCK, "failure_policy": "forfeit"}
    records["default.json"] = to_record(game, notes, policy, ("greedy", "random"))
    game, notes = play(ARROW_SHORT, arrow_seed())  # a tie the arrow decides (P10 variant)
    records["arrow-max-rounds-3.json"] = to_record(game, notes, policy, ("greedy", "random"))
    game, notes = play(DEFAULT_RULESET, 11, substitute=True)
    substituted = {**CLOCK, "failure_policy": "default_action"}
    records["default-action.json"] = to_record(game, notes, substituted, ("greedy", "random"))
    for termination in Termination:
        if termination.is_forfeit:
            records[f"forfeit-{termination.value}.json"] = forfeit(termination, 5)
    return records


def main() -> None:
    for name, record in golden().items():
        (HERE / name).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {HERE / name}", file=sys.stderr)


if __name__ == "__main__":
    main()
