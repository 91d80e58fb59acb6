"""What ``verify`` checks in one record beyond its replay: the referee's claims about it.

A replay proves that the actions are legal and produce the recorded events.  It cannot prove
what the referee says about them: that a substituted action is the failure policy's default
and not a move the seat chose, that a refused answer was refused for the rule it cites, that
a forfeit is one the recorded policy imposes, that every time fits the recorded clock, and
that a games.jsonl line says what its record says.  Each check here yields
``(round, rule, message)``; the rules are the record's own checks of docs/game-record.md,
"Checks" (F1-F4, T1-T3, G1).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeGuard

from tacocat_arena.engine import (
    ActionError,
    Failure,
    Game,
    RecordError,
    Termination,
    build_view,
)
from tacocat_arena.engine.record import action_from_json, action_to_json
from tacocat_arena.protocol.wire import default_action
from tacocat_arena.referee.match import MAX_FALLBACK_CHARS
from tacocat_arena.referee.settings import RECORD_REFEREE_KEYS, SEAT_ALLOWANCES_KEY

#: Slack for timings rounded to the microsecond in the record.
EPSILON_MS = 0.01
#: The action kinds of an entry, which are also the decision kinds they answer.
_KINDS = ("replace", "duel", "attack", "defend")
#: What the failure policy ``default_action`` substitutes; a disconnect always forfeits.
_SUBSTITUTED = (Failure.TIMEOUT.value, Failure.ILLEGAL.value, Failure.MALFORMED.value)
#: The forfeits each policy imposes (a lost connection or a crash ends the game under both).
_FORFEITS = {
    "forfeit": ("timeout", "illegal_action", "disconnect", "crash"),
    "default_action": ("disconnect", "crash"),
}

Found = tuple[int | None, str, str]


def policy_of(record: Mapping[str, Any]) -> str | None:
    """The record's failure policy, None for a game played without a referee."""
    referee = record.get("referee")
    policy = referee.get("failure_policy") if isinstance(referee, Mapping) else None
    return policy if isinstance(policy, str) else None


