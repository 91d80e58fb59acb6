"""Grading one bot: its package built and checked, then a small match per tier of the rubric.

The bot runs as every submission runs (``launch.package``: a folder or an archive with
``bot.toml``, or a bare command; ``launch.build`` builds it in the sandbox), is checked by
``check`` in the sandbox it will play in, and plays each tier as a two-bot tournament
(``tournament.runner.run_tournament``) against the tier's baseline, stopped by the same
``MatchMonitor`` and SPRT as ``play --sprt``.  A failed check scores 0 on everything after it.

Fair across students: the bot is always called ``student`` and each tier's opponent by the
tier's name, and each tier deals from a secret derived from the grading run's secret
(``GradingSecret``), so every student graded with the same secret meets the same deals in the
same seats, in the same order (a student stopped early by the SPRT meets a prefix of them).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tacocat_arena.check.runner import BotCheckError, CheckReport, check_bot
from tacocat_arena.check.runner import Status as CheckStatus
from tacocat_arena.grade.rubric import Method, Rubric, Tier
from tacocat_arena.launch.bots import BotStartError
from tacocat_arena.launch.build import BuildSettings, build_package
from tacocat_arena.launch.package import BotPackage, PackageError, open_package
from tacocat_arena.launch.sandbox import SandboxError, SandboxMode, resolve_mode
from tacocat_arena.launch.spec import BotSpec, ConfigError
from tacocat_arena.referee import ListenError
from tacocat_arena.report.outputs import write_outputs
from tacocat_arena.stats.live import MatchMonitor
from tacocat_arena.stats.pairs import elo_to_score, estimate, score_to_elo
from tacocat_arena.stats.sprt import SprtDecision
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.commitments import publish_commitment
from tacocat_arena.tournament.config import TournamentConfig
from tacocat_arena.tournament.runner import run_tournament
from tacocat_arena.tournament.schedule import plan_for
from tacocat_arena.tournament.storage import StorageError, TournamentStore

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
    """A short public fingerprint of a secret: two grades with the same id met the same deals."""
    return hashlib.sha256(f"tacocat-grade-id:{secret}".encode()).hexdigest()[:12]


def tier_secret(secret: str, slug: str) -> str:
    """The deal secret of the tier ``slug``: a tier's published results.json reveals no
    other's (and ``verify`` of a grade folder holding the secret re-derives each)."""
    return hmac.new(secret.encode(), f"tier:{slug}".encode(), hashlib.sha256).hexdigest()[:32]


# -- results --------------------------------------------------------------------------------
@dataclass(frozen=True)
class ItemResult:
    """One line of a grade: points of ``max_points``, and why (``output``)."""

    name: str
    kind: str  # "conformance", "tier", "decision_time" or "no_forfeits"
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
    load: tuple[float, float, float] = field(default_factory=lambda: os.getloadavg())
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
    items: list[ItemResult] = []
    build = BuildSettings(timeout_s=rubric.build_timeout_s)
    refused = await _conformance(target, rubric, out, mode, build, notice)
    package, failure = refused
    if failure is not None or package is None:
        items.append(failure or _conformance_item(rubric, False, "not graded"))
        why = items[0].output.splitlines()[0]
        notice(f"conformance failed: {why}")
        items += not_graded(rubric, f"not graded: conformance failed ({why})")
    else:
        items.append(_conformance_item(rubric, True, "check passed"))
        results: list[GameResult] = []
        for tier in rubric.tiers:
            notice(f"tier {tier.name!r}: against {tier.opponent}, {tier.describe()}")
            item, played = await _tier(package, tier, rubric, out, secret, mode, notice)
            items.append(item)
            results += played
            notice(f"  {item.output}")
        items += _after_tiers(rubric, results)
    return Grade(
        student=student,
        target=target,
        rubric=rubric.name,
        items=tuple(items),
        secret_id=secret_id(secret),
        seconds=time.monotonic() - started,
        started=started_at,
        visibility=rubric.visibility,
    )


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
    target: str,
    rubric: Rubric,
    out: Path,
    mode: SandboxMode,
    build: BuildSettings,
    notice: Notice,
) -> tuple[BotPackage | None, ItemResult | None]:
    """The package, built and checked; or the failed conformance item saying why."""
    try:
        package = resolve_target(target, out / "package")
        BotSpec.checked(STUDENT, package.command)
    except (PackageError, ConfigError, OSError) as error:
        return None, _conformance_item(rubric, False, f"package refused: {error}")
    notice(f"package: {package.command!r} in {package.root}")
    built = await build_package(package, mode, build)
    if not built.ok:
        log = built.log.strip()[-2000:]
        return None, _conformance_item(
            rubric, False, built.reason + (f"\nthe build's last output:\n{log}" if log else "")
        )
    logs = out / "logs"
    logs.mkdir(exist_ok=True)
    try:
        report = await check_bot(
            package.command,
            name=STUDENT,
            allowance_ms=round(rubric.move_timeout_s * 1000),
            cwd=package.root,
            log_path=logs / "check.log",
            sandbox=mode,
            env=package.env,
        )
    except (BotCheckError, ConfigError) as error:
        return None, _conformance_item(rubric, False, f"the bot did not start: {error}")
    if not report.passed:
        return None, _conformance_item(rubric, False, _check_failure(report))
    notice(f"conformance: {len(report.results)} checks passed")
    return package, None


