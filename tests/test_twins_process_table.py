"""The twins' rule read from the process table at every game start: when a game starts, the
instance of each of its bots that does not play it is not alive (issue 41 pt 2).  A batch as
hosted play makes it (eight duplicate deals) and in phases of four pairs (two A phases and
two B phases, so each instance is started again), real bot processes, bwrap where it works."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tacocat_arena.launch.sandbox import SandboxMode, bwrap_path
from tacocat_arena.referee.peers import descendants
from tacocat_arena.tournament import runner
from tacocat_arena.tournament.config import BotSpec, TournamentConfig
from tacocat_arena.tournament.storage import TournamentStore

linux_only = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")


def _live_instances() -> dict[int, str]:
    """The bot processes under this one, by pid, with the identity each connects as (from
    its environment, which the launcher sets for the bot's own process)."""
    found = {}
    for pid in descendants(os.getpid())[1:]:
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue  # it ended meanwhile
        for entry in environ:
            if entry.startswith(b"TACOCAT_ARENA_BOT="):
                found[pid] = entry.split(b"=", 1)[1].decode()
    return found


@linux_only
@pytest.mark.slow
@pytest.mark.parametrize("pairs_per_phase", [8, 4])
def test_no_game_starts_while_the_other_instance_of_one_of_its_bots_lives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pairs_per_phase: int
) -> None:
    seen: list[tuple[tuple[str, ...], set[str]]] = []
    play_one = runner._play_one  # noqa: SLF001 (wrapped: the moment a game starts)

    async def reading_the_table(planned, referee, processes, config):  # type: ignore[no-untyped-def]
        instances = tuple(
            runner._instance(name, planned, processes)  # noqa: SLF001
            for name in planned.seats
        )
        seen.append((instances, set(_live_instances().values())))
        return await play_one(planned, referee, processes, config)

    monkeypatch.setattr(runner, "_play_one", reading_the_table)
    tmp_path.chmod(0o755)  # a root runner's bots are uid 65534
    config = TournamentConfig(
        bots=(BotSpec("a", "builtin:random"), BotSpec("b", "builtin:random")),
        games_per_pairing=16,
        concurrency=2,
        move_timeout_s=10.0,
        out=tmp_path / "out",
        base_dir=tmp_path,
        sandbox=SandboxMode.BWRAP if bwrap_path() else SandboxMode.NONE,
    )
    store = TournamentStore(config.out)
    store.claim(config.fingerprint(), resume=False)
    try:
        run = asyncio.run(runner.run_tournament(config, store, pairs_per_phase=pairs_per_phase))
    finally:
        store.close()
    assert run.played == 16 and len(seen) == 16
    for instances, alive in seen:
        assert set(instances) <= alive, (instances, alive)  # its players are up
        others = {n.removesuffix("~B") if n.endswith("~B") else n + "~B" for n in instances}
        assert not others & alive, (instances, alive)  # their other instances are not
    # Both instances of each bot played (A the first game of every deal, B the second).
    assert {name for instances, _ in seen for name in instances} == {"a", "b", "a~B", "b~B"}
