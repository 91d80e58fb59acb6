"""The hosted wing's rules, in process and in milliseconds: the real ``Hosting``, ``Arena`` and
store, with a scripted ``BatchRunner`` whose batches end at once as each test tells them to
(no worker, no bot process, no transport).

What is held here: a version's health (its own faults in a row suspend it, a clean game
resets the count); blame by name (a bot that could not start strikes the version its
``BotStartError`` names, whatever its message says); an error of the arena's own strikes no
version; a batch committed twice records each game once; batches never take more than the
runner's slots, and every reservation is released.  The same rules end to end, with real
processes: test_hosted.py.
"""

from __future__ import annotations

import asyncio
import logging
import pickle
from collections.abc import Callable
from pathlib import Path

import pytest
from test_arena_governance import ScriptedRunner, _hosting, _passed, _play_until  # tests/
from test_hosted_instances import _connect

from tacocat_arena.arena.deals import ladder_game_id, parse_ladder_game_id
from tacocat_arena.arena.hosted import HostedSettings, Hosting, hosted_of
from tacocat_arena.arena.ladder import Arena, LadderSettings
from tacocat_arena.arena.store import ArenaStore
from tacocat_arena.arena.submissions import Status, Version
from tacocat_arena.engine import Termination
from tacocat_arena.launch.bots import BotProcess, BotStartError
from tacocat_arena.launch.sandbox import SandboxMode
from tacocat_arena.launch.spec import BotSpec, ConfigError
from tacocat_arena.referee.settings import ClockSettings, RefereeSettings
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.config import TournamentConfig
from tacocat_arena.tournament.executors import Batch, FinishedGame


class FailingRunner(ScriptedRunner):
    """A scripted runner whose every batch fails with ``failure(batch)`` instead."""

    def __init__(self, failure: Callable[[Batch], Exception], slots: int = 1) -> None:
        super().__init__(slots)
        self.failure = failure

    async def play(self, config: TournamentConfig, batch: Batch) -> list[FinishedGame]:
        self.batches.append(batch.bots)
        await asyncio.sleep(0)
        raise self.failure(batch)


def _run(scenario: Callable[[], object]) -> object:
    return asyncio.run(scenario())  # type: ignore[arg-type]


async def _two_versions(hosting: Hosting) -> tuple[Version, Version]:
    return await _passed(hosting, "alice"), await _passed(hosting, "bob")


def _status(hosting: Hosting, player: str) -> Status:
    version = hosting.version(player, 1)
    assert version is not None
    return version.status


def test_a_bot_that_cannot_start_strikes_the_version_it_names_not_the_one_its_message_does(
    tmp_path: Path,
) -> None:
    """The message names both versions (as a real one may: paths, the opponent); only the
    name the error carries is struck, until it is suspended; the other plays on."""

    def failure(batch: Batch) -> Exception:
        return BotStartError("bot 'bob@v1' exited before connecting (vs 'alice@v1')", "bob@v1")

    async def scenario() -> tuple[Status, Status, int, str]:
        runner = FailingRunner(failure)
        store, arena, hosting = _hosting(tmp_path / "arena", runner, health_streak=3)
        try:
            await _two_versions(hosting)
            await _play_until(hosting, lambda: _status(hosting, "bob") is Status.SUSPENDED)
            bob = hosting.version("bob", 1)
            assert bob is not None
            return _status(hosting, "alice"), bob.status, hosting.streaks["alice@v1"], bob.reason
        finally:
            store.close()

    alice, bob, alice_streak, reason = _run(scenario)  # type: ignore[misc]
    assert bob is Status.SUSPENDED and "3 games in a row" in reason and "bob@v1" in reason
    assert alice is Status.ACTIVE and alice_streak == 0


def test_a_start_error_naming_neither_version_strikes_both(tmp_path: Path) -> None:
    async def scenario() -> tuple[int, int]:
        runner = FailingRunner(lambda batch: BotStartError("no bot of this batch", "zed"))
        store, arena, hosting = _hosting(tmp_path / "arena", runner, health_streak=50)
        try:
            await _two_versions(hosting)
            await _play_until(hosting, lambda: len(runner.batches) >= 2)
            return hosting.streaks["alice@v1"], hosting.streaks["bob@v1"]
        finally:
            store.close()

    alice, bob = _run(scenario)  # type: ignore[misc]
    assert alice >= 2 and bob >= 2


