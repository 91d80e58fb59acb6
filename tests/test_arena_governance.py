"""Governing the arena, in process (no transport, no bot process): fair matchmaking with hosted
capacity, no self-play, each bot's own limit, probation, the organizer's suspensions, a
player's roll-back, a revoked player's versions; the web actions and the CLI over them.

Hosted batches are played by a scripted runner (``ScriptedRunner``): the real ``Hosting``,
``Arena`` and store decide and record everything, only the games' outcomes are made up, so
300 games take a moment, not minutes.  The same rules as real processes: test_hosted.py and
``bench arena --spread``.
"""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import example_bots
import pytest
from click.testing import CliRunner

from tacocat_arena.arena import moderation
from tacocat_arena.arena.hosted import HostedSettings, Hosting
from tacocat_arena.arena.ladder import Arena, LadderSettings
from tacocat_arena.arena.matchmaking import choose_pairs, hosted_pairs, pair_key, same_player
from tacocat_arena.arena.players import add_player
from tacocat_arena.arena.store import ArenaStore
from tacocat_arena.arena.submissions import Status, Version
from tacocat_arena.cli import main
from tacocat_arena.engine import Termination
from tacocat_arena.launch.package import pack
from tacocat_arena.launch.sandbox import SandboxMode
from tacocat_arena.referee.session import BotSession
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.config import TournamentConfig
from tacocat_arena.tournament.executors import Batch, FinishedGame

PACKAGE = Path(example_bots.__file__).resolve().parent / "packages" / "python-random"


class ScriptedRunner:
    """A ``BatchRunner`` whose games end at once: seat 0 wins, unless ``crashes`` names a
    seat's bot (then that seat forfeits by a crash, as a bot dying in real games would)."""

    description = "a scripted runner"

    def __init__(self, slots: int = 1, crashes: frozenset[str] = frozenset()) -> None:
        self.slots = slots
        self.crashes = crashes
        self.batches: list[tuple[str, str]] = []
        self.at_once = 0
        self.most_at_once = 0

    async def play(self, config: TournamentConfig, batch: Batch) -> list[FinishedGame]:
        self.batches.append(batch.bots)
        self.at_once += 1
        self.most_at_once = max(self.most_at_once, self.at_once)
        try:
            await asyncio.sleep(0)  # the arena's loop runs between batches, as with workers
            return [self._game(planned.game_id, planned.seats, planned.seed)
                    for planned in batch.games]  # fmt: skip
        finally:
            self.at_once -= 1

    def _game(self, game_id: str, seats: tuple[str, str], seed: int) -> FinishedGame:
        crashed = [seat for seat, name in enumerate(seats) if name in self.crashes]
        if crashed:
            loser = crashed[0]
            result = GameResult(game_id, seats, seed, 1 - loser, Termination.FORFEIT_CRASH, 1,
                                (1, 1), (1.0, 1.0), forfeit_by=loser)  # fmt: skip
        else:
            result = GameResult(game_id, seats, seed, 0, Termination.GOAL, 3, (5, 5), (1.0, 1.0))
        return result, "", {"seed": seed}

    def close(self) -> None:
        pass


def _hosting(
    folder: Path, runner: ScriptedRunner, **settings: Any
) -> tuple[ArenaStore, Arena, Hosting]:
    store = ArenaStore(folder)
    arena = Arena(store, LadderSettings())
    hosted = HostedSettings(sandbox=SandboxMode.NONE, pairs_per_batch=2, **settings)
    return store, arena, Hosting(arena, hosted, runner)


async def _passed(hosting: Hosting, player: str) -> Version:
    """A new version of ``player`` that passed its gate (the gate itself: test_hosted.py)."""
    if player not in {p.name for p in hosting.arena.store.players()}:
        add_player(hosting.arena.store, player)
    body = hosting.submissions.receiving()
    body.write_bytes(pack(PACKAGE))
    version = await hosting.submissions.add(player, body)
    return hosting._settled(hosting._passed(version, "gate skipped by the test"))


async def _play_until(hosting: Hosting, done: Callable[[], bool], limit_s: float = 60) -> None:
    """Run the hosted ladder until ``done()``; AssertionError if it is not after ``limit_s``
    (a bound for a stuck ladder, not a time the test measures)."""
    stop = asyncio.Event()
    task = asyncio.ensure_future(hosting.run(stop))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_s
    try:
        while not done():
            assert loop.time() < deadline, "the hosted ladder stopped making progress"
            await asyncio.sleep(0.001)
    finally:
        stop.set()
        await task


