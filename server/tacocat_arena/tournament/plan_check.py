"""What ``verify`` checks of a whole tournament folder: that it holds exactly its plan.

Each record re-verifies on its own, but a folder could still hold the wrong games: a deal
dealt with another secret, two deals' games swapped, a duplicate pair left out, a game
twice.  Once the tournament is complete its results.json publishes the config, the seed and
the deal secret (docs/tournaments.md, "Seeds"), from which the tournament's own plan function
(``schedule.plan_for``) re-derives every game, its seats and its deal seed.  Before that the
secret is kept, and the plan cannot be checked: that is reported, never passed as OK.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tacocat_arena.engine import Ruleset, RulesetError
from tacocat_arena.referee.settings import SEAT_ALLOWANCES_KEY, FailurePolicy
from tacocat_arena.tournament.config import (
    BotSpec,
    ConfigError,
    TournamentConfig,
    TournamentFormat,
)
from tacocat_arena.tournament.schedule import PlannedGame, plan_for
from tacocat_arena.tournament.swiss import Outcome

RESULTS_FILE = "results.json"

#: One game of the folder: its id, its bots' names (when known) and its record.
Played = tuple[str, tuple[str, str] | None, Mapping[str, Any]]


@dataclass(frozen=True)
class PlanCheck:
    """What the folder check found: ``unchecked`` says why the plan could not be re-derived
    ("" when it was); ``found`` holds (game id or "", rule, message)."""

    unchecked: str = ""
    found: list[tuple[str, str, str]] = field(default_factory=list)


def config_from_metadata(metadata: Mapping[str, Any]) -> TournamentConfig:
    """The config results.json's ``metadata`` describes (``TournamentConfig.describe``), as far
    as it decides the games: bots and their arguments, games, seed, clocks, policy, ruleset,
    format.  Raises ConfigError, RulesetError, AttributeError, KeyError, TypeError or ValueError
    on metadata that does not describe one."""
    args = metadata.get("bot_args") or {}
    clocks = metadata.get("bot_move_timeout_s") or {}
    bots = tuple(
        BotSpec(
            str(name),
            str(command),
            args=tuple(str(a) for a in args.get(name, ())),
            move_timeout_s=float(clocks[name]) if name in clocks else None,
        )
        for name, command in dict(metadata["bots"]).items()
    )
    kind = TournamentFormat(metadata.get("format", TournamentFormat.ROUND_ROBIN.value))
    gauntlet = kind is TournamentFormat.GAUNTLET
    return TournamentConfig(
        bots=bots,
        games_per_pairing=int(metadata["games_per_pairing"]),
        seed=int(metadata["seed"]),
        move_timeout_s=float(metadata["move_timeout_s"]),
        time_bank_s=float(metadata["time_bank_s"]),
        grace_ms=int(metadata["grace_ms"]),
        failure_policy=FailurePolicy(metadata["failure_policy"]),
        ruleset=Ruleset.from_dict(metadata["ruleset"]),
        format=kind,
        gauntlet_bot=str(metadata["gauntlet_bot"]) if gauntlet else None,
        rounds=int(metadata["rounds"]) if kind is TournamentFormat.SWISS else None,
        extra_pairs=int(metadata["extra_pairs"]) if kind is TournamentFormat.KNOCKOUT else None,
        **(_finals_keys(metadata) if kind is TournamentFormat.FINALS else {}),
    )


def _finals_keys(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A finals event's settings as ``TournamentConfig.describe`` states them."""
    return {
        "cut": float(metadata["cut"]),
        "top": int(metadata["top"]),
        "confidence": float(metadata["confidence"]),
        "until_stable": bool(metadata["until_stable"]),
        "max_stages": int(metadata["max_stages"]),
    }


