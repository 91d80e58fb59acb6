"""Games played elsewhere: local worker processes and a real Dask LocalCluster.

The same config and seed give the same games in one process, with ``--workers 2`` and on a
cluster (deterministic bots: greedy twice and the tiny bot); killing a Dask worker mid-batch
still ends with exactly the planned games, none twice.  Everything runs the real CLI in a
subprocess with real bot processes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import process_support
import pytest
from verify_support import assert_verifies  # tests/ (pytest pythonpath)

from tacocat_arena.tournament.config import load_config
from tacocat_arena.tournament.executors import make_batches, play_batch, run_on_workers
from tacocat_arena.tournament.schedule import round_robin
from tacocat_arena.tournament.storage import TournamentStore

REPO_ROOT = Path(__file__).resolve().parents[1]
TINY = REPO_ROOT / "tests" / "tournament_bots" / "tiny_bot.py"


def test_a_batch_holds_whole_duplicate_pairs_of_one_pairing() -> None:
    plan = round_robin(["a", "b", "c"], 10, 4, secret="")
    batches = make_batches(plan, pairs_per_batch=2)
    assert sorted(g.game_id for b in batches for g in b.games) == sorted(g.game_id for g in plan)
    for batch in batches:
        assert len({frozenset(g.seats) for g in batch.games}) == 1  # one pairing
        deals = [g.deal for g in batch.games]
        assert all(deals.count(d) == 2 for d in deals)  # both games of each deal
        assert len(set(deals)) <= 2
    assert len(batches) == 3 * 3  # 5 deals per pairing, in batches of 2, 2 and 1


def _run(out: Path, *extra: str, bots: tuple[str, ...], games: int = 4) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "tacocat_arena.cli", "run", "--seed", "5", "--games", str(games)]
    for bot in bots:
        argv += ["--bot", bot]
    argv += ["--out", str(out), "--quiet", *extra]
    return subprocess.Popen(
        argv,
        cwd=out.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=dict(os.environ, COLUMNS="200"),
    )


def _finish(process: subprocess.Popen[str], timeout: float = 300) -> str:
    output, _ = process.communicate(timeout=timeout)
    assert process.returncode == 0, output[-3000:]
    return output


def _games(out: Path) -> dict[str, dict[str, Any]]:
    """games.jsonl by id, without the timings (the only thing allowed to differ)."""
    games = {}
    for line in (out / "games.jsonl").read_text().splitlines():
        game = json.loads(line)
        game.pop("decision_ms")
        for action in game["record"]["actions"]:
            action.pop("ms", None)
        games[game["id"]] = game
    return games


@pytest.fixture(scope="module")
def cluster() -> Any:
    distributed = pytest.importorskip("distributed", reason="needs Dask: pip install '.[dask]'")
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        # Its HTTP server (the dashboard's, and /health's even without one) on a free loopback
        # port: None still bound the default 8787, on every interface, which a second run on
        # the machine found taken ("Port 8787 is already in use").
        dashboard_address="127.0.0.1:0",
    )
    client = distributed.Client(cluster)

    def a_worker(pid: int) -> bool:  # one its nanny restarted is the cluster's, not a test's
        return pid in {worker.pid for worker in cluster.workers.values()}

    process_support.kept_by_fixtures.append(a_worker)
    yield cluster, client
    process_support.kept_by_fixtures.remove(a_worker)
    client.close()
    cluster.close()


#: The tiny bot is run by a path relative to the run's folder (the sandbox shows a bot its
#: own folder only), so each test copies it there.
DETERMINISTIC = ("g=builtin:greedy", "h=builtin:greedy", "t=python tiny_bot.py")


@pytest.mark.slow
def test_one_process_two_workers_and_a_cluster_play_the_same_games(
    tmp_path: Path, cluster: Any
) -> None:
    local, client = cluster
    shutil.copy(TINY, tmp_path / "tiny_bot.py")
    outs = {kind: tmp_path / kind for kind in ("one", "workers", "dask")}
    _finish(_run(outs["one"], bots=DETERMINISTIC))
    # The other two runs deal with the first one's secret (a new run would draw its own):
    # each starts from a copy of its store with the games taken out.
    for kind in ("workers", "dask"):
        outs[kind].mkdir()
        with sqlite3.connect(outs["one"] / "tournament.sqlite") as source:
            with sqlite3.connect(outs[kind] / "tournament.sqlite") as copy:
                source.backup(copy)
                copy.execute("DELETE FROM games")
    on_workers = _finish(_run(outs["workers"], "--workers", "2", bots=DETERMINISTIC))
    on_dask = _finish(_run(outs["dask"], "--cluster", local.scheduler_address, bots=DETERMINISTIC))
    # Both say which sandbox the bots run in and their limits, as a run in one process does.
    for output in (on_workers, on_dask):
        assert "Sandbox: " in output and " for g, h, t" in output, output[:2000]
        assert "Limits per bot process (" in output, output[:2000]
    one = _games(outs["one"])
    assert len(one) == 3 * 4
    assert _games(outs["workers"]) == one
    assert _games(outs["dask"]) == one
    for out in outs.values():
        assert_verifies(out)


@pytest.mark.slow
def test_a_killed_dask_worker_loses_no_game_and_records_none_twice(
    tmp_path: Path, cluster: Any
) -> None:
    local, client = cluster
    shutil.copy(TINY, tmp_path / "tiny_bot.py")
    slow = (
        "a=python tiny_bot.py --sleep-ms 15",
        "b=python tiny_bot.py --sleep-ms 15",
        "c=builtin:greedy",
    )
    out = tmp_path / "out"
    # 10 games a pairing: one batch of 5 pairs each (3 batches for 2 workers, so one waits
    # for the worker that is killed, or its restart); more batches only made the run longer.
    run = _run(out, "--cluster", local.scheduler_address, bots=slow, games=10)
    # Wait until both workers are busy with a batch, then kill one outright.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        processing = client.processing()
        busy = [addr for addr, keys in processing.items() if keys]
        if len(busy) == 2:
            break
        time.sleep(0.2)
    else:
        run.kill()
        pytest.fail("the workers never both took a batch")
    time.sleep(1.0)  # mid-batch: its bots are playing
    pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
    os.kill(pid, signal.SIGKILL)
    _finish(run, timeout=400)
    lines = (out / "games.jsonl").read_text().splitlines()
    ids = [json.loads(line)["id"] for line in lines]
    assert len(ids) == 3 * 10 == len(set(ids))
    planned = {g.game_id for g in round_robin(["a", "b", "c"], 10, 5, secret="")}
    assert set(ids) == planned
    assert_verifies(out)  # each planned game once, with its planned deal


class _EveryBatchTwice:
    """An executor whose every batch comes back twice, as after a lost worker's re-run."""

    description = "each batch twice"

    def play(self, config: Any, batches: Any, on_batch: Any) -> None:
        for batch in batches:
            games = play_batch(config, batch)  # real bots, a real referee, in this process
            on_batch(batch, games)
            on_batch(batch, games)


@pytest.mark.slow
def test_a_batch_returned_twice_is_saved_once(tmp_path: Path) -> None:
    config = load_config(
        None,
        {"games_per_pairing": 4, "out": tmp_path / "out", "sandbox": "none"},
        ["g=builtin:greedy", "r=builtin:random"],
    )
    store = TournamentStore(config.out)
    store.claim(config.fingerprint(), resume=False)
    seen: list[str] = []
    run = run_on_workers(
        config, store, _EveryBatchTwice(), on_game=lambda r, done, total: seen.append(r.game_id)
    )
    assert (run.planned, run.played) == (4, 4)
    assert sorted(seen) == sorted(store.finished_ids()) and len(set(seen)) == 4
