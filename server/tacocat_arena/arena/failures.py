"""A player's own failures and output: what its page's owner-only part and
``GET /api/players/NAME/failures`` show (docs/why-lose.md).

For every published game of the player's bots (its connected bot and each hosted version),
every decision its seat forfeited, or answered with a fallback (its SDK's default after the
bot's code raised) or had substituted by the referee: the game, the round, the failure's
detail, and the DecisionRequest the bot was answering, as JSON -- rebuilt from the game's
record at that position by the check's request builder (``check.script.decision_request``:
the one view builder and wire mapping), so ``replay --bot`` sends the very same request.  The
record keeps no request id and no clock per decision, so those fields are the ladder's
allowance and 0.

A hosted version's output, **per game**: what its process printed while that game was in
flight, its last ``GAME_OUTPUT_CAP`` bytes (``launch.game_output`` captures it as the runner
copies the process's output; exact when the process played that game alone, else marked with
the games it overlapped), beside each failure of that game and for its newest games; and the
end of each of its processes' whole logs (its twins' too), ``OUTPUT_CAP`` bytes.  All of it
redacted as every stored text is (no folder of the arena's machine).  Who may read it is the
web room's business (the player's token, the organizer).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from tacocat_arena.arena.hosted import hosted_of
from tacocat_arena.arena.ladder import Arena
from tacocat_arena.arena.names import public_text
from tacocat_arena.arena.store import StoredGame
from tacocat_arena.arena.submissions import parse_identity
from tacocat_arena.check.script import decision_request
from tacocat_arena.engine.record import RecordError
from tacocat_arena.launch import game_output
from tacocat_arena.launch.game_output import GAME_OUTPUT_CAP
from tacocat_arena.play.decisions import Answered, seat_decisions
from tacocat_arena.tournament.runner import TWIN_SUFFIX

#: The most bytes of a hosted process's output shown (its log's end).
OUTPUT_CAP = 64 * 1024
#: The most games looked through per bot (the newest).
GAMES_LOOKED_AT = 200
#: The newest games whose output is listed per hosted version.
GAMES_WITH_OUTPUT = 20
#: How a failure is named in the answer.
FAILED = (Answered.FORFEIT, Answered.FALLBACK, Answered.SUBSTITUTED)


def game_failures(
    record: Mapping[str, Any], stored: StoredGame, bot: str, allowance_ms: int
) -> list[dict[str, Any]]:
    """Every failed decision of ``bot``'s seat(s) in one stored game; a detail that names
    a twin instance (``NAME~B``, the session that failed) names the bot, as every page does."""
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
                    "detail": public_text(decision.detail, stored.result.seats),
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
            failures = game_failures(game[1], stored, bot, allowance)
            if failures:
                shown = game_output_of(arena, bot, stored.result.game_id)
                for failure in failures:
                    failure["output"] = shown
            found.extend(failures)
    return found


def game_output_of(arena: Arena, bot: str, game_id: str) -> dict[str, Any] | None:
    """What hosted version ``bot``'s process printed during game ``game_id``, redacted, or
    None (a connected bot, whose output is its own; or nothing printed)."""
    hosting = hosted_of(arena)
    if hosting is None or not hosting.is_hosted(bot):
        return None
    folder = hosting.folder / game_output.OUTPUT_DIR
    for instance in (bot, bot + TWIN_SUFFIX):  # the one that played it (twins: game b)
        found = game_output.load(folder, instance, game_id)
        if found is not None:
            break
    else:
        return None
    version = _version_of(arena, bot)
    found["bot"] = bot
    found["output"] = hosting.submissions.redact(version, str(found.get("output", "")))
    return found


def _version_of(arena: Arena, bot: str) -> Any:
    hosting = hosted_of(arena)
    identity = parse_identity(bot)
    if hosting is None or identity is None:
        return None
    return hosting.submissions.get(*identity)


def games_output(arena: Arena, player: str) -> list[dict[str, Any]]:
    """Each hosted version's output in its newest ``GAMES_WITH_OUTPUT`` published games that
    printed anything, newest first (a game held for its duplicate twin is not shown yet: what
    a bot printed may tell the deal its twin is still to play)."""
    hosting = hosted_of(arena)
    if hosting is None:
        return []
    folder = hosting.folder / game_output.OUTPUT_DIR
    shown = []
    for version in hosting.submissions.versions(player):
        games = [
            game
            for instance in (version.identity, version.identity + TWIN_SUFFIX)
            for game in game_output.saved_games(folder, instance)
        ]
        listed = 0
        for game in sorted(games, reverse=True):
            if listed == GAMES_WITH_OUTPUT:
                break
            found = game_output_of(arena, version.identity, game)
            if found is not None and arena.finished_game(game) is not None:
                shown.append(found)
                listed += 1
    return shown


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


def _in_play(arena: Arena, bot: str) -> bool:
    """Whether ``bot`` has a pairing in flight (``Arena.in_flight``: a batch, a game on the
    arena's referee, an event's) or a published-to-be game held for its twin."""
    if arena.in_flight[bot]:
        return True
    return any(bot in stored.result.seats for held in arena.held.values() for stored in held)


def player_output(arena: Arena, player: str) -> list[dict[str, Any]]:
    """Each hosted version's processes' output (their logs' ends), redacted; not while the
    version has a game in play or held for its twin (``_in_play``): its log then holds what it
    printed in games whose twins are still to be played or in play (a batch is committed at
    its end), which may tell their deal."""
    hosting = hosted_of(arena)
    if hosting is None:
        return []
    shown = []
    for version in hosting.submissions.versions(player):
        if _in_play(arena, version.identity):
            continue
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
        "game_output": games_output(arena, player),
        "game_output_cap_bytes": GAME_OUTPUT_CAP,
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
