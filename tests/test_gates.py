"""The gate's queue (arena/gates.py): one version of a player at a time, a newer upload
supersedes the waiting one, N gates at once, the least-used player first.  In process: each
"gate" is a coroutine the test lets finish, so the order is asserted, never a duration."""

from __future__ import annotations

import asyncio

import pytest

from tacocat_arena.arena.gates import GateEvent, GateQueue, GateSettings
from tacocat_arena.arena.submissions import Status, Version


def version(player: str, number: int) -> Version:
    return Version(player, number, "0" * 64, 1, "2026-01-01T00:00:00Z", Status.CHECKING)


class Gates:
    """A queue whose gates wait until the test releases them (``finish``)."""

    def __init__(self, concurrency: int) -> None:
        self.release: dict[str, asyncio.Event] = {}
        self.superseded: list[tuple[str, str]] = []
        self.events: list[GateEvent] = []
        self.fail: set[str] = set()
        self.queue = GateQueue(GateSettings(concurrency), self.run, self.supersede)
        self.queue.on_event.append(self.events.append)

    async def run(self, version: Version) -> None:
        gate = self.release.setdefault(version.identity, asyncio.Event())
        await gate.wait()
        if version.identity in self.fail:
            raise RuntimeError("a bug in the gate")

    def supersede(self, old: Version, new: Version) -> None:
        self.superseded.append((old.identity, new.identity))

    async def finish(self, identity: str) -> None:
        self.release.setdefault(identity, asyncio.Event()).set()
        for _ in range(5):
            await asyncio.sleep(0)

    def started(self) -> list[str]:
        return [e.identity for e in self.events if e.kind == "start"]


def test_three_hostile_uploads_delay_another_players_version_by_one_gate_at_most() -> None:
    async def scenario() -> Gates:
        gates = Gates(concurrency=1)
        for number in (1, 2, 3):  # mal's builds sleep to their time limit
            gates.queue.put(version("mal", number))
        gates.queue.put(version("bob", 1))
        await asyncio.sleep(0)
        assert gates.started() == ["mal@v1"]
        await gates.finish("mal@v1")  # one gate's time: bob's is next, not mal's v3
        assert gates.started() == ["mal@v1", "bob@v1"]
        await gates.finish("bob@v1")
        await gates.finish("mal@v3")
        return gates

    gates = asyncio.run(scenario())
    assert gates.started() == ["mal@v1", "bob@v1", "mal@v3"]
    assert gates.superseded == [("mal@v2", "mal@v3")]  # never built


def test_one_version_of_a_player_at_a_time_even_with_free_gates() -> None:
    async def scenario() -> Gates:
        gates = Gates(concurrency=3)
        gates.queue.put(version("mal", 1))
        gates.queue.put(version("mal", 2))
        gates.queue.put(version("bob", 1))
        await asyncio.sleep(0)
        assert gates.started() == ["mal@v1", "bob@v1"]
        assert gates.queue.waiting == 1 and gates.queue.is_queued(version("mal", 2))
        await gates.finish("mal@v1")
        assert gates.started()[-1] == "mal@v2"
        await gates.finish("mal@v2")
        await gates.finish("bob@v1")
        return gates

    gates = asyncio.run(scenario())
    assert gates.queue.running == [] and gates.queue.waiting == 0


def test_the_player_who_used_the_gates_least_goes_first() -> None:
    async def scenario() -> Gates:
        gates = Gates(concurrency=1)
        gates.queue.used["ann"] = 500.0  # ann's earlier builds took their whole limit
        gates.queue.put(version("zed", 1))  # takes the free gate
        gates.queue.put(version("ann", 4))  # came first...
        gates.queue.put(version("bob", 1))  # ...but bob has used no gate time
        await gates.finish("zed@v1")
        await gates.finish("bob@v1")
        await gates.finish("ann@v4")
        return gates

    assert asyncio.run(scenario()).started() == ["zed@v1", "bob@v1", "ann@v4"]


def test_an_older_version_queued_after_a_newer_one_is_the_one_superseded() -> None:
    """At a restart the versions left checking are queued oldest first; were they not, the
    newest must still win."""

    async def scenario() -> Gates:
        gates = Gates(concurrency=1)
        gates.queue.put(version("zed", 1))
        gates.queue.put(version("ann", 3))
        gates.queue.put(version("ann", 2))
        await gates.finish("zed@v1")
        await gates.finish("ann@v3")
        return gates

    gates = asyncio.run(scenario())
    assert gates.superseded == [("ann@v2", "ann@v3")]
    assert gates.started() == ["zed@v1", "ann@v3"]


def test_a_gate_that_raises_does_not_stop_the_queue() -> None:
    async def scenario() -> Gates:
        gates = Gates(concurrency=1)
        gates.fail.add("mal@v1")
        gates.queue.put(version("mal", 1))
        gates.queue.put(version("bob", 1))
        await gates.finish("mal@v1")
        await gates.finish("bob@v1")
        return gates

    gates = asyncio.run(scenario())
    assert [(e.kind, e.identity) for e in gates.events if e.kind == "end"] == [
        ("end", "mal@v1"),
        ("end", "bob@v1"),
    ]


def test_close_cancels_the_gates_running_and_forgets_the_queue() -> None:
    async def scenario() -> Gates:
        gates = Gates(concurrency=1)
        gates.queue.put(version("mal", 1))
        gates.queue.put(version("bob", 1))
        await asyncio.sleep(0)
        await gates.queue.close()
        return gates

    gates = asyncio.run(scenario())
    assert gates.started() == ["mal@v1"] and gates.queue.waiting == 0


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_gate_settings_refuse_a_bad_concurrency(bad: object) -> None:
    with pytest.raises(ValueError, match="concurrency"):
        GateSettings(bad)  # type: ignore[arg-type]


def test_an_older_version_queued_while_a_newer_one_is_in_a_gate_is_superseded() -> None:
    async def scenario() -> Gates:
        gates = Gates(concurrency=1)
        gates.queue.put(version("ann", 3))
        await asyncio.sleep(0)
        gates.queue.put(version("ann", 2))  # would else be gated after v3, and retire it
        await gates.finish("ann@v3")
        return gates

    gates = asyncio.run(scenario())
    assert gates.superseded == [("ann@v2", "ann@v3")] and gates.started() == ["ann@v3"]
