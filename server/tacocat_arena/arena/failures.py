"""A player's own failures and output: what its page's owner-only part and
``GET /api/players/NAME/failures`` show (docs/why-lose.md).

For every published game of the player's bots (its connected bot and each hosted version),
every decision its seat forfeited, or answered with a fallback (its SDK's default after the
bot's code raised) or had substituted by the referee: the game, the round, the failure's
detail, and the DecisionRequest the bot was answering, as JSON -- rebuilt from the game's
record at that position by the check's request builder (``check.script.decision_request``:
the one view builder and wire mapping), so ``replay --bot`` sends the very same request.  The
record keeps no request id and no clock per decision, so those fields are the ladder's
allowance and 0.  For each hosted version, the last ``OUTPUT_CAP`` bytes of each of its
processes' logs (its twins' too), redacted as every stored text is (no folder of the arena's
machine).  Who may read it is the web room's business (the player's token, the organizer).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from tacocat_arena.arena.hosted import hosted_of
from tacocat_arena.arena.ladder import Arena
from tacocat_arena.arena.store import StoredGame
from tacocat_arena.check.script import decision_request
from tacocat_arena.engine.record import RecordError
from tacocat_arena.play.decisions import Answered, seat_decisions
from tacocat_arena.tournament.runner import TWIN_SUFFIX

#: The most bytes of a hosted process's output shown (its log's end).
OUTPUT_CAP = 64 * 1024
#: The most games looked through per bot (the newest).
GAMES_LOOKED_AT = 200
#: How a failure is named in the answer.
FAILED = (Answered.FORFEIT, Answered.FALLBACK, Answered.SUBSTITUTED)


def game_failures(
    record: Mapping[str, Any], stored: StoredGame, bot: str, allowance_ms: int
) -> list[dict[str, Any]]:
    """Every failed decision of ``bot``'s seat(s) in one stored game."""
    found: list[dict[str, Any]] = []
    for seat, name in enumerate(stored.result.seats):
        if name != bot or not _any_failure(record, seat):
            continue
        try:
            decisions = seat_decisions(record, seat)
        except RecordError:
            continue  # stored games re-verify (verify checks the arena); never fail a page on one
        for decision in decisions:
            if decision.answered not in FAILED:
                continue
            request = decision_request(decision.game, seat, stored.result.game_id, 0, allowance_ms)
            entry = decision.entry or {}
            found.append(
                {
                    "game": stored.result.game_id,
                    "bot": bot,
                    "seat": seat,
                    "index": decision.index,
                    "round": decision.round,
                    "kind": decision.kind.value,
                    "failure": decision.answered.value,
                    "detail": decision.detail,
                    "refused": entry.get("refused"),
                    "played": None if decision.action is None else str(decision.action),
                    "request": request_json(request),
                    "finished_at": stored.finished_at,
                }
            )
    return found


def _any_failure(record: Mapping[str, Any], seat: int) -> bool:
    """Whether the record marks any entry of ``seat`` failed (so that games without one are
    not replayed: a page lists a player's failures, not all its games)."""
    for entry in record.get("actions") or ():
        if isinstance(entry, Mapping) and entry.get("seat") == seat:
            if "forfeit" in entry or "substituted" in entry or entry.get("fallback"):
                return True
    return False


def bots_of(arena: Arena, player: str) -> list[str]:
    """The player's bots: its connected bot's name and its hosted versions' identities."""
    return [player, *(v.identity for v in arena.hosting.versions(player))]


def player_failures(arena: Arena, player: str) -> list[dict[str, Any]]:
    """Every failed decision of the player's bots in their newest published games."""
    allowance = arena.settings.referee.clock.decision_ms
    found: list[dict[str, Any]] = []
    for bot in bots_of(arena, player):
        for stored in arena.finished_games(bot=bot, limit=GAMES_LOOKED_AT):
            game = arena.finished_game(stored.result.game_id)
            if game is None:
                continue
            found.extend(game_failures(game[1], stored, bot, allowance))
    return found


def tail(path: Path, cap: int = OUTPUT_CAP) -> tuple[str, bool]:
    """The last ``cap`` bytes of a file as text, and whether anything was cut."""
    try:
        with path.open("rb") as file:
            size = file.seek(0, 2)
            file.seek(max(0, size - cap))
            data = file.read(cap)
    except OSError:
        return "", False
    return data.decode("utf-8", errors="replace"), size > cap


def player_output(arena: Arena, player: str) -> list[dict[str, Any]]:
    """Each hosted version's processes' output (their logs' ends), redacted."""
    hosting = hosted_of(arena)
    if hosting is None:
        return []
    shown = []
    for version in hosting.submissions.versions(player):
        for instance in (version.identity, version.identity + TWIN_SUFFIX):
            text, cut = tail(hosting.folder / "logs" / f"{instance}.log")
            if text:
                shown.append(
                    {
                        "bot": version.identity,
                        "process": instance,
                        "output": hosting.submissions.redact(version, text),
                        "cut": cut,
                        "cap_bytes": OUTPUT_CAP,
                    }
                )
    return shown


def owner_report(arena: Arena, player: str) -> dict[str, Any] | None:
    """What only the player (and the organizer) may read; None if no such player."""
    registered = {p.name for p in arena.store.players()}
    if player not in registered and len(bots_of(arena, player)) == 1:
        return None
    return {
        "player": player,
        "failures": player_failures(arena, player),
        "output": player_output(arena, player),
        "output_cap_bytes": OUTPUT_CAP,
    }


def request_json(request: Message) -> dict[str, Any]:
    """``request`` as the JSON its reader expects, every field present: protobuf's JSON drops
    a field at its default value, so a seat-0 bot's request came without its ``seat`` (and
    an empty hand without ``hand``)."""
    return json_format.MessageToDict(
        request, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