def clock_of(record: Mapping[str, Any]) -> tuple[float, float, float] | None:
    """(allowance, bank, grace) in ms, None for a record without a clock (version 1)."""
    referee = record.get("referee")
    if not isinstance(referee, Mapping):
        return None
    try:
        return (
            float(referee["decision_ms"]),
            float(referee["bank_ms"]),
            float(referee["grace_ms"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


def seat_allowances(record: Mapping[str, Any], allowance: float) -> tuple[float, float]:
    """Each seat's per-decision allowance in ms: the block's ``seat_decision_ms`` where the
    seats had their own (a person's seat, ``play human``), else ``allowance`` for both."""
    referee = record.get("referee")
    own = referee.get(SEAT_ALLOWANCES_KEY) if isinstance(referee, Mapping) else None
    if _is_pair_of_ms(own):
        return float(own[0]), float(own[1])
    return allowance, allowance


def _is_pair_of_ms(value: Any) -> TypeGuard[list[int]]:
    return (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
    )


def _at(rounds: Sequence[int], index: int) -> int | None:
    return rounds[index] if index < len(rounds) else None


def is_fallback_text(text: str) -> bool:
    """Whether ``text`` is a fallback mark as the referee writes one (referee/match.py: the
    bot's text on one line, runs of white space made single spaces, bounded)."""
    return 0 < len(text) <= MAX_FALLBACK_CHARS and " ".join(text.split()) == text


def check_referee_block(record: Mapping[str, Any]) -> Iterator[Found]:
    """E1: a record's ``referee`` block holds exactly the keys the referee writes
    (``RefereeSettings.record_block``): one that lacks a clock key would escape T1-T3, and
    one with a key the referee has no rule for (``late_credit_ms``) claims a clock it never
    ran."""
    referee = record.get("referee")
    if referee is None:
        return  # a game played in process, or a version 1 record
    if not isinstance(referee, Mapping):
        yield None, "E1", f"the record's referee block {referee!r} is not an object"
        return
    extra = sorted(set(referee) - {*RECORD_REFEREE_KEYS, SEAT_ALLOWANCES_KEY})
    missing = [key for key in RECORD_REFEREE_KEYS if key not in referee]
    if extra:
        yield (
            None,
            "E1",
            f"the record's referee block holds {', '.join(map(repr, extra))}, which the referee "
            f"never writes (its keys: {', '.join(RECORD_REFEREE_KEYS)})",
        )
    if missing:
        yield None, "E1", f"the record's referee block lacks {', '.join(missing)}"
    for key in RECORD_REFEREE_KEYS[:3]:
        value = referee.get(key)
        if key in referee and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            yield None, "E1", f"the record's referee {key} {value!r} is not a whole number of ms"
    own = referee.get(SEAT_ALLOWANCES_KEY)
    if SEAT_ALLOWANCES_KEY in referee and not _is_pair_of_ms(own):
        yield (
            None,
            "E1",
            f"the record's referee {SEAT_ALLOWANCES_KEY} {own!r} is not two whole numbers of "
            "ms (one per seat)",
        )


def check_marks(record: Mapping[str, Any], rounds: Sequence[int]) -> Iterator[Found]:
    """F1: substitutions and refused answers are recorded as docs/game-record.md says."""
    for index, entry in enumerate(record["actions"]):
        where = _at(rounds, index)
        substituted, refused = entry.get("substituted"), entry.get("refused")
        fallback = entry.get("fallback")
        if fallback is not None and (not isinstance(fallback, str) or not fallback.strip()):
            yield where, "F1", f"action {index}: its fallback mark {fallback!r} is no text"
        elif fallback is not None and not is_fallback_text(fallback):
            yield (
                where,
                "F1",
                f"action {index}: its fallback mark is not what the referee writes (one line "
                f"of at most {MAX_FALLBACK_CHARS} characters, single spaces): "
                f"{fallback[:60]!r}{'...' * (len(fallback) > 60)} ({len(fallback)} characters)",
            )
        elif fallback is not None and ({"substituted", "forfeit", "refused"} & entry.keys()):
            yield (
                where,
                "F1",
                f"action {index} is marked as the bot's SDK's fallback, but it is not an "
                "answer of the bot's applied as sent",
            )
        if substituted in (Failure.ILLEGAL.value, Failure.MALFORMED.value) and not refused:
            yield where, "F1", f"action {index} replaced a refused answer that is not recorded"
        if refused is None:
            continue
        then = "forfeit" if "forfeit" in entry else "default_action"
        if not isinstance(refused, Mapping) or refused.get("then") != then:
            yield where, "F1", f"action {index}: its refused answer does not say it led to {then}"
        elif "forfeit" not in entry and substituted is None:
            yield where, "F1", f"action {index} holds a refused answer but is the bot's own"
        elif substituted is not None and refused.get("failure") != substituted:
            yield (
                where,
                "F1",
                f"action {index} is substituted for {substituted!r}, but its refused answer "
                f"was refused as {refused.get('failure')!r}",
            )


def check_policy(record: Mapping[str, Any], rounds: Sequence[int]) -> Iterator[Found]:
    """F4: every forfeit and substitution is one the recorded failure policy imposes."""
    policy = policy_of(record)
    if policy is None:
        return  # a game played in process: no referee, no policy
    if policy not in _FORFEITS:
        yield None, "F4", f"the record's failure_policy {policy!r} is not one the referee has"
        return
    for index, entry in enumerate(record["actions"]):
        where = _at(rounds, index)
        substituted, refused = entry.get("substituted"), entry.get("refused")
        if substituted is not None and policy == "forfeit":
            yield where, "F4", f"action {index} is a substitution under the forfeit policy"
        elif substituted is not None and substituted not in _SUBSTITUTED:
            yield (
                where,
                "F4",
                f"action {index} is substituted for {substituted!r}: the default_action policy "
                f"substitutes only for {', '.join(_SUBSTITUTED)}",
            )
        if "forfeit" not in entry:
            continue
        reason = entry["forfeit"]
        if reason not in _FORFEITS[policy]:
            yield (
                where,
                "F4",
                f"action {index} forfeits for {reason!r} under the {policy} policy, which "
                f"forfeits only for {', '.join(_FORFEITS[policy])} (it substitutes the rest)",
            )
        elif reason == "illegal_action" and refused is None:
            yield (
                where,
                "F4",
                f"action {index} forfeits for an illegal action but records no refused answer",
            )
        elif reason != "illegal_action" and refused is not None:
            yield where, "F4", f"action {index} forfeits for {reason!r} yet holds a refused answer"


class StateChecks:
    """F2 and F3, which need the game as it was when the referee ruled: ``replay`` calls this
    just before each action (``before``), and the problems gather in ``found``."""

    def __init__(self, record: Mapping[str, Any], rounds: Sequence[int]) -> None:
        self.actions: Any = record.get("actions")
        self.rounds = rounds
        self.found: list[Found] = []

    def __call__(self, index: int, game: Game) -> None:
        entry = self.actions[index]  # replay has read ``actions`` as a list
        if not isinstance(entry, Mapping) or game.outcome is not None:
            return  # replay itself rejects it
        seat = entry.get("seat")
        if seat is None and isinstance(entry.get("refused"), Mapping) and game.pending:
            seat = min(game.pending)  # both seats failed: the record keeps the lower seat's
        if seat not in (0, 1) or seat not in game.pending:
            return  # replay itself rejects it
        where = self.rounds[index] if index < len(self.rounds) else game.round
        if entry.get("substituted") is not None:
            self._default(index, entry, game, seat, where)
        refused = entry.get("refused")
        if isinstance(refused, Mapping):
            self._refused(index, refused, game, seat, where)

    def _default(
        self, index: int, entry: Mapping[str, Any], game: Game, seat: int, where: int
    ) -> None:
        """F2: a substitution is exactly the documented default action (arena.proto)."""
        try:
            _, played = action_from_json(entry)
        except RecordError:
            return  # replay itself rejects it
        expected = default_action(build_view(game, seat))
        if played != expected:
            self.found.append(
                (
                    where,
                    "F2",
                    f"action {index} is marked as substituted, but {_json(played)} is not the "
                    f"default action {_json(expected)} of seat {seat}'s pending decision",
                )
            )

    def _refused(
        self, index: int, refused: Mapping[str, Any], game: Game, seat: int, where: int
    ) -> None:
        """F3: an illegal answer is of the pending kind, illegal there, for the rule cited;
        a malformed one is one the wire could not decode (so no action is recorded)."""
        failure, sent, rule = refused.get("failure"), refused.get("sent"), refused.get("rule")
        pending = build_view(game, seat).kind
        assert pending is not None  # the seat is pending
        problem = ""
        if failure == Failure.MALFORMED.value:
            if sent is not None:
                problem = "is recorded as malformed (not decodable), yet holds a decoded action"
            elif rule:
                problem = f"is malformed, which breaks no rule, yet cites {rule!r}"
        elif failure != Failure.ILLEGAL.value:
            problem = f"has failure {failure!r}, neither illegal_action nor malformed"
        elif not isinstance(sent, Mapping) or not any(k in sent for k in _KINDS):
            problem = "is recorded as illegal without the action that was sent"
        else:
            kind = next(k for k in _KINDS if k in sent)
            if kind != pending.value:
                problem = (
                    f"answers the pending {pending.value} with a {kind}: an answer of the wrong "
                    "kind is malformed, not illegal"
                )
            else:
                problem = _illegality(game, seat, sent, rule)
        if problem:
            self.found.append((where, "F3", f"action {index}: the refused answer {problem}"))


def _illegality(game: Game, seat: int, sent: Mapping[str, Any], rule: Any) -> str:
    """Why the recorded illegal answer ``sent`` is not refused for ``rule`` ('' if it is)."""
    try:
        _, action = action_from_json({"seat": seat, **sent})
    except RecordError as error:
        return f"is not an action ({error})"
    try:
        game.copy().apply(seat, action)  # type: ignore[arg-type]  # a Forfeit is not sent
    except ValueError as error:  # ActionError, or a value the engine cannot take
        if not isinstance(error, ActionError):
            return f"is not an action the engine takes ({error})"
        if error.rule != rule:
            return f"breaks {error.rule} ({error}), not the {rule!r} it cites"
        return ""
    return f"{_json(action)} is legal in the recorded state"


def _json(action: Any) -> str:
    shown = action_to_json(None, action)
    del shown["seat"]
    return str(shown)


def check_timing(record: Mapping[str, Any], rounds: Sequence[int]) -> Iterator[Found]:
    """T1-T3: every measured time against the record's clock, each seat's bank re-run as the
    referee runs it (referee/match.py): an answer counts when read within allowance + bank
    left + grace, time past the allowance comes out of the bank, a timeout spends it."""
    clock = clock_of(record)
    if clock is None:
        return  # version 1, or a game played without a referee: nothing to check
    default_allowance, bank_ms, grace = clock
    allowances = seat_allowances(record, default_allowance)
    bank = [bank_ms, bank_ms]
    for index, entry in enumerate(record["actions"]):
        seat = entry.get("seat")
        if seat not in (0, 1):
            continue
        allowance = allowances[seat]
        where = _at(rounds, index)
        ms = entry.get("ms")
        timeout = Failure.TIMEOUT.value in (entry.get("substituted"), entry.get("forfeit"))
        own = "forfeit" not in entry and "substituted" not in entry
        answered = own or "refused" in entry  # an illegal or malformed answer came in time
        if ms is None:
            if own or timeout:
                yield where, "T3", f"action {index} (seat {seat}) has no measured time"
            continue
        if not isinstance(ms, int | float) or isinstance(ms, bool) or not 0 <= ms < math.inf:
            yield where, "T3", f"action {index} (seat {seat}): {ms!r} is not a time in ms"
            continue
        limit = allowance + bank[seat] + grace
        if answered and allowance and ms > limit + EPSILON_MS:
            yield (
                where,
                "T1",
                (
                    f"action {index} (seat {seat}) took {ms:g} ms, past its {allowance:g} ms "
                    f"allowance + {bank[seat]:g} ms of bank left + {grace:g} ms grace, "
                    "yet it was applied instead of timing out"
                ),
            )
        if answered and allowance and ms > allowance:
            bank[seat] = max(0.0, bank[seat] - (ms - allowance))
        if timeout:
            if not allowance:
                yield where, "T2", f"action {index} (seat {seat}): a timeout with no clock"
            elif ms + EPSILON_MS < limit:
                yield (
                    where,
                    "T2",
                    (
                        f"action {index} (seat {seat}) timed out after {ms:g} ms, before its "
                        f"{allowance:g} ms allowance + {bank[seat]:g} ms of bank left + "
                        f"{grace:g} ms grace had run out"
                    ),
                )
            bank[seat] = 0.0


def seat_figures(record: Mapping[str, Any]) -> tuple[list[int], list[float]]:
    """Per seat, the decisions the record holds as answered (an entry with an ``ms`` whose
    answer came: the seat's own, or a refused one) and the sum of its entries' ``ms``:
    games.jsonl's ``decisions`` and ``decision_ms`` (docs/tournaments.md)."""
    decisions, total = [0, 0], [0.0, 0.0]
    for entry in record.get("actions", ()):
        seat, ms = entry.get("seat"), entry.get("ms")
        if seat not in (0, 1) or not isinstance(ms, int | float):
            continue
        total[seat] += ms
        own = "forfeit" not in entry and "substituted" not in entry
        decisions[seat] += own or "refused" in entry
    return decisions, total


def record_detail(record: Mapping[str, Any]) -> str:
    """The detail a game's line and row carry, as its record says it: its forfeit's (the
    referee's words, a crash's exit included), why it was not played, or "" for a game that
    ended by the rules."""
    if record.get("unplayed"):
        return str(record["unplayed"])
    for entry in reversed(record.get("actions", ())):
        if isinstance(entry, Mapping) and "forfeit" in entry:
            return str(entry.get("detail", ""))
    return ""


def forfeit_by(record: Mapping[str, Any]) -> int | None:
    """The seat that lost by forfeit, None when nobody did (``GameResult.forfeit_by``)."""
    winner = record.get("winner")
    try:
        termination = Termination(record.get("termination"))
    except ValueError:
        return None  # replay itself rejects it
    if not termination.is_forfeit or winner not in (0, 1):
        return None
    return 1 - int(winner)


def seat_fallbacks(record: Mapping[str, Any]) -> list[int]:
    """Per seat, the entries marked as its SDK's fallback (the tables' ``errors``)."""
    counts = [0, 0]
    for entry in record.get("actions", ()):
        if isinstance(entry, Mapping) and entry.get("fallback") and entry.get("seat") in (0, 1):
            counts[entry["seat"]] += 1
    return counts


def check_line(line: Mapping[str, Any], record: Mapping[str, Any]) -> Iterator[Found]:
    """G1: a games.jsonl line's own fields say what its record says."""
    players = record.get("players")
    if players is not None and line.get("seats") != players:
        yield None, "G1", f"the line's seats {line.get('seats')!r} are not the record's players"
    for key, theirs in (
        ("seed", "seed"),
        ("result", "result"),
        ("winner", "winner"),
        ("reason", "termination"),
        ("rounds", "rounds"),
    ):
        if key in line and line[key] != record.get(theirs):
            yield (
                None,
                "G1",
                f"the line's {key} {line[key]!r} is not the record's {theirs} "
                f"{record.get(theirs)!r}",
            )
    if "detail" in line and line["detail"] != record_detail(record):
        yield (
            None,
            "G1",
            f"the line's detail {line['detail']!r} is not the record's "
            f"{record_detail(record)!r} (its forfeit's, or why it was not played)",
        )
    if "forfeit_by" in line and line["forfeit_by"] != forfeit_by(record):
        yield (
            None,
            "G1",
            f"the line's forfeit_by {line['forfeit_by']!r} is not the record's "
            f"{forfeit_by(record)!r}",
        )
    if "fallbacks" in line and line["fallbacks"] != seat_fallbacks(record):
        yield (
            None,
            "G1",
            f"the line counts {line['fallbacks']!r} fallbacks (the tables' errors), the record "
            f"holds {seat_fallbacks(record)}",
        )
    if clock_of(record) is None or record.get("unplayed"):
        return  # the referee measured nothing the line could count
    for key in ("decisions", "decision_ms"):
        if key not in line:
            yield None, "G1", f"the line of a refereed game has no {key}, which the referee counts"
    decisions, total = seat_figures(record)
    if "decisions" in line and line["decisions"] != decisions:
        yield (
            None,
            "G1",
            f"the line counts {line['decisions']!r} decisions, the record holds {decisions}",
        )
    stated = line.get("decision_ms")
    if isinstance(stated, Sequence) and len(stated) == 2:
        slack = 0.001 * (len(record.get("actions", ())) + 1)
        if any(
            not isinstance(s, int | float) or abs(s - t) > slack
            for s, t in zip(stated, total, strict=True)
        ):
            shown = [round(t, 3) for t in total]
            yield (
                None,
                "G1",
                f"the line's decision_ms {list(stated)!r} is not the sum of the record's "
                f"times {shown}",
            )