def check_plan(folder: Path, games: Sequence[Played]) -> PlanCheck:
    """Check that ``games`` (the folder's) are exactly the plan its results.json re-derives."""
    path = folder / RESULTS_FILE
    if not path.exists():
        return PlanCheck(f"{folder} has no {RESULTS_FILE}, so its plan cannot be re-derived")
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return PlanCheck(found=[("", "S1", f"{path} is not readable JSON ({error})")])
    metadata = results.get("metadata") if isinstance(results, Mapping) else None
    if not isinstance(metadata, Mapping):
        return PlanCheck(found=[("", "S1", f"{path} holds no metadata object")])
    secret = metadata.get("deal_secret")
    if not metadata.get("complete") or not isinstance(secret, str) or not secret:
        return PlanCheck(
            f"{RESULTS_FILE} publishes no deal_secret: the tournament is not complete, so "
            "which games it should hold and their deals cannot be re-derived yet"
        )
    try:
        config = config_from_metadata(metadata)
    except (ConfigError, RulesetError, AttributeError, KeyError, TypeError, ValueError) as error:
        return PlanCheck(found=[("", "S1", f"{path}'s metadata is not a valid config: {error}")])
    found: list[tuple[str, str, str]] = []
    if config.fingerprint() != metadata.get("fingerprint"):
        found.append(
            (
                "",
                "S1",
                f"the config in {RESULTS_FILE} has the fingerprint {config.fingerprint()}, not "
                f"the {metadata.get('fingerprint')!r} it states",
            )
        )
    # A Swiss event's rounds are re-paired from the games' own results (tournament.swiss).
    outcomes = [Outcome.of_record(game_id, names, record) for game_id, names, record in games]
    plan = plan_for(config, secret=secret, results=outcomes)
    for key, value in (("games_planned", len(plan)), ("games_played", len(games))):
        if metadata.get(key) != value:
            found.append(
                ("", "S1", f"{RESULTS_FILE} says {key} {metadata.get(key)!r}, not {value}")
            )
    # A match that ``play --sprt`` stopped once the test decided holds the games it reached.
    sprt = results.get("sprt")
    stopped = isinstance(sprt, Mapping) and sprt.get("decision") in ("H0", "H1")
    # A match its player ended between pairs says so (``write_outputs``' ``stopped``).
    stopped = stopped or bool(metadata.get("stopped"))
    found += _against_plan(plan, games, stopped=stopped)
    found += _settings(config, games)
    return PlanCheck(found=found)


def _against_plan(
    plan: Sequence[PlannedGame], games: Sequence[Played], *, stopped: bool
) -> list[tuple[str, str, str]]:
    """S1: every planned game once (of a match the SPRT ``stopped``, the games it reached),
    with its seats and its deal seed; nothing else."""
    found: list[tuple[str, str, str]] = []
    count = Counter(game_id for game_id, _, _ in games)
    by_id = {game_id: (names, record) for game_id, names, record in games}
    planned = {game.game_id for game in plan}
    wrong_seeds = 0
    for game in plan:
        if game.game_id not in by_id:
            if stopped:
                # A game the match did not reach: the SPRT stops between pairs, and the games
                # of the pairs then half played (twins play a phase's first games, then its
                # second ones) are kept as unpaired games, as the tables count them.
                continue
            twin = "-".join((*reversed(game.seats), f"d{game.deal}"))
            found.append(
                (
                    game.game_id,
                    "S1",
                    f"a planned game is missing (deal {game.deal} of {game.seats[0]} and "
                    f"{game.seats[1]}): its duplicate pair with {twin} is incomplete",
                )
            )
            continue
        if count[game.game_id] > 1:
            found.append((game.game_id, "S1", f"appears {count[game.game_id]} times"))
        names, record = by_id[game.game_id]
        if names is not None and tuple(names) != game.seats:
            found.append((game.game_id, "S1", f"seats {names}, planned {game.seats}"))
        if record.get("seed") != game.seed:
            wrong_seeds += 1
            found.append(
                (
                    game.game_id,
                    "S1",
                    f"dealt with seed {record.get('seed')!r}, planned {game.seed} (the deal "
                    "seed from the config's seed, the pairing, the deal and the secret)",
                )
            )
    if wrong_seeds and wrong_seeds == len(games):
        found.append(
            (
                "",
                "S1",
                "no game has its planned deal seed: the published deal_secret (or seed) is not "
                "the one the games were dealt with",
            )
        )
    for game_id in sorted(set(count) - planned):
        found.append((game_id, "S1", "is not a game of the plan"))
    return found


def _settings(config: TournamentConfig, games: Sequence[Played]) -> list[tuple[str, str, str]]:
    """S2: every played game under the tournament's ruleset, clock and failure policy."""
    settings = config.referee_settings
    ruleset = config.ruleset.to_dict()
    found: list[tuple[str, str, str]] = []
    for game_id, names, record in games:
        if record.get("unplayed"):
            continue
        # A seat with an allowance of its own (a person's) is in the block as the config says.
        referee = settings.record_block(tuple(names) if names is not None else None)  # type: ignore[arg-type]
        keys = {*referee, SEAT_ALLOWANCES_KEY}
        stated = record.get("referee")
        played = (
            {k: stated[k] for k in keys if k in stated} if isinstance(stated, Mapping) else stated
        )
        if played != referee:
            found.append((game_id, "S2", f"played under {played!r}, the tournament's is {referee}"))
        if record.get("ruleset") != ruleset:
            found.append((game_id, "S2", "played under another ruleset than the tournament's"))
    return found
