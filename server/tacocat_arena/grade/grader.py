"""Grading one bot: its package built and checked, then a small match per tier of the rubric.

The bot runs as every submission runs (``launch.package``: a folder or an archive with
``bot.toml``, or a bare command; ``launch.build`` builds it in the sandbox), is checked by
``check`` in the sandbox it will play in, and plays each tier as a two-bot tournament
(``tournament.runner.run_tournament``) against the tier's baseline, stopped by the same
``MatchMonitor`` and SPRT as ``play --sprt``.  A failed check scores 0 on everything after it.

Fair across students: the bot is always called ``student`` and each tier's opponent by the
tier's name, and each tier deals from a secret derived from the grading run's secret
(``new_secret``, kept in the output folder's ``secret.txt``; ``tier_secret``), so every student
graded with the same secret meets the same deals in the same seats, in the same order (a
student stopped early by the SPRT meets a prefix of them).
"""

from __future__ import annotations

import enum
import os
import secrets
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tacocat_arena.check.gate import GateResult, gate
from tacocat_arena.grade.rubric import Method, Rubric, Tier
from tacocat_arena.launch.bots import BotStartError
from tacocat_arena.launch.build import BuildSettings
from tacocat_arena.launch.package import BotPackage, PackageError, open_package
from tacocat_arena.launch.sandbox import SandboxError, SandboxMode, resolve_mode
from tacocat_arena.launch.spec import BotSpec, ConfigError
from tacocat_arena.referee import ListenError
from tacocat_arena.report.outputs import finish_event
from tacocat_arena.stats.live import MatchMonitor
from tacocat_arena.stats.pairs import elo_to_score, estimate, score_to_elo
from tacocat_arena.stats.sprt import SprtDecision
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.config import TournamentConfig
from tacocat_arena.tournament.derive import Scheme, derive_secret
from tacocat_arena.tournament.lifecycle import open_event, play_event
from tacocat_arena.tournament.storage import StorageError

#: The name the graded bot plays under in every tier (deal seeds derive from the names).
STUDENT = "student"
#: The grading run's secret, in the output folder (0600): reuse it with ``--secret-file``.
SECRET_FILE = "secret.txt"
#: Where each tier's tournament folder goes, under the output folder.
TIERS_DIR = "tiers"

#: An SPRT tier's twins play in phases of this many pairs (``run_tournament``: a pair is
#: complete only once its second game, by the B instances, is over), so the test can stop
#: after any phase; fewer than ``play --sprt``'s 16, as a tier's cap is a few pairs.
SPRT_PAIRS_PER_PHASE = 4

Notice = Callable[[str], None]


class GradeError(RuntimeError):
    """Grading could not run at all (not the bot's fault: a rubric, a folder, a secret)."""


# -- the secret -----------------------------------------------------------------------------
def new_secret() -> str:
    """A fresh grading secret (128 bits from ``secrets``)."""
    return secrets.token_hex(16)


def read_secret(path: Path) -> str:
    """The secret in ``path``: a secret file, or a previous grade's output folder."""
    if path.is_dir():
        path = path / SECRET_FILE
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise GradeError(f"cannot read the grading secret from {path}: {error}") from None
    if len(text) < 16 or not text.isascii() or not text.isalnum():
        raise GradeError(f"{path}: not a grading secret (16 or more letters and digits)")
    return text