# -- matchmaking ----------------------------------------------------------------------------
def test_two_identities_of_one_player_never_meet() -> None:
    """No self-play (issue 34): a connected bot and its own versions, or two versions."""
    assert same_player("alice", "alice@v2") and same_player("alice@v1", "alice@v3")
    assert not same_player("alice", "alicia@v1")
    capacity = {"alice": 4, "alice@v1": 4, "alice@v2": 4, "bob": 4}
    for seed in range(20):
        pairs = choose_pairs(capacity, {}, {}, slots=10, rng=random.Random(seed))
        assert pairs and not [p for p in pairs if same_player(*p)], pairs
    batches, mixed = hosted_pairs(["alice@v1", "alice@v2"], {"alice": 2}, {}, {}, 2, 2,
                                  random.Random(0))  # fmt: skip
    assert batches == [] and mixed == []


def test_a_version_busy_elsewhere_still_takes_a_free_slot_if_it_met_least() -> None:
    """Capacity is per slot, not per version: the least-met pair is chosen whatever it
    plays now (issue 35: two free versions were paired 252 times while the others played a
    slow connected bot)."""
    meetings = {pair_key("v@v1", "w@v1"): 40}  # the two free ones have met often
    for a, b in itertools.combinations(["v@v1", "w@v1", "x@v1", "y@v1"], 2):
        meetings.setdefault(pair_key(a, b), 0)
    batches, _ = hosted_pairs(["v@v1", "w@v1", "x@v1", "y@v1"], {}, meetings, {}, 1, 0,
                              random.Random(0))  # fmt: skip
    assert len(batches) == 1 and set(batches[0]) != {"v@v1", "w@v1"}


def test_six_versions_one_worker_300_games_every_pair_meets_evenly(ram_path: Path) -> None:
    """Issue 35's soak, in process: 6 versions, 1 worker, 300 games: every pair met, and
    max/min meetings <= 2 (the real processes: ``bench arena --spread``)."""
    runner = ScriptedRunner(slots=1)

    async def scenario() -> dict[tuple[str, str], int]:
        store, arena, hosting = _hosting(ram_path / "arena", runner)
        try:
            for player in "abcdef":
                await _passed(hosting, player)
            await _play_until(hosting, lambda: arena.tally.games >= 300)
            return dict(arena.meetings)
        finally:
            store.close()

    meetings = asyncio.run(scenario())
    names = [f"{p}@v1" for p in "abcdef"]
    met = [meetings.get(pair_key(a, b), 0) for a, b in itertools.combinations(names, 2)]
    assert sum(met) >= 300 and min(met) > 0, met
    assert max(met) / min(met) <= 2, met
    assert runner.most_at_once == 1  # one worker: one batch at a time


def test_a_slow_connected_bot_does_not_starve_the_pairs_it_is_not_in() -> None:
    """The matchmaker as the arena runs it, on a simulated clock: 5 versions, 1 worker
    (batches take 1 tick), a connected bot whose games take 10 ticks, 2 of them at once.
    Every pair of versions meets, and evenly."""
    versions = [f"{p}@v1" for p in "abcde"]
    meetings: dict[tuple[str, str], int] = {}
    reserved: dict[tuple[str, str], int] = {}
    running: list[tuple[int, str, str, int]] = []  # (ends at, a, b, games)
    rng = random.Random(5)
    slow_in_flight = 0
    for tick in range(400):
        for ends, a, b, games in [r for r in running if r[0] == tick]:
            running.remove((ends, a, b, games))
            key = pair_key(a, b)
            meetings[key] = meetings.get(key, 0) + games
            reserved[key] -= games
            slow_in_flight -= "slow" in (a, b)
        expected = {k: meetings.get(k, 0) + reserved.get(k, 0) for k in {*meetings, *reserved}}
        batch_slots = 1 - sum(1 for r in running if "slow" not in r[1:3])
        connected = {"slow": 2 - slow_in_flight} if slow_in_flight < 2 else {}
        busy = {name for r in running if "slow" in r[1:3] for name in r[1:3]}  # one at a time
        batches, mixed = hosted_pairs(versions, connected, expected, {}, batch_slots, 8, rng, busy)
        for a, b in batches:
            running.append((tick + 1, a, b, 4))
            reserved[pair_key(a, b)] = reserved.get(pair_key(a, b), 0) + 4
        for a, b in mixed:
            running.append((tick + 10, a, b, 2))
            reserved[pair_key(a, b)] = reserved.get(pair_key(a, b), 0) + 2
            slow_in_flight += 1
    among = [meetings.get(pair_key(a, b), 0) for a, b in itertools.combinations(versions, 2)]
    against_slow = [meetings.get(pair_key(v, "slow"), 0) for v in versions]
    assert min(among) > 0 and max(among) / min(among) <= 2, among
    assert min(against_slow) > 0 and max(against_slow) / min(against_slow) <= 2, against_slow


