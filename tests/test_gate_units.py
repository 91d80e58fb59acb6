"""The gate's, the life cycle's and the grader's small values, in process (no bot starts):
the clock's "no limit" in the check, one derivation of secrets by scheme, one student name,
one bot-to-start value, an event's opening and ending."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tacocat_arena.check.gate import GateResult, GateStep
from tacocat_arena.check.scenarios import Context, decision_times
from tacocat_arena.check.script import NO_LIMIT_WAIT_S, CheckFailed, answer_wait_s, within
from tacocat_arena.grade.batch import student_name
from tacocat_arena.grade.grader import secret_id, tier_secret
from tacocat_arena.launch.package import BotPackage
from tacocat_arena.launch.spec import ConfigError
from tacocat_arena.stats.sprt import Sprt
from tacocat_arena.tournament.config import BotSpec, TournamentConfig, TournamentFormat
from tacocat_arena.tournament.derive import Scheme, derive_secret
from tacocat_arena.tournament.lifecycle import open_event
from tacocat_arena.tournament.runner import TournamentRun


def _context(allowance_ms: int, times: list[float]) -> Context:
    link: Any = SimpleNamespace(decision_ms=times)
    return Context(link, allowance_ms)


def test_an_allowance_of_0_is_no_limit_for_the_check() -> None:
    assert decision_times(_context(0, [5.0, 4000.0])).endswith("(no limit)")
    assert answer_wait_s(0) == NO_LIMIT_WAIT_S and "no limit" in within(0)
    assert answer_wait_s(1000) == 1.5 and within(1000) == "within 1000 ms"
    with pytest.raises(CheckFailed, match="every decision within 1000 ms"):
        decision_times(_context(1000, [5.0, 4000.0]))


def test_each_scheme_derives_what_existing_stores_were_dealt_with() -> None:
    """The formulas every arena and grading root so far was written with, pinned: a store
    dealt before the derivations met in one function still re-derives its seeds."""
    secret = "0123456789abcdef0123456789abcdef"
    arena = hashlib.sha256(f"tacocat-arena-deal:{secret}:ladder:42".encode()).hexdigest()[:32]
    assert derive_secret(Scheme.JOIN, secret, "tacocat-arena-deal", "ladder", 42) == arena
    tier = hmac.new(secret.encode(), b"tier:beats-random", hashlib.sha256).hexdigest()[:32]
    assert tier_secret(secret, "beats-random") == tier
    assert (
        secret_id(secret) == hashlib.sha256(f"tacocat-grade-id:{secret}".encode()).hexdigest()[:12]
    )
    assert tier_secret(secret, "a") != tier_secret(secret, "b")


@pytest.mark.parametrize(
    ("name", "student"),
    [
        ("alice.zip", "alice"),
        ("Bob Smith.TAR.GZ", "Bob_Smith"),
        ("carol", "carol"),
        (".zip", "student"),
    ],
)
def test_one_rule_names_a_student_from_a_package(tmp_path: Path, name: str, student: str) -> None:
    entry = tmp_path / name
    if "." in name:
        entry.write_bytes(b"")
    else:
        entry.mkdir()
    assert student_name(entry) == student


def test_a_package_becomes_a_bot_to_start_through_the_checked_spec(tmp_path: Path) -> None:
    package = BotPackage(tmp_path, "python bot.py", env=(("LEVEL", "3"),))
    spec = package.spec("alice")
    assert (spec.name, spec.command, spec.dir, spec.env) == (
        "alice",
        "python bot.py",
        tmp_path,
        (("LEVEL", "3"),),
    )
    with pytest.raises(ConfigError, match="cannot parse command"):
        BotPackage(tmp_path, "python 'bot.py").spec("alice")
    with pytest.raises(ConfigError, match="bot name"):
        package.spec("no spaces")


def test_a_failed_gate_explains_itself_with_the_output_that_shows_it() -> None:
    built = GateResult(
        GateStep.BUILD, "build: 'make' exited with code 2", "build failed", "", "oops"
    )
    assert built.explained() == "build: 'make' exited with code 2\nthe build's last output:\noops"
    assert not built.passed and GateResult(None, "", "", "log").passed
    checked = GateResult(GateStep.CHECK, "check 'duel' failed: expected x; got y", "", "")
    assert checked.explained() == "check 'duel' failed: expected x; got y"


def _config(tmp_path: Path, *names: str) -> TournamentConfig:
    return TournamentConfig(
        bots=tuple(BotSpec.checked(name, "builtin:random") for name in names),
        games_per_pairing=4,
        out=tmp_path / "event",
    )


def test_an_event_opens_with_its_commitment_and_a_match_monitor(tmp_path: Path) -> None:
    event = open_event(_config(tmp_path, "a", "b"), secret="s" * 32, sprt=Sprt(0, 50, 0.05, 0.05))
    try:
        assert event.store.deal_secret() == "s" * 32
        assert (tmp_path / "event" / "commitment.json").exists() and event.commitment
        assert event.monitor is not None and event.sprt is not None and len(event.plan) == 4
        seen: list[str] = []
        counted = event.watch(lambda result, done, total: seen.append(result.game_id))
        assert callable(counted) and not event.is_decided
        ending = event.ending(TournamentRun(planned=len(event.plan), resumed_from=0, played=0))
        assert not ending.complete and ending.planned == 4
    finally:
        event.close()


def test_an_sprt_of_more_than_two_bots_is_refused_before_the_folder_is_claimed(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError, match="compares two bots"):
        open_event(_config(tmp_path, "a", "b", "c"), sprt=Sprt(0, 50, 0.05, 0.05))
    assert not (tmp_path / "event").exists()


def test_a_staged_event_has_no_match_monitor_and_no_sprt(tmp_path: Path) -> None:
    """A knockout's plan grows stage by stage: a monitor of its first stage's plan refused
    stage 2's first game, so two bots in a staged event get none, and --sprt is refused."""
    config = dataclasses.replace(_config(tmp_path, "a", "b"), format=TournamentFormat.KNOCKOUT)
    with pytest.raises(ConfigError, match="fixed plan"):
        open_event(config, sprt=Sprt(0, 50, 0.05, 0.05))
    event = open_event(config)
    try:
        assert event.monitor is None and event.sprt is None
    finally:
        event.close()