def write_secret(path: Path, secret: str) -> None:
    """Keep ``secret`` in ``path``, readable by its owner only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(secret + "\n")
    os.chmod(path, 0o600)


def secret_id(secret: str) -> str:
    """A short public fingerprint of a secret: two grades with the same id met the same deals
    (``derive.Scheme.JOIN``, as every grade so far was written with)."""
    return derive_secret(Scheme.JOIN, secret, "tacocat-grade-id", length=12)


def tier_secret(secret: str, slug: str) -> str:
    """The deal secret of the tier ``slug``: a tier's published results.json reveals no
    other's (and ``verify`` of a grade folder holding the secret re-derives each;
    ``derive.Scheme.HMAC``, as every grading root so far was dealt with)."""
    return derive_secret(Scheme.HMAC, secret, "tier", slug)


# -- results --------------------------------------------------------------------------------
class ItemKind(enum.Enum):
    """What an item of a grade judges (grade.json's ``kind``, by its value)."""

    CONFORMANCE = "conformance"
    TIER = "tier"
    DECISION_TIME = "decision_time"
    NO_FORFEITS = "no_forfeits"


#: The optional items' names, as grades and rubrics' visibilities name them.
DECISION_TIME_ITEM = "decision time"
NO_FORFEITS_ITEM = "no forfeits"


@dataclass(frozen=True)
class ItemResult:
    """One line of a grade: points of ``max_points``, and why (``output``)."""

    name: str
    kind: ItemKind
    points: float
    max_points: float
    passed: bool
    output: str
    games: int = 0
    #: The bot's score per game against the tier's opponent, with its 95% interval.
    score: float | None = None
    score_low: float | None = None
    score_high: float | None = None
    #: The tier's tournament folder (relative to the grade's folder) and its games, in order:
    #: (game id, deal seed, the bot's points in it).
    folder: str | None = None
    games_played: tuple[tuple[str, int, float], ...] = ()


@dataclass(frozen=True)
class Grade:
    """A whole grade: one bot through one rubric."""

    student: str
    target: str
    rubric: str
    items: tuple[ItemResult, ...]
    secret_id: str
    seconds: float
    started: str
    #: The machine's load averages as the grade ended (``os.getloadavg()`` where it is built).
    load: tuple[float, float, float]
    #: Item name -> Gradescope visibility, from the rubric (absent: "visible").
    visibility: Mapping[str, str] = field(default_factory=dict)

    @property
    def points(self) -> float:
        return sum(item.points for item in self.items)

    @property
    def max_points(self) -> float:
        return sum(item.max_points for item in self.items)


# -- grading --------------------------------------------------------------------------------
async def grade_bot(
    target: str,
    rubric: Rubric,
    out: Path,
    secret: str,
    *,
    student: str = STUDENT,
    notice: Notice = lambda text: None,
) -> Grade:
    """Grade ``target`` (a package folder or archive, or a command) by ``rubric`` into ``out``.

    Nothing the bot does raises out of here: a package refused, a failed build, a bot that
    cannot start or fails a check all score 0 with the reason in the grade."""
    started = time.monotonic()
    started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    out.mkdir(parents=True, exist_ok=True)
    try:
        mode = resolve_mode(rubric.sandbox, warn=notice)
    except SandboxError as error:
        raise GradeError(str(error)) from None
    package = await _conformance(target, rubric, out, mode, notice)
    if isinstance(package, str):
        failure, why = package, package.splitlines()[0]
        notice(f"conformance failed: {why}")
        items = [
            _conformance_item(rubric, False, failure),
            *not_graded(rubric, f"not graded: conformance failed ({why})"),
        ]
    else:
        items = [_conformance_item(rubric, True, "check passed")]
        items += await _tiers(package, rubric, out, secret, mode, notice)
    return Grade(
        student=student,
        target=target,
        rubric=rubric.name,
        items=tuple(items),
        secret_id=secret_id(secret),
        seconds=time.monotonic() - started,
        started=started_at,
        load=os.getloadavg(),
        visibility=rubric.visibility,
    )


async def _tiers(
    package: BotPackage, rubric: Rubric, out: Path, secret: str, mode: SandboxMode, notice: Notice
) -> list[ItemResult]:
    """Each tier's item, in order, then the optional items judged over all their games."""
    items: list[ItemResult] = []
    results: list[GameResult] = []
    for tier in rubric.tiers:
        notice(f"tier {tier.name!r}: against {tier.opponent}, {tier.describe()}")
        item, played = await _tier(package, tier, rubric, out, secret, mode)
        items.append(item)
        results += played
        notice(f"  {item.output}")
    return items + _after_tiers(rubric, results)


def resolve_target(target: str, into: Path) -> BotPackage:
    """The package ``target`` names: a folder or an archive (unpacked into ``into``), or else
    a command run from the current folder (``builtin:NAME`` included)."""
    path = Path(target)
    if path.exists():
        if into.exists():
            shutil.rmtree(into)
        return open_package(path, into)
    return BotPackage(Path.cwd().resolve(), target)


async def _conformance(
    target: str, rubric: Rubric, out: Path, mode: SandboxMode, notice: Notice
) -> BotPackage | str:
    """The package, built and checked (``check.gate``, as the arena's gate does); or, for
    the conformance item, why not."""
    try:
        package = resolve_target(target, out / "package")
        package.spec(STUDENT)
    except (PackageError, ConfigError, OSError) as error:
        return f"package refused: {error}"
    notice(f"package: {package.command!r} in {package.root}")
    logs = out / "logs"
    logs.mkdir(exist_ok=True)
    verdict: GateResult = await gate(
        package,
        rubric.clock,
        mode,
        logs / "check.log",
        name=STUDENT,
        build=BuildSettings(timeout_s=rubric.build_timeout_s),
    )
    if not verdict.passed:
        return verdict.explained()
    assert verdict.report is not None
    notice(f"conformance: {len(verdict.report.results)} checks passed")
    return package


def _conformance_item(rubric: Rubric, passed: bool, output: str) -> ItemResult:
    return _item("conformance", ItemKind.CONFORMANCE, rubric.conformance_points, passed, output)


def _item(
    name: str, kind: ItemKind, max_points: float, passed: bool, output: str, **more: Any
) -> ItemResult:
    """An item worth ``max_points`` if ``passed``, else 0; ``more``: its figures."""
    return ItemResult(
        name=name,
        kind=kind,
        points=max_points if passed else 0.0,
        max_points=max_points,
        passed=passed,
        output=output,
        **more,
    )


def _failed(name: str, kind: ItemKind, max_points: float, output: str) -> ItemResult:
    """An item that scores 0, and why."""
    return _item(name, kind, max_points, False, output)


def not_graded(rubric: Rubric, why: str) -> list[ItemResult]:
    """Every item after conformance, scored 0 because ``why``."""
    items = [_failed(tier.name, ItemKind.TIER, tier.points, why) for tier in rubric.tiers]
    if rubric.decision_time is not None:
        points = rubric.decision_time[0]
        items.append(_failed(DECISION_TIME_ITEM, ItemKind.DECISION_TIME, points, why))
    if rubric.no_forfeits_points is not None:
        points = rubric.no_forfeits_points
        items.append(_failed(NO_FORFEITS_ITEM, ItemKind.NO_FORFEITS, points, why))
    return items


def _tier_config(
    package: BotPackage, tier: Tier, rubric: Rubric, out: Path, mode: SandboxMode
) -> TournamentConfig:
    """A tier's match as a two-bot tournament: the student (as the gate started it) against
    the tier's baseline, in the tier's folder."""
    return TournamentConfig(
        bots=(package.spec(STUDENT), BotSpec.checked(tier.slug, tier.opponent)),
        games_per_pairing=tier.games,
        seed=rubric.seed,
        concurrency=rubric.concurrency,
        move_timeout_s=rubric.move_timeout_s,
        out=out,
        name=f"{tier.name}",
        base_dir=package.root,
        sandbox=mode,
        max_restarts=1,
    )


async def _tier(
    package: BotPackage,
    tier: Tier,
    rubric: Rubric,
    out: Path,
    secret: str,
    mode: SandboxMode,
) -> tuple[ItemResult, list[GameResult]]:
    """Play one tier's match (``tournament.lifecycle``, as ``play --sprt`` does) and judge it."""
    folder = out / TIERS_DIR / tier.slug
    if folder.exists():
        shutil.rmtree(folder)  # a re-grade replays the tier from its first deal
    config = _tier_config(package, tier, rubric, folder, mode)
    sprt = tier.sprt if tier.method is Method.SPRT else None
    try:
        event = open_event(config, secret=tier_secret(secret, tier.slug), sprt=sprt)
        try:
            outcome = await play_event(event, pairs_per_phase=SPRT_PAIRS_PER_PHASE)
            results = event.store.results()
            finish_event(event, outcome)
        except (BotStartError, ListenError, SandboxError) as error:
            return _failed(tier.name, ItemKind.TIER, tier.points, str(error)), []
        finally:
            event.close()
    except (StorageError, OSError) as error:
        raise GradeError(f"tier {tier.name!r}: {error}") from None
    assert event.monitor is not None  # a tier is a two-bot match
    return _judge(tier, event.monitor, results, f"{TIERS_DIR}/{tier.slug}"), results


def _judge(tier: Tier, monitor: MatchMonitor, results: list[GameResult], folder: str) -> ItemResult:
    """Pass or fail, by the tier's method, with the score and its interval."""
    found = estimate(monitor.pentanomial)
    # The pairs' score, as the interval and the test see it; the games' score before a pair.
    score = monitor.points / monitor.games if monitor.games else None
    low = high = None
    if found is not None:
        score = found.score
        low, high = elo_to_score(found.elo_low), elo_to_score(found.elo_high)
    if tier.method is Method.SPRT:
        assert monitor.sprt is not None
        state = monitor.sprt
        if state.decision is SprtDecision.NONE:
            passed = state.llr > 0
            how = (
                f"{state.summary()}: undecided at the cap of {tier.max_games} games, the LLR's "
                f"sign decides ({'above' if passed else 'not above'} 0)"
            )
        else:
            passed = state.decision is SprtDecision.H1
            how = state.summary()
    else:
        passed = found is not None and found.elo_low >= score_to_elo(tier.threshold)
        how = (
            f"95% interval of the score [{low:.2f}, {high:.2f}] "
            f"{'clears' if passed else 'does not clear'} {tier.threshold:g}"
            if low is not None and high is not None
            else "no complete pair"
        )
    shown = "no game" if score is None else f"score {score:.2f}"
    if low is not None and high is not None:
        shown += f" (95% {low:.2f}-{high:.2f})"
    verdict = "passed" if passed else "failed"
    # One wording for the two counts (issue 37: "23 games ... after 9 pairs"): the games,
    # and of them the complete duplicate pairs that the score, its interval and the test use.
    pairs = monitor.pentanomial.pairs
    counted = f"{monitor.games} games ({pairs} complete duplicate pair{'s' if pairs != 1 else ''})"
    output = f"{verdict}: {shown} over {counted} against {tier.opponent}; {how}"
    games = tuple((r.game_id, r.seed, r.score(r.seats.index(STUDENT))) for r in results)
    return _item(
        tier.name,
        ItemKind.TIER,
        tier.points,
        passed,
        output,
        games=monitor.games,
        score=score,
        score_low=low,
        score_high=high,
        folder=folder,
        games_played=games,
    )


def _after_tiers(rubric: Rubric, results: list[GameResult]) -> list[ItemResult]:
    """The optional items, judged over every tier's games."""
    seats = [(r, r.seats.index(STUDENT)) for r in results]
    items = []
    if rubric.decision_time is not None:
        items.append(_decision_time(*rubric.decision_time, seats))
    if rubric.no_forfeits_points is not None:
        items.append(_no_forfeits(rubric.no_forfeits_points, seats))
    return items


def _decision_time(points: float, limit: float, seats: list[tuple[GameResult, int]]) -> ItemResult:
    """The mean time per decision over every game, within ``limit`` ms or not."""
    decisions = sum(r.decisions[seat] for r, seat in seats)
    total_ms = sum(r.decision_ms[seat] for r, seat in seats)
    if decisions == 0:
        return _failed(DECISION_TIME_ITEM, ItemKind.DECISION_TIME, points, "no decision made")
    mean = total_ms / decisions
    passed = mean <= limit
    output = (
        f"mean {mean:.1f} ms per decision over {decisions} decisions "
        f"({'within' if passed else 'over'} the limit of {limit:g} ms)"
    )
    return _item(
        DECISION_TIME_ITEM, ItemKind.DECISION_TIME, points, passed, output, games=len(seats)
    )


def _no_forfeits(points: float, seats: list[tuple[GameResult, int]]) -> ItemResult:
    """No game lost by a forfeit (and how many moves the SDK played after the bot's code
    failed)."""
    lost = [r for r, seat in seats if r.forfeit_by == seat]
    errors = sum(r.fallbacks[seat] for r, seat in seats)
    if not seats:
        passed, output = False, "no game played"
    elif lost:
        kinds = sorted({r.reason.value for r in lost})
        passed = False
        output = (
            f"{len(lost)} of {len(seats)} games lost by a forfeit ({', '.join(kinds)}); "
            f"first: {lost[0].game_id}"
        )
    else:
        passed, output = True, f"no forfeit in {len(seats)} games"
    if errors:
        output += f"; {errors} moves played by default after the bot's code failed"
    return _item(NO_FORFEITS_ITEM, ItemKind.NO_FORFEITS, points, passed, output, games=len(seats))