def _check_failure(report: CheckReport) -> str:
    failed = [r for r in report.results if r.status is CheckStatus.FAIL]
    first = failed[0] if failed else report.results[-1]
    text = f"check {first.name!r} failed: expected {first.expected}; got {first.got}"
    if report.log_tail:
        text += "\nthe bot's last output:\n" + report.log_tail.strip()[-2000:]
    return text


def _conformance_item(rubric: Rubric, passed: bool, output: str) -> ItemResult:
    points = rubric.conformance_points
    return ItemResult(
        "conformance", "conformance", points if passed else 0.0, points, passed, output
    )


def not_graded(rubric: Rubric, why: str) -> list[ItemResult]:
    items = [ItemResult(tier.name, "tier", 0.0, tier.points, False, why) for tier in rubric.tiers]
    if rubric.decision_time is not None:
        items.append(
            ItemResult("decision time", "decision_time", 0.0, rubric.decision_time[0], False, why)
        )
    if rubric.no_forfeits_points is not None:
        items.append(
            ItemResult("no forfeits", "no_forfeits", 0.0, rubric.no_forfeits_points, False, why)
        )
    return items


async def _tier(
    package: BotPackage,
    tier: Tier,
    rubric: Rubric,
    out: Path,
    secret: str,
    mode: SandboxMode,
    notice: Notice,
) -> tuple[ItemResult, list[GameResult]]:
    """Play one tier's match and judge it."""
    folder = out / TIERS_DIR / tier.slug
    if folder.exists():
        shutil.rmtree(folder)  # a re-grade replays the tier from its first deal
    config = TournamentConfig(
        bots=(
            BotSpec(STUDENT, package.command, dir=package.root, env=package.env),
            BotSpec(tier.slug, tier.opponent),
        ),
        games_per_pairing=tier.games,
        seed=rubric.seed,
        concurrency=rubric.concurrency,
        move_timeout_s=rubric.move_timeout_s,
        out=folder,
        name=f"{tier.name}",
        base_dir=package.root,
        sandbox=mode,
        max_restarts=1,
    )
    relative = f"{TIERS_DIR}/{tier.slug}"
    store = TournamentStore(folder)
    try:
        store.claim(config.fingerprint(), resume=False)
        store.adopt_secret(tier_secret(secret, tier.slug))
        plan = plan_for(config, secret=store.deal_secret())
        publish_commitment(folder, config, store.deal_secret())
        monitor = MatchMonitor(
            plan, STUDENT, tier.slug, tier.sprt if tier.method is Method.SPRT else None
        )
        try:
            await run_tournament(
                config,
                store,
                on_game=lambda result, done, total: monitor.add(result),
                should_stop=lambda: monitor.is_decided,
                plan=plan,
                pairs_per_phase=SPRT_PAIRS_PER_PHASE if tier.method is Method.SPRT else None,
            )
        except (BotStartError, ListenError, SandboxError) as error:
            return ItemResult(tier.name, "tier", 0.0, tier.points, False, str(error)), []
        write_outputs(config, store, complete=True, planned=len(plan), sprt=monitor.sprt)
        results = store.results()
    except (StorageError, OSError) as error:
        raise GradeError(f"tier {tier.name!r}: {error}") from None
    finally:
        store.close()
    return _judge(tier, monitor, results, relative), results


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
    return ItemResult(
        tier.name,
        "tier",
        tier.points if passed else 0.0,
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
    items = []
    seats = [(r, r.seats.index(STUDENT)) for r in results]
    if rubric.decision_time is not None:
        points, limit = rubric.decision_time
        decisions = sum(r.decisions[seat] for r, seat in seats)
        total_ms = sum(r.decision_ms[seat] for r, seat in seats)
        if decisions == 0:
            items.append(
                ItemResult("decision time", "decision_time", 0.0, points, False, "no decision made")
            )
        else:
            mean = total_ms / decisions
            passed = mean <= limit
            items.append(
                ItemResult(
                    "decision time",
                    "decision_time",
                    points if passed else 0.0,
                    points,
                    passed,
                    f"mean {mean:.1f} ms per decision over {decisions} decisions "
                    f"({'within' if passed else 'over'} the limit of {limit:g} ms)",
                    games=len(results),
                )
            )
    if rubric.no_forfeits_points is not None:
        points = rubric.no_forfeits_points
        lost = [r for r, seat in seats if r.forfeit_by == seat]
        errors = sum(r.fallbacks[seat] for r, seat in seats)
        if not results:
            passed, output = False, "no game played"
        elif lost:
            kinds = sorted({r.reason.value for r in lost})
            passed = False
            output = (
                f"{len(lost)} of {len(results)} games lost by a forfeit ({', '.join(kinds)}); "
                f"first: {lost[0].game_id}"
            )
        else:
            passed, output = True, f"no forfeit in {len(results)} games"
        if errors:
            output += f"; {errors} moves played by default after the bot's code failed"
        items.append(
            ItemResult(
                "no forfeits",
                "no_forfeits",
                points if passed else 0.0,
                points,
                passed,
                output,
                games=len(results),
            )
        )
    return items
