from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FailurePolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FAILURE_POLICY_UNSPECIFIED: _ClassVar[FailurePolicy]
    FAILURE_POLICY_FORFEIT: _ClassVar[FailurePolicy]
    FAILURE_POLICY_DEFAULT_ACTION: _ClassVar[FailurePolicy]

class TieRule(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TIE_RULE_UNSPECIFIED: _ClassVar[TieRule]
    TIE_RULE_REPLAY_ROUND: _ClassVar[TieRule]
    TIE_RULE_ARROW: _ClassVar[TieRule]

class DecisionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_KIND_UNSPECIFIED: _ClassVar[DecisionKind]
    DECISION_KIND_REPLACE: _ClassVar[DecisionKind]
    DECISION_KIND_DUEL: _ClassVar[DecisionKind]
    DECISION_KIND_ATTACK: _ClassVar[DecisionKind]
    DECISION_KIND_DEFEND: _ClassVar[DecisionKind]

class ErrorCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_CODE_UNSPECIFIED: _ClassVar[ErrorCode]
    ERROR_CODE_ILLEGAL_ACTION: _ClassVar[ErrorCode]
    ERROR_CODE_UNKNOWN_REQUEST: _ClassVar[ErrorCode]
    ERROR_CODE_STALE_REPLY: _ClassVar[ErrorCode]
    ERROR_CODE_DUPLICATE_REPLY: _ClassVar[ErrorCode]
    ERROR_CODE_MALFORMED: _ClassVar[ErrorCode]
    ERROR_CODE_TIMEOUT: _ClassVar[ErrorCode]
    ERROR_CODE_UNEXPECTED_MESSAGE: _ClassVar[ErrorCode]

class ErrorOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_OUTCOME_UNSPECIFIED: _ClassVar[ErrorOutcome]
    ERROR_OUTCOME_IGNORED: _ClassVar[ErrorOutcome]
    ERROR_OUTCOME_DEFAULT_ACTION: _ClassVar[ErrorOutcome]
    ERROR_OUTCOME_FORFEIT: _ClassVar[ErrorOutcome]

class GameResult(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GAME_RESULT_UNSPECIFIED: _ClassVar[GameResult]
    GAME_RESULT_WIN: _ClassVar[GameResult]
    GAME_RESULT_LOSS: _ClassVar[GameResult]
    GAME_RESULT_DRAW: _ClassVar[GameResult]
    GAME_RESULT_NO_CONTEST: _ClassVar[GameResult]

class EndReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    END_REASON_UNSPECIFIED: _ClassVar[EndReason]
    END_REASON_GOAL: _ClassVar[EndReason]
    END_REASON_ROUND_CAP: _ClassVar[EndReason]
    END_REASON_TIMEOUT: _ClassVar[EndReason]
    END_REASON_ILLEGAL_ACTION: _ClassVar[EndReason]
    END_REASON_DISCONNECT: _ClassVar[EndReason]
    END_REASON_CRASH: _ClassVar[EndReason]
    END_REASON_ABORTED: _ClassVar[EndReason]

class SessionEndReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SESSION_END_REASON_UNSPECIFIED: _ClassVar[SessionEndReason]
    SESSION_END_REASON_TOURNAMENT_OVER: _ClassVar[SessionEndReason]
    SESSION_END_REASON_SERVER_SHUTDOWN: _ClassVar[SessionEndReason]
    SESSION_END_REASON_REMOVED: _ClassVar[SessionEndReason]
FAILURE_POLICY_UNSPECIFIED: FailurePolicy
FAILURE_POLICY_FORFEIT: FailurePolicy
FAILURE_POLICY_DEFAULT_ACTION: FailurePolicy
TIE_RULE_UNSPECIFIED: TieRule
TIE_RULE_REPLAY_ROUND: TieRule
TIE_RULE_ARROW: TieRule
DECISION_KIND_UNSPECIFIED: DecisionKind
DECISION_KIND_REPLACE: DecisionKind
DECISION_KIND_DUEL: DecisionKind
DECISION_KIND_ATTACK: DecisionKind
DECISION_KIND_DEFEND: DecisionKind
ERROR_CODE_UNSPECIFIED: ErrorCode
ERROR_CODE_ILLEGAL_ACTION: ErrorCode
ERROR_CODE_UNKNOWN_REQUEST: ErrorCode
ERROR_CODE_STALE_REPLY: ErrorCode
ERROR_CODE_DUPLICATE_REPLY: ErrorCode
ERROR_CODE_MALFORMED: ErrorCode
ERROR_CODE_TIMEOUT: ErrorCode
ERROR_CODE_UNEXPECTED_MESSAGE: ErrorCode
ERROR_OUTCOME_UNSPECIFIED: ErrorOutcome
ERROR_OUTCOME_IGNORED: ErrorOutcome
ERROR_OUTCOME_DEFAULT_ACTION: ErrorOutcome
ERROR_OUTCOME_FORFEIT: ErrorOutcome
GAME_RESULT_UNSPECIFIED: GameResult
GAME_RESULT_WIN: GameResult
GAME_RESULT_LOSS: GameResult
GAME_RESULT_DRAW: GameResult
GAME_RESULT_NO_CONTEST: GameResult
END_REASON_UNSPECIFIED: EndReason
END_REASON_GOAL: EndReason
END_REASON_ROUND_CAP: EndReason
END_REASON_TIMEOUT: EndReason
END_REASON_ILLEGAL_ACTION: EndReason
END_REASON_DISCONNECT: EndReason
END_REASON_CRASH: EndReason
END_REASON_ABORTED: EndReason
SESSION_END_REASON_UNSPECIFIED: SessionEndReason
SESSION_END_REASON_TOURNAMENT_OVER: SessionEndReason
SESSION_END_REASON_SERVER_SHUTDOWN: SessionEndReason
SESSION_END_REASON_REMOVED: SessionEndReason

class BotMessage(_message.Message):
    __slots__ = ("hello", "action", "actions")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    action: Action
    actions: ActionBatch
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., action: _Optional[_Union[Action, _Mapping]] = ..., actions: _Optional[_Union[ActionBatch, _Mapping]] = ...) -> None: ...

class ActionBatch(_message.Message):
    __slots__ = ("actions",)
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    actions: _containers.RepeatedCompositeFieldContainer[Action]
    def __init__(self, actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ...) -> None: ...

class RefereeMessage(_message.Message):
    __slots__ = ("welcome", "game_start", "decision_request", "error", "game_end", "session_end", "batch")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    GAME_START_FIELD_NUMBER: _ClassVar[int]
    DECISION_REQUEST_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    GAME_END_FIELD_NUMBER: _ClassVar[int]
    SESSION_END_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    game_start: GameStart
    decision_request: DecisionRequest
    error: Error
    game_end: GameEnd
    session_end: SessionEnd
    batch: RefereeBatch
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., game_start: _Optional[_Union[GameStart, _Mapping]] = ..., decision_request: _Optional[_Union[DecisionRequest, _Mapping]] = ..., error: _Optional[_Union[Error, _Mapping]] = ..., game_end: _Optional[_Union[GameEnd, _Mapping]] = ..., session_end: _Optional[_Union[SessionEnd, _Mapping]] = ..., batch: _Optional[_Union[RefereeBatch, _Mapping]] = ...) -> None: ...

