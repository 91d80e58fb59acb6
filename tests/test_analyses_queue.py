"""The arena's analysis queue (arena/analyses.py), in process: its bounds (one request queued
or running per player, a global cap, a reference no dearer than the default), its cache by
game, seat and reference.  The worker itself runs in tests/test_why_hosted.py (real arena,
real HTTP)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tacocat_arena.arena.analyses import (
    MAX_BUDGET,
    Analyses,
    AnalysisRefused,
    State,
    cache_name,
    parse_reference,
)
from tacocat_arena.play.analysis import Reference


def test_a_reference_dearer_than_the_default_or_no_reference_is_refused() -> None:
    assert parse_reference(None) == Reference()
    assert parse_reference("ismcts?iterations=100&seeds=2") == Reference(iterations=100, seeds=2)
    for spec in ("ismcts?iterations=6001&seeds=4", "ismcts?iterations=1000000&seeds=64"):
        with pytest.raises(AnalysisRefused, match=str(MAX_BUDGET)) as refused:
            parse_reference(spec)
        assert refused.value.status == 400
    with pytest.raises(AnalysisRefused, match="only reference is ismcts"):
        parse_reference("stockfish")


def test_the_cache_is_by_game_seat_and_reference() -> None:
    names = {
        cache_name("L000001a", 0, Reference()),
        cache_name("L000001a", 1, Reference()),
        cache_name("L000002a", 0, Reference()),
        cache_name("L000001a", 0, Reference(iterations=100)),
    }
    assert len(names) == 4


def test_one_request_per_player_at_a_time_a_global_cap_and_cached_answers(tmp_path: Path) -> None:
    cheap = Reference(iterations=10, seeds=1)
    cached = tmp_path / f"{cache_name('L000009a', 1, cheap)}.json"
    cached.write_text(json.dumps({"game": "L000009a", "seat": 1, "reference": str(cheap)}))

    async def scenario() -> None:
        queue = Analyses(tmp_path, max_pending=2)
        try:
            job = queue.request("ann", "L000001a", 0, cheap, {})
            assert job.state is State.QUEUED
            assert queue.request("ann", "L000001a", 0, cheap, {}) is job  # the same, not twice
            with pytest.raises(AnalysisRefused, match="one analysis at a time") as busy:
                queue.request("ann", "L000002a", 0, cheap, {})
            assert busy.value.status == 429
            queue.request("ben", "L000003a", 1, cheap, {})
            with pytest.raises(AnalysisRefused, match="at most 2 analyses"):
                queue.request("cat", "L000004a", 0, cheap, {})
            # a cached one is answered at once, bounds or not
            done = queue.request("cat", "L000009a", 1, cheap, {})
            assert done.state is State.DONE
            assert queue.status(done)["result"]["seat"] == 1
            assert queue.status(done)["page"] == "/games/L000009a?analysis=1"
            assert [j.game_id for j in queue.of_player("ann")] == ["L000001a"]
            assert [r["seat"] for r in queue.results_of("L000009a")] == [1]
            assert queue.results_of("L000001a") == []
        finally:
            queue.close()  # before its runner ever ran: no worker started

    asyncio.run(scenario())


#: The scenario of the test below, run in a process of its own (its worker pool and the
#: multiprocessing resource tracker end with it, not with pytest).
KILLED_WORKER = """
import asyncio, json, os, signal, sys, time
from pathlib import Path
from tacocat_arena.arena.analyses import Analyses, State, cache_name
from tacocat_arena.play.analysis import Reference

folder, golden = Path(sys.argv[1]), Path(sys.argv[2])
record = json.loads(golden.read_text())
slow, fast = Reference(iterations=3000, seeds=2), Reference(iterations=30, seeds=1)

async def until(predicate, what, seconds=120.0):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.1)

async def scenario():
    queue = Analyses(folder)
    try:
        job = queue.request("ann", "g1", 1, slow, record)
        await until(lambda: queue.jobs[job.key].state is State.RUNNING, "running")
        await until((folder / f"{cache_name('g1', 1, slow)}.progress").exists, "progress")
        (pid,) = [p.pid for p in queue._pool._processes.values()]
        assert os.getpriority(os.PRIO_PROCESS, pid) == 19, "not at nice 19"
        os.kill(pid, signal.SIGKILL)
        await until(lambda: queue.jobs[job.key].state is State.FAILED, "failed")
        assert "failed" in queue.status(queue.jobs[job.key])["error"]
        assert queue.result("g1", 1, slow) is None, "a half-written result read as done"
        again = queue.request("ann", "g1", 1, fast, record)  # ann may ask again
        await until(lambda: queue.jobs[again.key].state is State.DONE, "done", 180)
        found = queue.status(queue.jobs[again.key])["result"]
        assert found["seat"] == 1 and found["game"] == "g1" and found["decisions"]
        print("ok")
    finally:
        queue.close()

asyncio.run(scenario())
"""


@pytest.mark.slow  # a real worker process, killed mid-analysis
def test_a_worker_killed_mid_analysis_fails_that_job_alone_and_the_next_one_runs(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    golden = Path(__file__).parent / "golden" / "default.json"
    done = subprocess.run(
        [sys.executable, "-c", KILLED_WORKER, str(tmp_path), str(golden)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr
    assert "analysis of g1 seat 1 failed" in done.stderr  # the arena's log says why
