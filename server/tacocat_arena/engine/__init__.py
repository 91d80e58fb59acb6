"""The pure rules engine of Tacocat Spelled Backwards (RULES-SPEC.md).

It imports only the standard library: no I/O, no clock, no global random state.  A game is a
function of (ruleset, seed, actions)::

    from tacocat_arena.engine import Game, Duel
    game = Game(seed=7)
    game.decision_for(0)      # DecisionKind.REPLACE
"""

from tacocat_arena.engine.errors import ActionError, IllegalActionError, InvalidActionError
from tacocat_arena.engine.game import Event, Game, move_tacocat, round_deck
from tacocat_arena.engine.legal import (
    check_attack_shape,
    check_defence,
    defence_options,
    distinct_values,
    enumerate_defences,
    legal_attacks,
    sample_defence,
)
from tacocat_arena.engine.record import DecisionNote, RecordError, Refused, replay, to_record
from tacocat_arena.engine.ruleset import DEFAULT_RULESET, Ruleset, RulesetError, TieRule
from tacocat_arena.engine.types import (
    SEAT_0,
    SEAT_1,
    SEATS,
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
    other,
)
from tacocat_arena.engine.view import (
    LegalOptions,
    SeatView,
    build_view,
    legal_options,
    public_event,
    spectator_event,
)

__all__ = [
    "SEAT_0",
    "SEAT_1",
    "SEATS",
    "Action",
    "ActionError",
    "Attack",
    "Card",
    "DEFAULT_RULESET",
    "DecisionKind",
    "DecisionNote",
    "Defend",
    "Duel",
    "Event",
    "Failure",
    "Forfeit",
    "Game",
    "IllegalActionError",
    "InvalidActionError",
    "LegalOptions",
    "Outcome",
    "RecordError",
    "Refused",
    "Replace",
    "RoundResult",
    "Ruleset",
    "RulesetError",
    "Seat",
    "SeatView",
    "Termination",
    "TieRule",
    "build_view",
    "check_attack_shape",
    "check_defence",
    "defence_options",
    "distinct_values",
    "enumerate_defences",
    "legal_attacks",
    "legal_options",
    "other",
    "public_event",
    "spectator_event",
    "replay",
    "move_tacocat",
    "round_deck",
    "sample_defence",
    "to_record",
]
