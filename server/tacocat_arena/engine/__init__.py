"""The pure rules engine of Tacocat Spelled Backwards (RULES-SPEC.md).

It imports only the standard library: no I/O, no clock, no global random state.  A game is a
function of (ruleset, seed, actions)::

    from tacocat_arena.engine import Game, Duel
    game = Game(seed=7)
    game.decision_for(0)      # DecisionKind.REPLACE

Its names are loaded on first use (PEP 562 ``__getattr__``): a bot's SDK, which needs the
views and the actions but not the records (json) or the game's replay, starts without them;
every start of a hosted bot pays for what it imports (issue 41).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
        SpectatorView,
        build_view,
        legal_options,
        public_event,
        spectator_event,
        spectator_view,
    )

#: Each public name and the submodule that defines it.
_WHERE = {
    "ActionError": "errors",
    "IllegalActionError": "errors",
    "InvalidActionError": "errors",
    "Event": "game",
    "Game": "game",
    "move_tacocat": "game",
    "round_deck": "game",
    "check_attack_shape": "legal",
    "check_defence": "legal",
    "defence_options": "legal",
    "distinct_values": "legal",
    "enumerate_defences": "legal",
    "legal_attacks": "legal",
    "sample_defence": "legal",
    "DecisionNote": "record",
    "RecordError": "record",
    "Refused": "record",
    "replay": "record",
    "to_record": "record",
    "DEFAULT_RULESET": "ruleset",
    "Ruleset": "ruleset",
    "RulesetError": "ruleset",
    "TieRule": "ruleset",
    "SEAT_0": "types",
    "SEAT_1": "types",
    "SEATS": "types",
    "Action": "types",
    "Attack": "types",
    "Card": "types",
    "DecisionKind": "types",
    "Defend": "types",
    "Duel": "types",
    "Failure": "types",
    "Forfeit": "types",
    "Outcome": "types",
    "Replace": "types",
    "RoundResult": "types",
    "Seat": "types",
    "Termination": "types",
    "other": "types",
    "LegalOptions": "view",
    "SeatView": "view",
    "SpectatorView": "view",
    "build_view": "view",
    "legal_options": "view",
    "public_event": "view",
    "spectator_event": "view",
    "spectator_view": "view",
}


def __getattr__(name: str) -> Any:
    """Import the submodule that defines ``name`` on first use, and keep the name here."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])


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
    "SpectatorView",
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
    "spectator_view",
    "replay",
    "move_tacocat",
    "round_deck",
    "sample_defence",
    "to_record",
]