class RefereeBatch(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[RefereeMessage]
    def __init__(self, messages: _Optional[_Iterable[_Union[RefereeMessage, _Mapping]]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("protocol_version", "bot_name", "token", "client_info", "max_concurrent_games", "accept_batches")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    CLIENT_INFO_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_GAMES_FIELD_NUMBER: _ClassVar[int]
    ACCEPT_BATCHES_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    bot_name: str
    token: str
    client_info: str
    max_concurrent_games: int
    accept_batches: bool
    def __init__(self, protocol_version: _Optional[int] = ..., bot_name: _Optional[str] = ..., token: _Optional[str] = ..., client_info: _Optional[str] = ..., max_concurrent_games: _Optional[int] = ..., accept_batches: _Optional[bool] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("protocol_version", "session_id", "server_info", "decision_timeout_ms", "time_bank_ms", "max_concurrent_games", "bot_name", "failure_policy", "batches")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SERVER_INFO_FIELD_NUMBER: _ClassVar[int]
    DECISION_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_GAMES_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    FAILURE_POLICY_FIELD_NUMBER: _ClassVar[int]
    BATCHES_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    session_id: str
    server_info: str
    decision_timeout_ms: int
    time_bank_ms: int
    max_concurrent_games: int
    bot_name: str
    failure_policy: FailurePolicy
    batches: bool
    def __init__(self, protocol_version: _Optional[int] = ..., session_id: _Optional[str] = ..., server_info: _Optional[str] = ..., decision_timeout_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., max_concurrent_games: _Optional[int] = ..., bot_name: _Optional[str] = ..., failure_policy: _Optional[_Union[FailurePolicy, str]] = ..., batches: _Optional[bool] = ...) -> None: ...

class CardCount(_message.Message):
    __slots__ = ("value", "count")
    VALUE_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    value: int
    count: int
    def __init__(self, value: _Optional[int] = ..., count: _Optional[int] = ...) -> None: ...

class SpaceArrows(_message.Message):
    __slots__ = ("seats",)
    SEATS_FIELD_NUMBER: _ClassVar[int]
    seats: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seats: _Optional[_Iterable[int]] = ...) -> None: ...

class Ruleset(_message.Message):
    __slots__ = ("deck", "hand_sizes", "arrows", "tie_rule", "max_rounds")
    DECK_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    ARROWS_FIELD_NUMBER: _ClassVar[int]
    TIE_RULE_FIELD_NUMBER: _ClassVar[int]
    MAX_ROUNDS_FIELD_NUMBER: _ClassVar[int]
    deck: _containers.RepeatedCompositeFieldContainer[CardCount]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    arrows: _containers.RepeatedCompositeFieldContainer[SpaceArrows]
    tie_rule: TieRule
    max_rounds: int
    def __init__(self, deck: _Optional[_Iterable[_Union[CardCount, _Mapping]]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., arrows: _Optional[_Iterable[_Union[SpaceArrows, _Mapping]]] = ..., tie_rule: _Optional[_Union[TieRule, str]] = ..., max_rounds: _Optional[int] = ...) -> None: ...

class Board(_message.Message):
    __slots__ = ("tacocat", "covered", "hand_sizes", "arrows")
    TACOCAT_FIELD_NUMBER: _ClassVar[int]
    COVERED_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    ARROWS_FIELD_NUMBER: _ClassVar[int]
    tacocat: int
    covered: _containers.RepeatedScalarFieldContainer[bool]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    arrows: _containers.RepeatedCompositeFieldContainer[SpaceArrows]
    def __init__(self, tacocat: _Optional[int] = ..., covered: _Optional[_Iterable[bool]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., arrows: _Optional[_Iterable[_Union[SpaceArrows, _Mapping]]] = ...) -> None: ...

class GameStart(_message.Message):
    __slots__ = ("game_id", "seat", "opponent_name", "ruleset", "decision_timeout_ms", "time_bank_ms", "failure_policy", "match_info")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    OPPONENT_NAME_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    DECISION_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    FAILURE_POLICY_FIELD_NUMBER: _ClassVar[int]
    MATCH_INFO_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    opponent_name: str
    ruleset: Ruleset
    decision_timeout_ms: int
    time_bank_ms: int
    failure_policy: FailurePolicy
    match_info: str
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., opponent_name: _Optional[str] = ..., ruleset: _Optional[_Union[Ruleset, _Mapping]] = ..., decision_timeout_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., failure_policy: _Optional[_Union[FailurePolicy, str]] = ..., match_info: _Optional[str] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("game_id", "request_id", "kind", "view", "legal", "time_left_ms", "time_bank_left_ms")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    LEGAL_FIELD_NUMBER: _ClassVar[int]
    TIME_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    request_id: int
    kind: DecisionKind
    view: SeatView
    legal: LegalOptions
    time_left_ms: int
    time_bank_left_ms: int
    def __init__(self, game_id: _Optional[str] = ..., request_id: _Optional[int] = ..., kind: _Optional[_Union[DecisionKind, str]] = ..., view: _Optional[_Union[SeatView, _Mapping]] = ..., legal: _Optional[_Union[LegalOptions, _Mapping]] = ..., time_left_ms: _Optional[int] = ..., time_bank_left_ms: _Optional[int] = ...) -> None: ...

class SeatView(_message.Message):
    __slots__ = ("seat", "round", "hand", "opponent_hand_size", "draw_pile_size", "board", "discards", "events", "past_rounds", "attacker", "current_attack")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    OPPONENT_HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    DRAW_PILE_SIZE_FIELD_NUMBER: _ClassVar[int]
    BOARD_FIELD_NUMBER: _ClassVar[int]
    DISCARDS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    PAST_ROUNDS_FIELD_NUMBER: _ClassVar[int]
    ATTACKER_FIELD_NUMBER: _ClassVar[int]
    CURRENT_ATTACK_FIELD_NUMBER: _ClassVar[int]
    seat: int
    round: int
    hand: _containers.RepeatedScalarFieldContainer[int]
    opponent_hand_size: int
    draw_pile_size: int
    board: Board
    discards: _containers.RepeatedScalarFieldContainer[int]
    events: _containers.RepeatedCompositeFieldContainer[PublicEvent]
    past_rounds: _containers.RepeatedCompositeFieldContainer[RoundSummary]
    attacker: int
    current_attack: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., round: _Optional[int] = ..., hand: _Optional[_Iterable[int]] = ..., opponent_hand_size: _Optional[int] = ..., draw_pile_size: _Optional[int] = ..., board: _Optional[_Union[Board, _Mapping]] = ..., discards: _Optional[_Iterable[int]] = ..., events: _Optional[_Iterable[_Union[PublicEvent, _Mapping]]] = ..., past_rounds: _Optional[_Iterable[_Union[RoundSummary, _Mapping]]] = ..., attacker: _Optional[int] = ..., current_attack: _Optional[_Iterable[int]] = ...) -> None: ...

class LegalOptions(_message.Message):
    __slots__ = ("replace", "duel", "attack", "defend")
    REPLACE_FIELD_NUMBER: _ClassVar[int]
    DUEL_FIELD_NUMBER: _ClassVar[int]
    ATTACK_FIELD_NUMBER: _ClassVar[int]
    DEFEND_FIELD_NUMBER: _ClassVar[int]
    replace: ReplaceOptions
    duel: DuelOptions
    attack: AttackOptions
    defend: DefendOptions
    def __init__(self, replace: _Optional[_Union[ReplaceOptions, _Mapping]] = ..., duel: _Optional[_Union[DuelOptions, _Mapping]] = ..., attack: _Optional[_Union[AttackOptions, _Mapping]] = ..., defend: _Optional[_Union[DefendOptions, _Mapping]] = ...) -> None: ...

class ReplaceOptions(_message.Message):
    __slots__ = ("min_discard", "max_discard", "simultaneous", "second")
    MIN_DISCARD_FIELD_NUMBER: _ClassVar[int]
    MAX_DISCARD_FIELD_NUMBER: _ClassVar[int]
    SIMULTANEOUS_FIELD_NUMBER: _ClassVar[int]
    SECOND_FIELD_NUMBER: _ClassVar[int]
    min_discard: int
    max_discard: int
    simultaneous: bool
    second: bool
    def __init__(self, min_discard: _Optional[int] = ..., max_discard: _Optional[int] = ..., simultaneous: _Optional[bool] = ..., second: _Optional[bool] = ...) -> None: ...

class DuelOptions(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, values: _Optional[_Iterable[int]] = ...) -> None: ...

class Attack(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, cards: _Optional[_Iterable[int]] = ...) -> None: ...

class AttackOptions(_message.Message):
    __slots__ = ("attacks",)
    ATTACKS_FIELD_NUMBER: _ClassVar[int]
    attacks: _containers.RepeatedCompositeFieldContainer[Attack]
    def __init__(self, attacks: _Optional[_Iterable[_Union[Attack, _Mapping]]] = ...) -> None: ...

class AttackCardOptions(_message.Message):
    __slots__ = ("attack_card", "defend_with")
    ATTACK_CARD_FIELD_NUMBER: _ClassVar[int]
    DEFEND_WITH_FIELD_NUMBER: _ClassVar[int]
    attack_card: int
    defend_with: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, attack_card: _Optional[int] = ..., defend_with: _Optional[_Iterable[int]] = ...) -> None: ...

class DefendOptions(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedCompositeFieldContainer[AttackCardOptions]
    def __init__(self, cards: _Optional[_Iterable[_Union[AttackCardOptions, _Mapping]]] = ...) -> None: ...

class PublicEvent(_message.Message):
    __slots__ = ("deal", "replaced", "duel_revealed", "attacked", "defended", "showdown", "round_ended", "substituted")
    DEAL_FIELD_NUMBER: _ClassVar[int]
    REPLACED_FIELD_NUMBER: _ClassVar[int]
    DUEL_REVEALED_FIELD_NUMBER: _ClassVar[int]
    ATTACKED_FIELD_NUMBER: _ClassVar[int]
    DEFENDED_FIELD_NUMBER: _ClassVar[int]
    SHOWDOWN_FIELD_NUMBER: _ClassVar[int]
    ROUND_ENDED_FIELD_NUMBER: _ClassVar[int]
    SUBSTITUTED_FIELD_NUMBER: _ClassVar[int]
    deal: Deal
    replaced: Replaced
    duel_revealed: DuelRevealed
    attacked: Attacked
    defended: Defended
    showdown: Showdown
    round_ended: RoundEnded
    substituted: Substituted
    def __init__(self, deal: _Optional[_Union[Deal, _Mapping]] = ..., replaced: _Optional[_Union[Replaced, _Mapping]] = ..., duel_revealed: _Optional[_Union[DuelRevealed, _Mapping]] = ..., attacked: _Optional[_Union[Attacked, _Mapping]] = ..., defended: _Optional[_Union[Defended, _Mapping]] = ..., showdown: _Optional[_Union[Showdown, _Mapping]] = ..., round_ended: _Optional[_Union[RoundEnded, _Mapping]] = ..., substituted: _Optional[_Union[Substituted, _Mapping]] = ...) -> None: ...

class Deal(_message.Message):
    __slots__ = ("round", "space", "hand_size", "dealt")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    SPACE_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    DEALT_FIELD_NUMBER: _ClassVar[int]
    round: int
    space: int
    hand_size: int
    dealt: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, round: _Optional[int] = ..., space: _Optional[int] = ..., hand_size: _Optional[int] = ..., dealt: _Optional[_Iterable[int]] = ...) -> None: ...

class Replaced(_message.Message):
    __slots__ = ("seat", "cards", "count", "drawn")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    DRAWN_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cards: _containers.RepeatedScalarFieldContainer[int]
    count: int
    drawn: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., cards: _Optional[_Iterable[int]] = ..., count: _Optional[int] = ..., drawn: _Optional[_Iterable[int]] = ...) -> None: ...

class DuelRevealed(_message.Message):
    __slots__ = ("cards", "tie", "winner_seat")
    CARDS_FIELD_NUMBER: _ClassVar[int]
    TIE_FIELD_NUMBER: _ClassVar[int]
    WINNER_SEAT_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedScalarFieldContainer[int]
    tie: bool
    winner_seat: int
    def __init__(self, cards: _Optional[_Iterable[int]] = ..., tie: _Optional[bool] = ..., winner_seat: _Optional[int] = ...) -> None: ...

class Attacked(_message.Message):
    __slots__ = ("seat", "cards")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cards: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., cards: _Optional[_Iterable[int]] = ...) -> None: ...

class DefenceAnswer(_message.Message):
    __slots__ = ("attack_card", "sacrificed", "card")
    ATTACK_CARD_FIELD_NUMBER: _ClassVar[int]
    SACRIFICED_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    attack_card: int
    sacrificed: bool
    card: int
    def __init__(self, attack_card: _Optional[int] = ..., sacrificed: _Optional[bool] = ..., card: _Optional[int] = ...) -> None: ...

class Defended(_message.Message):
    __slots__ = ("seat", "answers", "trick_winner")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ANSWERS_FIELD_NUMBER: _ClassVar[int]
    TRICK_WINNER_FIELD_NUMBER: _ClassVar[int]
    seat: int
    answers: _containers.RepeatedCompositeFieldContainer[DefenceAnswer]
    trick_winner: int
    def __init__(self, seat: _Optional[int] = ..., answers: _Optional[_Iterable[_Union[DefenceAnswer, _Mapping]]] = ..., trick_winner: _Optional[int] = ...) -> None: ...

class Showdown(_message.Message):
    __slots__ = ("cards", "tie", "winner_seat")
    CARDS_FIELD_NUMBER: _ClassVar[int]
    TIE_FIELD_NUMBER: _ClassVar[int]
    WINNER_SEAT_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedScalarFieldContainer[int]
    tie: bool
    winner_seat: int
    def __init__(self, cards: _Optional[_Iterable[int]] = ..., tie: _Optional[bool] = ..., winner_seat: _Optional[int] = ...) -> None: ...

class RoundEnded(_message.Message):
    __slots__ = ("round", "tie", "winner_seat", "tacocat_from", "tacocat_to", "covered_space")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    TIE_FIELD_NUMBER: _ClassVar[int]
    WINNER_SEAT_FIELD_NUMBER: _ClassVar[int]
    TACOCAT_FROM_FIELD_NUMBER: _ClassVar[int]
    TACOCAT_TO_FIELD_NUMBER: _ClassVar[int]
    COVERED_SPACE_FIELD_NUMBER: _ClassVar[int]
    round: int
    tie: bool
    winner_seat: int
    tacocat_from: int
    tacocat_to: int
    covered_space: int
    def __init__(self, round: _Optional[int] = ..., tie: _Optional[bool] = ..., winner_seat: _Optional[int] = ..., tacocat_from: _Optional[int] = ..., tacocat_to: _Optional[int] = ..., covered_space: _Optional[int] = ...) -> None: ...

class Substituted(_message.Message):
    __slots__ = ("seat", "reason")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    seat: int
    reason: str
    def __init__(self, seat: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class RoundSummary(_message.Message):
    __slots__ = ("round", "tie", "winner_seat", "showdown_cards", "tacocat_from", "tacocat_to", "covered_space")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    TIE_FIELD_NUMBER: _ClassVar[int]
    WINNER_SEAT_FIELD_NUMBER: _ClassVar[int]
    SHOWDOWN_CARDS_FIELD_NUMBER: _ClassVar[int]
    TACOCAT_FROM_FIELD_NUMBER: _ClassVar[int]
    TACOCAT_TO_FIELD_NUMBER: _ClassVar[int]
    COVERED_SPACE_FIELD_NUMBER: _ClassVar[int]
    round: int
    tie: bool
    winner_seat: int
    showdown_cards: _containers.RepeatedScalarFieldContainer[int]
    tacocat_from: int
    tacocat_to: int
    covered_space: int
    def __init__(self, round: _Optional[int] = ..., tie: _Optional[bool] = ..., winner_seat: _Optional[int] = ..., showdown_cards: _Optional[_Iterable[int]] = ..., tacocat_from: _Optional[int] = ..., tacocat_to: _Optional[int] = ..., covered_space: _Optional[int] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("game_id", "request_id", "replace", "duel", "attack", "defend", "fallback")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    REPLACE_FIELD_NUMBER: _ClassVar[int]
    DUEL_FIELD_NUMBER: _ClassVar[int]
    ATTACK_FIELD_NUMBER: _ClassVar[int]
    DEFEND_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    request_id: int
    replace: Replace
    duel: Duel
    attack: Attack
    defend: Defend
    fallback: str
    def __init__(self, game_id: _Optional[str] = ..., request_id: _Optional[int] = ..., replace: _Optional[_Union[Replace, _Mapping]] = ..., duel: _Optional[_Union[Duel, _Mapping]] = ..., attack: _Optional[_Union[Attack, _Mapping]] = ..., defend: _Optional[_Union[Defend, _Mapping]] = ..., fallback: _Optional[str] = ...) -> None: ...

class Replace(_message.Message):
    __slots__ = ("discard",)
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    discard: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, discard: _Optional[_Iterable[int]] = ...) -> None: ...

class Duel(_message.Message):
    __slots__ = ("card",)
    CARD_FIELD_NUMBER: _ClassVar[int]
    card: int
    def __init__(self, card: _Optional[int] = ...) -> None: ...

class Defend(_message.Message):
    __slots__ = ("answers",)
    ANSWERS_FIELD_NUMBER: _ClassVar[int]
    answers: _containers.RepeatedCompositeFieldContainer[DefenceChoice]
    def __init__(self, answers: _Optional[_Iterable[_Union[DefenceChoice, _Mapping]]] = ...) -> None: ...

class DefenceChoice(_message.Message):
    __slots__ = ("defend_with", "sacrifice")
    DEFEND_WITH_FIELD_NUMBER: _ClassVar[int]
    SACRIFICE_FIELD_NUMBER: _ClassVar[int]
    defend_with: int
    sacrifice: bool
    def __init__(self, defend_with: _Optional[int] = ..., sacrifice: _Optional[bool] = ...) -> None: ...

class Error(_message.Message):
    __slots__ = ("game_id", "request_id", "code", "rule_id", "message", "outcome")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    RULE_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    request_id: int
    code: ErrorCode
    rule_id: str
    message: str
    outcome: ErrorOutcome
    def __init__(self, game_id: _Optional[str] = ..., request_id: _Optional[int] = ..., code: _Optional[_Union[ErrorCode, str]] = ..., rule_id: _Optional[str] = ..., message: _Optional[str] = ..., outcome: _Optional[_Union[ErrorOutcome, str]] = ...) -> None: ...

class GameEnd(_message.Message):
    __slots__ = ("game_id", "result", "winner_seat", "reason", "detail", "rounds", "board", "last_round_events", "past_rounds", "seat")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    WINNER_SEAT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    BOARD_FIELD_NUMBER: _ClassVar[int]
    LAST_ROUND_EVENTS_FIELD_NUMBER: _ClassVar[int]
    PAST_ROUNDS_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    result: GameResult
    winner_seat: int
    reason: EndReason
    detail: str
    rounds: int
    board: Board
    last_round_events: _containers.RepeatedCompositeFieldContainer[PublicEvent]
    past_rounds: _containers.RepeatedCompositeFieldContainer[RoundSummary]
    seat: int
    def __init__(self, game_id: _Optional[str] = ..., result: _Optional[_Union[GameResult, str]] = ..., winner_seat: _Optional[int] = ..., reason: _Optional[_Union[EndReason, str]] = ..., detail: _Optional[str] = ..., rounds: _Optional[int] = ..., board: _Optional[_Union[Board, _Mapping]] = ..., last_round_events: _Optional[_Iterable[_Union[PublicEvent, _Mapping]]] = ..., past_rounds: _Optional[_Iterable[_Union[RoundSummary, _Mapping]]] = ..., seat: _Optional[int] = ...) -> None: ...

class SessionEnd(_message.Message):
    __slots__ = ("reason", "message")
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    reason: SessionEndReason
    message: str
    def __init__(self, reason: _Optional[_Union[SessionEndReason, str]] = ..., message: _Optional[str] = ...) -> None: ...
