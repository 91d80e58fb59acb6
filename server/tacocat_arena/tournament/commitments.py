"""Commitments: what a tournament publishes at its start so that what no record proves can
be proved afterwards.

A complete folder publishes its config and deal secret, from which ``verify`` re-derives the
plan; but whoever holds the folder at the end could rewrite it whole: shrink the plan and
recompute its fingerprint, or swap a pair's two records and relabel them (a 2-0 becomes 0-2),
every file agreeing with every other.  So, before the first game, the tournament publishes
``commitment.json`` (and prints it, and the report shows it): the config's fingerprint, the
plan's own fingerprint (its games and seats, which the secret does not decide), and a hash
commitment to the deal secret.  And each games.jsonl line, published as its pair ends, carries
a tag binding the game to its seats and result: an HMAC under the deal secret, which no one
can compute before the secret is published.  Anyone who kept the commitment (or the lines)
as they were published can then tell a folder rewritten later; ``verify`` checks that the
folder's are what its published secret and plan give (C1).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tacocat_arena.tournament.config import TournamentConfig
from tacocat_arena.tournament.schedule import PlannedGame, games_planned, plan_for

COMMITMENT_FILE = "commitment.json"
COMMITMENT_FORMAT = "tacocat-commitment"
#: How a game's tag is made, as commitment.json states it (docs/tournaments.md).
TAG_RULE = (
    "HMAC-SHA256 keyed with the deal secret over 'tacocat-arena-game' and the game id, the two "
    "bots and the result, joined by newlines; 32 hex digits"
)


def secret_commitment(secret: str) -> str:
    """SHA-256 of the deal secret (with a label): published at the start, it binds the
    tournament to the secret it publishes at the end, and tells nothing of it before."""
    return hashlib.sha256(f"tacocat-arena-secret:{secret}".encode()).hexdigest()


def plan_fingerprint(plan: Sequence[PlannedGame]) -> str:
    """SHA-256 of the plan's games in order: each id, its seats, its deal and whether it is a
    twin (not the seeds: those come from the secret, committed apart)."""
    games = [[g.game_id, *g.seats, g.deal, g.twin] for g in plan]
    return hashlib.sha256(json.dumps(games, separators=(",", ":")).encode()).hexdigest()


def game_tag(secret: str, game_id: str, seats: Sequence[str], result: str | None) -> str:
    """The tag of one game (``TAG_RULE``): who sat where and how it ended, bound under the
    secret, so a pair's records swapped and relabelled no longer match their tags."""
    message = "\n".join(["tacocat-arena-game", game_id, *seats, str(result)])
    return hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()[:32]


def tag_of(secret: str, game_id: str, seats: Sequence[str], record: Mapping[str, Any]) -> str:
    """``game_tag`` of a recorded game."""
    return game_tag(secret, game_id, seats, record.get("result"))


def read_commitment(folder: Path) -> dict[str, Any] | None:
    """The folder's commitment.json, None without a readable one."""
    try:
        data = json.loads((folder / COMMITMENT_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == COMMITMENT_FORMAT else None


def committed_plan(config: TournamentConfig) -> list[PlannedGame]:
    """The plan a commitment covers: the games ``config`` plans before any is played and
    before its secret is known (every game of a round robin or a gauntlet, whose ids and
    seats the secret does not decide; a Swiss event's first round, the later ones being
    paired from the results)."""
    return plan_for(config, secret="")


def commitment(config: TournamentConfig, secret: str) -> dict[str, Any]:
    """What a tournament publishes at its start."""
    return {
        "format": COMMITMENT_FORMAT,
        "fingerprint": config.fingerprint(),
        "plan": plan_fingerprint(committed_plan(config)),
        "games_planned": games_planned(config),
        "secret_commitment": secret_commitment(secret),
        "tag": TAG_RULE,
    }


def publish_commitment(folder: Path, config: TournamentConfig, secret: str) -> dict[str, Any]:
    """Write commitment.json into ``folder`` before the first game (the same again on
    ``--resume``: the config and the kept secret are the same); return it."""
    data = commitment(config, secret)
    partial = folder / f"{COMMITMENT_FILE}.partial"
    partial.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(partial, folder / COMMITMENT_FILE)
    return data


def commitment_words(data: Mapping[str, Any]) -> str:
    """The commitment in one line, for the terminal and the report."""
    return (
        f"config {data['fingerprint']}, plan {str(data['plan'])[:16]} "
        f"({data['games_planned']} games), deal secret committed as "
        f"{str(data['secret_commitment'])[:16]}"
    )


Found = tuple[str, str, str]  # (game id or "", rule, message), as plan_check's


def check_commitment(
    folder: Path,
    metadata: Mapping[str, Any],
    config: TournamentConfig | None,
    lines: Sequence[tuple[str, Sequence[str], Mapping[str, Any], Mapping[str, Any] | None]],
) -> tuple[list[Found], str]:
    """C1: the folder's commitment.json against its results.json's ``config`` (None if it
    describes none: S1 says why) and, once the secret is published, the
    commitment to it and every line's tag.  ``lines``: (game id, seats, record, the
    games.jsonl line's fields, None without a line).  Returns the problems and what was
    checked ("" without a commitment: a folder from before commitments)."""
    path = folder / COMMITMENT_FILE
    if not path.exists():
        return [], ""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, Mapping) or data.get("format") != COMMITMENT_FORMAT:
            raise ValueError(f"not a {COMMITMENT_FORMAT}")
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return [("", "C1", f"{COMMITMENT_FILE} is not readable ({error})")], ""
    found: list[Found] = []
    if "commitment" in metadata and metadata["commitment"] != data:
        found.append(("", "C1", f"results.json's commitment is not {COMMITMENT_FILE}'s"))
    if data.get("fingerprint") != metadata.get("fingerprint"):
        found.append(
            (
                "",
                "C1",
                f"the config's fingerprint {metadata.get('fingerprint')!r} is not the "
                f"{data.get('fingerprint')!r} committed at the start",
            )  # fmt: skip
        )
    if config is not None:
        planned = games_planned(config)
        plan = plan_fingerprint(committed_plan(config))
        if data.get("plan") != plan or data.get("games_planned") != planned:
            found.append(
                (
                    "",
                    "C1",
                    f"the plan results.json's config gives ({planned} games) is not the one "
                    f"committed at the start ({data.get('games_planned')!r} games)",
                )
            )
    secret = metadata.get("deal_secret")
    if not isinstance(secret, str) or not secret:
        return found, "the plan committed at the start"
    if data.get("secret_commitment") != secret_commitment(secret):
        found.append(("", "C1", "the published deal_secret is not the one committed at the start"))
    for game_id, seats, record, line in lines:
        if line is None:
            continue  # a game whose pair is not over: no line, no tag yet
        expected = tag_of(secret, game_id, seats, record)
        if line.get("tag") != expected:
            found.append(
                (
                    game_id,
                    "C1",
                    f"its tag {line.get('tag')!r} is not the HMAC of its id, seats "
                    "and result under the published secret",
                )  # fmt: skip
            )
    return found, "the commitment published at the start and every game's tag"