def test_an_error_of_the_arenas_own_strikes_no_version_and_is_logged_as_ours(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Before: ``except Exception`` counted any error as the bots' fault, and five of them
    suspended two innocent versions.  Now ten batches fail by a bug of ours: no strike."""

    async def scenario() -> tuple[Status, Status, int, int, int]:
        runner = FailingRunner(lambda batch: ZeroDivisionError("a bug of the arena's"))
        store, arena, hosting = _hosting(tmp_path / "arena", runner, health_streak=2)
        try:
            await _two_versions(hosting)
            await _play_until(hosting, lambda: len(runner.batches) >= 10)
            streaks = hosting.streaks["alice@v1"] + hosting.streaks["bob@v1"]
            return (_status(hosting, "alice"), _status(hosting, "bob"), streaks,
                    sum(arena.in_flight.values()), arena.tally.games)  # fmt: skip
        finally:
            store.close()

    with caplog.at_level(logging.ERROR, logger="tacocat_arena.arena.hosted"):
        alice, bob, streaks, in_flight, games = _run(scenario)  # type: ignore[misc]
    assert alice is Status.ACTIVE and bob is Status.ACTIVE and streaks == 0
    assert in_flight == 0 and games == 0
    ours = [r for r in caplog.records if "arena's fault" in r.getMessage()]
    assert ours and ours[0].exc_info is not None  # with its traceback, to be fixed


def test_an_arena_bug_against_a_connected_bot_strikes_no_version(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The same on the arena's own referee: starting a version's process fails by a bug of
    ours (not a ``BotStartError``): the pairing ends, logged as ours, no strike, released."""

    class Buggy(Hosting):
        async def _start_process(self, instance: str, version: Version) -> BotProcess:
            raise KeyError("a bug of the arena's")

    async def scenario() -> tuple[int, int, set[str]]:
        store = ArenaStore(tmp_path / "arena")
        arena = Arena(store, LadderSettings())
        settings = HostedSettings(sandbox=SandboxMode.NONE)
        hosting = Buggy(arena, settings, ScriptedRunner(slots=0))
        try:
            await _passed(hosting, "alice")
            _connect(hosting, "zed")
            for _round in range(3):
                hosting.start_games()
                for _step in range(10):
                    await asyncio.sleep(0)
            return hosting.streaks["alice@v1"], sum(arena.in_flight.values()), hosting._mixed
        finally:
            store.close()

    with caplog.at_level(logging.ERROR, logger="tacocat_arena.arena.hosted"):
        streak, in_flight, mixed = _run(scenario)  # type: ignore[misc]
    assert streak == 0 and in_flight == 0 and mixed == set()
    assert any("arena's fault" in r.getMessage() for r in caplog.records)


def test_health_counts_own_faults_in_a_row_and_a_clean_game_resets_it(tmp_path: Path) -> None:
    def game(n: int, crash: bool) -> GameResult:
        seats = ("alice@v1", "bob@v1")
        if crash:  # alice (seat 0) crashed: her fault, not bob's
            return GameResult(ladder_game_id(n, False), seats, n, 1, Termination.FORFEIT_CRASH,
                              1, (1, 1), (1.0, 1.0), forfeit_by=0)  # fmt: skip
        return GameResult(ladder_game_id(n, False), seats, n, 0, Termination.GOAL, 3, (5, 5),
                          (1.0, 1.0))  # fmt: skip

    async def scenario() -> list[tuple[int, int, Status]]:
        store, arena, hosting = _hosting(tmp_path / "arena", ScriptedRunner(), health_streak=3)
        seen = []
        try:
            await _two_versions(hosting)
            for n, crash in enumerate([True, True, False, True, True, True]):
                hosting._health(game(n, crash))
                seen.append((hosting.streaks["alice@v1"], hosting.streaks["bob@v1"],
                             _status(hosting, "alice")))  # fmt: skip
            return seen
        finally:
            store.close()

    seen = _run(scenario)
    assert seen == [
        (1, 0, Status.ACTIVE),
        (2, 0, Status.ACTIVE),
        (0, 0, Status.ACTIVE),  # a clean game: the count starts again
        (1, 0, Status.ACTIVE),
        (2, 0, Status.ACTIVE),
        (0, 0, Status.SUSPENDED),  # the third in a row: suspended (and its count dropped)
    ]


def test_a_batch_committed_twice_records_each_game_once(tmp_path: Path) -> None:
    """A batch sent again after its worker died may come back twice: the second commit
    stores nothing and counts nothing (not a meeting, not a game, not a health point)."""

    async def scenario() -> tuple[int, int, int, list[int], int]:
        runner = ScriptedRunner(slots=0)
        store, arena, hosting = _hosting(tmp_path / "arena", runner)
        committed: list[int] = []
        hosting.on_batch.append(lambda games: committed.append(len(games)))
        try:
            await _two_versions(hosting)
            pairing = arena.reserve("alice@v1", "bob@v1", deals=3, games=6, local=False)
            batch = hosting._batch("alice@v1", "bob@v1", pairing.pairs)
            games = await runner.play(hosting.config(batch), batch)
            await hosting._commit(games, pairing)
            await hosting._commit(games, pairing)
            arena.release(pairing)
            return (store.count(), arena.games_played["alice@v1"], sum(arena.meetings.values()),
                    committed, sum(arena.in_flight.values()))  # fmt: skip
        finally:
            store.close()

    stored, alice_games, met, committed, in_flight = _run(scenario)  # type: ignore[misc]
    assert stored == 6 and alice_games == 6 and met == 6
    assert committed == [6, 0]
    assert in_flight == 0


def test_batches_take_the_runners_slots_and_no_more_and_release_everything(
    tmp_path: Path,
) -> None:
    """Four versions, two slots: two batches at a time at most, each on its own pair
    numbers; once the ladder stops, nothing is left in flight, booked or on a slot."""

    async def scenario() -> tuple[int, int, int, int, dict[str, int], int, int]:
        runner = ScriptedRunner(slots=2)
        store, arena, hosting = _hosting(tmp_path / "arena", runner)
        try:
            for player in ("alice", "bob", "cat", "dan"):
                await _passed(hosting, player)
            hosting.start_games()
            started = len(hosting._tasks)
            first_in_flight = sum(arena.in_flight.values())
            await _play_until(hosting, lambda: arena.tally.games >= 16)
            pairs = [r.game_id for r in store.results()]
            return (started, first_in_flight, runner.most_at_once, len(pairs) - len(set(pairs)),
                    dict(+arena.in_flight), len(arena.reserved), hosting._batches)  # fmt: skip
        finally:
            store.close()

    started, in_flight, most, repeated, left, reserved, batches = _run(scenario)  # type: ignore[misc]
    assert started == 2 and in_flight == 4  # two batches, each version in flight once
    assert most <= 2
    assert repeated == 0  # no game id (pair number) played twice
    assert left == {} and reserved == 0 and batches == 0


def test_an_arena_without_a_hosted_wing_has_a_null_one(tmp_path: Path) -> None:
    """``NoHosting``: no versions, no processes, no pairs of its own; ``hosted_of`` None."""
    store = ArenaStore(tmp_path / "arena")
    try:
        arena = Arena(store, LadderSettings())
        wing = arena.hosting
        assert not wing.enabled and hosted_of(arena) is None
        assert wing.process_hash("alice@v1") is None and not wing.is_hosted("alice@v1")
        assert wing.versions() == [] and wing.version("alice", 1) is None
        assert wing.start_games() is False  # the arena pairs its connected bots itself
    finally:
        store.close()


def test_a_ladder_game_id_reads_back_and_anything_else_is_refused() -> None:
    assert ladder_game_id(123, False) == "L000123a"
    assert ladder_game_id(1234567, True) == "L1234567b"
    for pair in (0, 1, 999_999, 12_345_678):
        for second in (False, True):
            assert parse_ladder_game_id(ladder_game_id(pair, second)) == (pair, second)
    for wrong in ("L123a", "L000123c", "E000123a", "L000123", "ladder:L000123a", "L-00123a"):
        with pytest.raises(ValueError, match="no ladder game id"):
            parse_ladder_game_id(wrong)


def test_a_start_error_keeps_its_bot_across_a_pickle() -> None:
    """Raised in a worker process, it reaches the arena pickled: the name must survive."""
    error = pickle.loads(pickle.dumps(BotStartError("bot 'bob@v1' did not connect", "bob@v1")))
    assert isinstance(error, BotStartError)
    assert error.bot == "bob@v1" and str(error) == "bot 'bob@v1' did not connect"


def test_a_batch_plays_the_versions_under_their_ladder_names_on_the_arenas_clock_as_it_is(
    tmp_path: Path,
) -> None:
    """A batch's config starts each version from its package (``BotPackage.spec``) under its
    ladder name, and hands the referee the arena's ``ClockSettings`` themselves (milliseconds
    end to end); the records read the same clock in seconds, as before."""
    clock = ClockSettings(decision_ms=1234, bank_ms=567, grace_ms=89)

    async def scenario() -> tuple[TournamentConfig, Path]:
        store = ArenaStore(tmp_path / "arena")
        arena = Arena(store, LadderSettings(referee=RefereeSettings(clock=clock)))
        hosted = HostedSettings(sandbox=SandboxMode.NONE, pairs_per_batch=1)
        hosting = Hosting(arena, hosted, ScriptedRunner(slots=0))
        try:
            alice, _ = await _two_versions(hosting)
            pairing = arena.reserve("alice@v1", "bob@v1", deals=1, games=2, local=False)
            config = hosting.config(hosting._batch("alice@v1", "bob@v1", pairing.pairs))
            arena.release(pairing)
            return config, hosting.submissions.package(alice).root
        finally:
            store.close()

    config, alice_root = _run(scenario)  # type: ignore[misc]
    assert [bot.name for bot in config.bots] == ["alice@v1", "bob@v1"]
    assert config.bots[0].dir == alice_root
    assert config.referee_settings.clock is clock
    described = config.describe()
    assert (described["move_timeout_s"], described["time_bank_s"]) == (1.234, 0.567)
    assert described["grace_ms"] == 89


def test_only_a_hosted_spec_may_carry_the_version_mark_and_then_exactly_once() -> None:
    """``alice@v2`` is a ladder name: a config's bot can never take it (so none passes for a
    hosted version), and a hosted spec's name is one player's name and one mark."""
    assert BotSpec.checked("alice@v2", "python bot.py", hosted=True).name == "alice@v2"
    with pytest.raises(ConfigError, match="bot name 'alice@v2'"):
        BotSpec.checked("alice@v2", "python bot.py")
    for name in ("alice", "a@b@v2", "alice@v2 x", "@v2", "alice@v0", "alice@2"):
        with pytest.raises(ConfigError, match="PLAYER@vN"):
            BotSpec.checked(name, "python bot.py", hosted=True)