def test_a_connected_bot_gets_no_more_pairs_than_its_hello_asked_for(tmp_path: Path) -> None:
    """``max_concurrent_games`` honoured exactly: a bot that asked for 1 is given 1 pair
    (a pair plays its games in turn) even with ``per_bot`` 2; one that asked for nothing
    gets ``per_bot``."""
    store = ArenaStore(tmp_path / "arena")
    try:
        arena = Arena(store, LadderSettings(per_bot=2))
        for name, asked in (("one", 1), ("any", 0), ("many", 9)):
            add_player(store, name)
            session = BotSession(name=name, max_concurrent_games=asked or 64)
            arena.referee.sessions[name] = session
            arena.token_of[session] = store.token_hash(name) or ""
        arena.check_players(reread=True)
        assert arena.capacity().connected == {"one": 1, "any": 2, "many": 2}
        arena.in_flight["one"] += 1
        assert "one" not in arena.capacity().connected
    finally:
        store.close()


# -- probation ------------------------------------------------------------------------------
def test_a_version_crashing_only_in_games_leaves_the_old_one_active(tmp_path: Path) -> None:
    """Probation: v2 passed the gate but crashes in every game: suspended after
    ``health_streak`` games, before its probation ends, so v1 was never retired; the two
    versions of alice never met.  A good v3 then replaces v1 after its probation."""
    runner = ScriptedRunner(slots=1, crashes=frozenset({"alice@v2"}))

    async def scenario() -> list[Any]:
        store, arena, hosting = _hosting(tmp_path / "arena", runner, probation_games=12,
                                         health_streak=3)  # fmt: skip
        subs = hosting.submissions
        try:
            for player in ("alice", "bob", "cat"):
                await _passed(hosting, player)
            v2 = await _passed(hosting, "alice")
            assert v2.status is Status.PROBATION and "v1 stays active" in v2.reason
            assert hosting.summary(v2)["probation_left"] == 12
            await _play_until(hosting, lambda: subs.get("alice", 2).status is Status.SUSPENDED)
            after_v2 = (subs.get("alice", 1).status, subs.get("alice", 2))
            v3 = await _passed(hosting, "alice")
            assert v3.status is Status.PROBATION
            await _play_until(hosting, lambda: subs.get("alice", 3).status is Status.ACTIVE)
            return [after_v2, subs.get("alice", 1), subs.get("alice", 3),
                    arena.games_played["alice@v3"], dict(arena.meetings)]  # fmt: skip
        finally:
            store.close()

    (v1_status, v2), v1, v3, v3_games, meetings = asyncio.run(scenario())
    assert v1_status is Status.ACTIVE
    assert v2.status is Status.SUSPENDED and "3 games in a row" in v2.reason
    assert v1.status is Status.RETIRED and "replaced by v3 after its probation" in v1.reason
    assert v3.status is Status.ACTIVE and v3_games >= 12
    assert not [k for k in meetings if same_player(*k)], meetings


def test_without_probation_a_passed_version_retires_the_old_one_at_once(tmp_path: Path) -> None:
    async def scenario() -> tuple[Version | None, Version]:
        store, _, hosting = _hosting(tmp_path / "arena", ScriptedRunner(), probation_games=0)
        try:
            await _passed(hosting, "alice")
            v2 = await _passed(hosting, "alice")
            return hosting.submissions.get("alice", 1), v2
        finally:
            store.close()

    v1, v2 = asyncio.run(scenario())
    assert v1 is not None and v1.status is Status.RETIRED and v2.status is Status.ACTIVE


