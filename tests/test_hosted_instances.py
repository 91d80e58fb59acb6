"""One hosted process per instance name on the arena's referee, in process (no transport).

The arena's referee knows a hosted version's process by its instance name (``alice@v1``, its
twin ``alice@v1~B``).  When the matchmaker booked one version for two pairings against
connected bots at once, the second ``alice@v1`` process's connection replaced the first's
session mid-game: the game was lost by a disconnect the version did not cause, and five such
in a row suspended an innocent version.  The rules tested here: a version plays one pairing
against connected bots at a time (batches, on referees of their own, are not limited), and
the arena never starts a second live process under one name — a refusal that is its own
failure, never a strike against the version.  The same end to end: test_hosted.py's
``test_a_hosted_version_plays_connected_bots_too``.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest
from test_arena_governance import ScriptedRunner, _hosting, _passed  # tests/ (pythonpath)

from tacocat_arena.arena.hosted import HostedSettings, Hosting, InstanceInUse
from tacocat_arena.arena.ladder import Arena, LadderSettings
from tacocat_arena.arena.matchmaking import hosted_pairs
from tacocat_arena.arena.players import add_player
from tacocat_arena.arena.store import ArenaStore
from tacocat_arena.launch.bots import BotProcess
from tacocat_arena.launch.sandbox import SandboxMode
from tacocat_arena.referee.session import BotSession
from tacocat_arena.tournament.runner import TWIN_SUFFIX


def test_a_version_is_in_one_mixed_pairing_at_a_time_and_still_takes_batch_slots() -> None:
    versions = ["alice@v1", "bob@v1", "cat@v1"]
    connected = {"zed": 4, "yan": 4}
    for seed in range(30):
        _, mixed = hosted_pairs(versions, connected, {}, {}, 0, 8, random.Random(seed))
        hosted_in = [name for pair in mixed for name in pair if name in versions]
        assert len(hosted_in) == len(set(hosted_in)), mixed  # each version at most once
        assert len(mixed) == 3 + 1, mixed  # every version once, and zed-yan
        batches, mixed = hosted_pairs(
            versions, connected, {}, {}, 2, 8, random.Random(seed), playing_mixed={"alice@v1"}
        )
        assert not [pair for pair in mixed if "alice@v1" in pair], mixed
        assert "alice@v1" in {name for pair in batches for name in pair} or len(batches) < 2


class _SlowStart(Hosting):
    """The real ``Hosting`` whose process starts wait until the test lets them go (the
    arena's loop runs meanwhile, as it does while a sandboxed process starts)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.go = asyncio.Event()
        self.starting: list[str] = []

    async def _start_process(self, instance: str, version: object) -> BotProcess:
        self.starting.append(instance)
        await self.go.wait()
        raise InstanceInUse("the test ends the pairing here")


def _connect(hosting: Hosting, name: str) -> None:
    """A connected bot's session, as the arena's referee registers one (no transport)."""
    store = hosting.arena.store
    add_player(store, name)
    session = BotSession(name=name, max_concurrent_games=64)
    hosting.arena.referee.sessions[name] = session
    hosting.arena.token_of[session] = store.token_hash(name) or ""
    hosting.arena.check_players(reread=True)


def test_a_version_is_never_booked_for_two_games_against_connected_bots_at_once(
    tmp_path: Path,
) -> None:
    """One version, one connected bot with room for 2 pairs and free referee slots: the
    arena starts one pairing, and no second while it plays, however often it looks."""

    async def scenario() -> tuple[list[str], int, int, int]:
        store = ArenaStore(tmp_path / "arena")
        arena = Arena(store, LadderSettings(per_bot=2))
        settings = HostedSettings(sandbox=SandboxMode.NONE)
        hosting = _SlowStart(arena, settings, ScriptedRunner(slots=0))
        try:
            await _passed(hosting, "alice")
            _connect(hosting, "zed")
            assert arena.capacity_of("zed") == 2 and arena.concurrency_left() >= 2
            for _round in range(5):
                hosting.start_games()
                await asyncio.sleep(0)
            playing = arena.in_flight["alice@v1"]
            zed_left = arena.capacity_of("zed")
            hosting.go.set()
            for _round in range(20):
                await asyncio.sleep(0)
            return list(hosting.starting), playing, zed_left, arena.in_flight["alice@v1"]
        finally:
            store.close()

    starting, playing, zed_left, after = asyncio.run(scenario())
    assert starting == ["alice@v1"], starting  # one process started, not two of one name
    assert playing == 1 and zed_left == 1
    assert after == 0  # the pairing released its booking


def test_a_second_process_under_a_live_name_is_refused_and_no_strike(tmp_path: Path) -> None:
    """The guard behind the booking rule: ``_start_process`` refuses a name a live process
    of the arena holds, before starting anything, and the pairing ends without counting
    against the version's health."""

    async def scenario() -> tuple[int, int, dict[str, str]]:
        store, arena, hosting = _hosting(tmp_path / "arena", ScriptedRunner(slots=0))
        try:
            version = await _passed(hosting, "alice")
            _connect(hosting, "zed")
            hosting._process_hashes["alice@v1"] = "a live process's token hash"
            with pytest.raises(InstanceInUse, match="alice@v1"):
                await hosting._start_process("alice@v1", version)
            pairing = arena.reserve("alice@v1", "zed", deals=2, games=2, local=True)
            hosting._mixed.add("alice@v1")
            await hosting._play_mixed(pairing)
            return (
                hosting.streaks["alice@v1"],
                arena.in_flight["alice@v1"],
                dict(hosting._process_hashes),
            )
        finally:
            store.close()

    streak, in_flight, hashes = asyncio.run(scenario())
    assert streak == 0  # the arena's failure, not the version's
    assert in_flight == 0
    assert hashes == {"alice@v1": "a live process's token hash"}  # the live one's kept
    assert "alice@v1" + TWIN_SUFFIX not in hashes