# -- moderation -----------------------------------------------------------------------------
def test_suspend_reinstate_and_roll_back_follow_the_rules(tmp_path: Path) -> None:
    async def scenario() -> None:
        store, _, hosting = _hosting(tmp_path / "arena", ScriptedRunner(), probation_games=0)
        subs = hosting.submissions
        try:
            await _passed(hosting, "alice")
            await _passed(hosting, "alice")  # v2 active, v1 retired
            assert "alice@v2" in hosting._active
            v2 = hosting.suspend("alice", 2, "  copies   bob's\nbot ")
            assert v2.status is Status.SUSPENDED
            assert v2.reason == "suspended by the organizer: copies bob's bot"
            assert "alice@v2" not in hosting._active  # no new game, at once
            with pytest.raises(moderation.NotAllowed, match="ask|reinstate"):
                hosting.choose("alice", 2)  # the player cannot undo a suspension
            assert hosting.choose("alice", 1).status is Status.ACTIVE  # roll back
            assert "alice@v1" in hosting._active
            back = hosting.reinstate("alice", 2)  # v1 is active: v2 comes back retired
            assert back.status is Status.RETIRED and "submit --activate 2" in back.reason
            assert hosting.choose("alice", 2).status is Status.ACTIVE
            assert subs.get("alice", 1).status is Status.RETIRED
            with pytest.raises(moderation.NoSuchVersion):
                hosting.suspend("alice", 9, "")
            with pytest.raises(moderation.NotAllowed, match="not suspended"):
                hosting.reinstate("alice", 2)
        finally:
            store.close()

    asyncio.run(scenario())


def test_a_revoked_players_versions_stop_at_once_and_are_listed_revoked(tmp_path: Path) -> None:
    async def scenario() -> None:
        store, arena, hosting = _hosting(tmp_path / "arena", ScriptedRunner(), probation_games=5)
        try:
            await _passed(hosting, "bob")
            await _passed(hosting, "bob")  # v2 in probation
            await _passed(hosting, "cat")
            store.revoke_player("bob")
            arena.check_players(reread=True)  # what the desk's revoke (and the poll) does
            assert sorted(hosting._active) == ["cat@v1"]
            statuses = {v["bot"]: v["status"] for v in hosting.summaries()}
            assert statuses == {"bob@v1": "revoked", "bob@v2": "revoked", "cat@v1": "active"}
            with pytest.raises(moderation.NotAllowed, match="revoked"):
                hosting.choose("bob", 1)
            # A version still in its gate when its player is revoked is revoked when it ends.
            body = hosting.submissions.receiving()
            body.write_bytes(pack(PACKAGE))
            late = await hosting.submissions.add("bob", body)
            assert hosting._passed(late, "").status is Status.REVOKED
        finally:
            store.close()

    asyncio.run(scenario())


def test_submissions_suspend_and_reinstate_on_the_command_line(tmp_path: Path) -> None:
    folder = tmp_path / "arena"

    async def setup() -> None:
        store, _, hosting = _hosting(folder, ScriptedRunner(), probation_games=0)
        try:
            await _passed(hosting, "alice")
        finally:
            store.close()

    asyncio.run(setup())
    runner = CliRunner()
    done = runner.invoke(main, ["submissions", "suspend", "alice@v1", "--dir", str(folder),
                                "--reason", "plays for bob"])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "alice@v1: suspended (suspended by the organizer: plays for bob)" in done.output
    again = runner.invoke(main, ["submissions", "suspend", "alice@v1", "--dir", str(folder)])
    assert again.exit_code == 1 and "is suspended: only an active" in again.output
    done = runner.invoke(main, ["submissions", "reinstate", "alice@v1", "--dir", str(folder)])
    assert done.exit_code == 0 and "alice@v1: active (reinstated" in done.output, done.output
    bad = runner.invoke(main, ["submissions", "reinstate", "alice", "--dir", str(folder)])
    assert bad.exit_code == 1 and "expected PLAYER@vN" in bad.output
    missing = runner.invoke(main, ["submissions", "reinstate", "zed@v3", "--dir", str(folder)])
    assert missing.exit_code == 1 and "no version 3 of player 'zed'" in missing.output
