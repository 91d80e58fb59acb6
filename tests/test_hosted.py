"""Hosted bots end to end: packages uploaded over real HTTP with ``submit`` (the command in
this process, ``arena_support.submit_in_process``; as its own process in the re-gate test and
in test_why_hosted.py), built and checked in the real sandbox, played by the arena with no
author process connected, across restarts, worker deaths and a Dask cluster.

Everything is real processes on loopback (tests/arena_support.py); tests that need bwrap or
Node skip with the reason where they are missing.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import arena_support
import pytest
from arena_support import ArenaProcess, add_players, start_bot, wait_until
from arena_support import submit_in_process as submit
from node_support import node_dependencies
from process_support import descendants, describe

from tacocat_arena.arena.hosted import HostedSettings
from tacocat_arena.arena.submissions import identity
from tacocat_arena.cli.run import verify_any
from tacocat_arena.launch.sandbox import bwrap_path
from tacocat_arena.launch.scratch import owned_folder

REPO = Path(__file__).resolve().parent.parent
NODE_DIR = REPO / "example_bots" / "node"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap (bwrap) cannot sandbox here"),
]


def start_arena(folder: Path, *args: str) -> ArenaProcess:
    """``serve`` with a move timeout that a check's decision-time survives on a machine
    loaded by other work (the gate checks against the arena's move timeout)."""
    return arena_support.start_arena(folder, "--move-timeout", "5", *args)


def versions(arena: ArenaProcess) -> dict[str, dict[str, Any]]:
    """``GET /api/submissions`` by ladder name."""
    return {f"{v['player']}@v{v['version']}": v for v in arena.json("/api/submissions")}


def python_package(folder: Path, code: str, build: str = "") -> Path:
    """A Python package: ``bot.py`` holding ``code``."""
    folder.mkdir(parents=True)
    manifest = 'command = "python bot.py"\n' + (f"build = {json.dumps(build)}\n" if build else "")
    (folder / "bot.toml").write_text(manifest)
    (folder / "bot.py").write_text(code)
    return folder


def post(arena: ArenaProcess, body: bytes, token: str) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        arena.web + "/api/submissions",
        data=body,
        method="POST",
        headers={"Authorization": f"Bearer {token}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.fixture
def node_package() -> Path:
    """example_bots/node with its locked dependencies installed (npm ci, once)."""
    return node_dependencies()


def test_python_and_node_packages_play_with_no_author_connected_and_after_restart(
    tmp_path: Path, node_package: Path
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "alice", "nora")
    author = tmp_path / "elsewhere"
    author.mkdir()
    arena = start_arena(folder, "--workers", "1")
    try:
        python = REPO / "example_bots" / "packages" / "python-greedy"
        for player, package in (("alice", python), ("nora", node_package)):
            done = submit(package, arena, tokens[player], author)
            assert done.returncode == 0, done.stdout + done.stderr
            assert f"{player} v1: active" in done.stdout
        assert {v["status"] for v in versions(arena).values()} == {"active"}

        def played(minimum: int) -> bool:
            found = versions(arena)
            return all(found[identity(p, 1)]["games"] >= minimum for p in ("alice", "nora"))

        wait_until(lambda: played(2), 60, "hosted games between the two versions")
        assert arena.json("/api/connections")["connected"] == []  # no author process
        before = {v: row["games"] for v, row in versions(arena).items()}
    finally:
        arena.stop()
    arena = start_arena(folder, "--workers", "1")
    try:
        wait_until(
            lambda: all(versions(arena)[v]["games"] >= n + 2 for v, n in before.items()),
            60,
            "hosted games after the restart",
        )
    finally:
        arena.stop()
    with sqlite3.connect(folder / "arena.sqlite") as db:
        ids = [row[0] for row in db.execute("SELECT game_id FROM games")]
    assert len(ids) == len(set(ids))


def test_a_package_failing_check_or_build_is_rejected_naming_why(tmp_path: Path) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "carl")
    arena = start_arena(folder)
    try:
        quits = python_package(tmp_path / "quits", "raise SystemExit(3)\n")
        done = submit(quits, arena, tokens["carl"], tmp_path)
        assert done.returncode == 1
        assert "carl v1 is rejected: check 'handshake' failed" in done.stdout
        assert "exited with code 3 before its Hello" in done.stdout
        # The build runs with the network off: a build that needs it fails, and says so.
        online = python_package(
            tmp_path / "online",
            "raise SystemExit(0)\n",
            build="python -c \"import socket; socket.create_connection(('1.1.1.1', 53), 3)\"",
        )
        done = submit(online, arena, tokens["carl"], tmp_path)
        assert done.returncode == 1, done.stdout
        assert "carl v2 is rejected: build:" in done.stdout
        assert "exited with code 1" in done.stdout and "OSError" in done.stdout
        found = versions(arena)
        assert [found[v]["status"] for v in ("carl@v1", "carl@v2")] == ["rejected", "rejected"]
        assert found["carl@v1"]["games"] == 0
    finally:
        arena.stop()


def _tar(entries: list[tarfile.TarInfo | tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for entry in entries:
            if isinstance(entry, tarfile.TarInfo):
                tar.addfile(entry)
            else:
                info = tarfile.TarInfo(entry[0])
                info.size = len(entry[1])
                tar.addfile(info, io.BytesIO(entry[1]))
    return buffer.getvalue()


def _link(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, target
    return info


def test_hostile_uploads_over_http_are_refused_and_write_nothing_outside(tmp_path: Path) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "mal")
    arena = start_arena(folder)
    manifest = ("bot.toml", b'command = "python bot.py"\n')
    try:
        hostile = {
            "dot-dot": _tar([manifest, ("../../escaped.txt", b"x")]),
            "absolute": _tar([manifest, ("/tmp/escaped.txt", b"x")]),
            "symlink out": _tar([manifest, _link("key", "../../../organizer.token")]),
            "unknown key": _tar([("bot.toml", b'command = "x"\nrestart = true\n')]),
            "no bot.toml": _tar([("bot.py", b"")]),
            "bomb": _tar([manifest, ("zeros", bytes(300 * 2**20))]),
        }
        around = {p for p in tmp_path.rglob("*") if not p.is_relative_to(folder)}
        reasons = []  # as the uploader reads them (the public list: "not a valid package")
        for kind, body in hostile.items():
            status, answer = post(arena, body, tokens["mal"])
            assert status == 422, (kind, answer)
            assert answer["status"] == "rejected" and answer["reason"], kind
            reasons.append(answer["reason"])
        assert {v["reason"] for v in arena.json("/api/submissions")} == {"not a valid package"}
        for needle in ("'..'", "absolute path", "points outside", "unknown key 'restart'",
                       "no bot.toml", "unpacked_bytes"):  # fmt: skip
            assert any(needle in reason for reason in reasons), (needle, reasons)
        # Nothing landed beside the arena's folder, nor anywhere in it, nor in /tmp.
        assert {p for p in tmp_path.rglob("*") if not p.is_relative_to(folder)} == around
        assert not [p for p in folder.rglob("*") if p.name in ("escaped.txt", "key", "zeros")]
        assert not Path("/tmp/escaped.txt").exists()
        assert not (folder / "versions" / "mal").exists()  # refused before it was a version
        # A wrong token, an announced body over the cap, a body cut mid-way: no version.
        assert post(arena, hostile["dot-dot"], "tca_not-a-token")[0] == 401
        assert _raw_upload(arena, tokens["mal"], announced=10**9, sent=10) == 413
        _raw_upload(arena, tokens["mal"], announced=50_000, sent=1_000)
        time.sleep(0.5)
        assert len(arena.json("/api/submissions")) == len(hostile)
        assert list((folder / "uploads").iterdir()) == []
    finally:
        arena.stop()


def _raw_upload(arena: ArenaProcess, token: str, announced: int, sent: int) -> int | None:
    """POST ``sent`` bytes of a body announced as ``announced``, then hang up; the status
    if one came before the cut."""
    host, port = arena.web.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(
            (
                f"POST /api/submissions HTTP/1.1\r\nHost: {host}\r\n"
                f"Authorization: Bearer {token}\r\nContent-Length: {announced}\r\n\r\n"
            ).encode()
            + bytes(sent)
        )
        if announced > sent * 1000:
            answer = conn.recv(200).decode()
            return int(answer.split()[1])
    return None


GREEDY = REPO / "example_bots" / "packages" / "python-greedy"
RANDOM = REPO / "example_bots" / "packages" / "python-random"


def _two_active(tmp_path: Path, *serve_args: str) -> tuple[ArenaProcess, Path]:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "alice", "bob")
    arena = start_arena(folder, *serve_args)
    for player, package in (("alice", GREEDY), ("bob", RANDOM)):
        done = submit(package, arena, tokens[player], tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
    return arena, folder


def _game_ids(folder: Path) -> list[str]:
    with sqlite3.connect(folder / "arena.sqlite") as db:
        return [row[0] for row in db.execute("SELECT game_id FROM games ORDER BY seq")]


def test_a_sigkilled_worker_loses_no_committed_game_and_records_none_twice(
    tmp_path: Path,
) -> None:
    arena, folder = _two_active(tmp_path, "--workers", "1")
    try:
        wait_until(lambda: len(_game_ids(folder)) >= 4, 60, "the first hosted batch")
        # The kill must fall on a batch in flight: a worker with bots of its own is playing
        # one.  (Games alone are no such event: a batch's games are committed one by one after
        # its worker returned, so a kill at "4 games" could hit an idle worker, and the rest
        # of that batch's games then met "games after" before a batch was ever lost.)  With
        # one worker, the batch in flight is the next one: the one before it is all committed.
        (worker,) = wait_until(lambda: _playing_workers(arena.process.pid), 60, "a batch in flight")
        committed = _game_ids(folder)
        os.kill(worker, signal.SIGKILL)
        log_file = folder / "logs" / "arena.log"
        wait_until(lambda: "its worker died" in log_file.read_text(), 60, "the lost batch")
        # The lost batch, sent again, is played whole: each of its games recorded once.
        batch = 2 * HostedSettings().pairs_per_batch
        wait_until(lambda: len(_game_ids(folder)) >= len(committed) + batch, 120, "games after")
        after = _game_ids(folder)
        assert after[: len(committed)] == committed  # nothing committed was lost
        assert len(after) == len(set(after))  # nothing recorded twice
    finally:
        arena.stop()


def _playing_workers(parent: int) -> list[int]:
    """The arena's worker processes that have processes of their own (a batch's bots)."""
    return [pid for pid in _workers(parent) if descendants(pid)]


def _workers(parent: int) -> list[int]:
    """The arena's worker processes (its children running multiprocessing's spawn main)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and b"multiprocessing" in cmdline and b"resource_tracker" not in cmdline:
            found.append(int(entry.name))
    return found


def test_a_version_crashing_in_its_games_is_suspended_and_told_why(tmp_path: Path) -> None:
    """It passes check, then dies at the start of each of its games against a connected bot."""
    folder = tmp_path / "arena"
    tokens = add_players(folder, "bob", "dan")
    arena = start_arena(folder, "--workers", "1")
    # Nothing a bot reads tells the gate from a game (tests/test_gate_look.py), but its
    # opponents: the gate's is another version, never a connected bot such as bob.
    code = (
        "import os, sys\n"
        "from example_bots.random_bot import RandomBot\n"
        "from tacocat_bot import run\n"
        "class Flaky(RandomBot):\n"
        "    def on_game_start(self, game_id, seat, opponent):\n"
        "        if opponent == 'bob':\n"
        "            os._exit(9)\n"
        "run(Flaky())\n"
    )
    bot = None
    try:
        flaky = python_package(tmp_path / "flaky", code)
        done = submit(flaky, arena, tokens["dan"], tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        bot = start_bot("bob", tokens["bob"], arena.address, tmp_path)
        wait_until(lambda: versions(arena)["dan@v1"]["status"] == "suspended", 90, "the suspension")
        reason = versions(arena)["dan@v1"]["reason"]
        # (against a connected bot the arena's referee sees the stream end: a disconnect)
        assert "5 games in a row" in reason and ("crash" in reason or "disconnect" in reason)
        # The next submit --wait says why the version stopped playing.
        done = submit(flaky, arena, tokens["dan"], tmp_path)
        assert f"dan v1 was suspended: {reason}" in done.stdout
        assert "dan v2: active" in done.stdout
    finally:
        if bot is not None:
            bot.kill()
        arena.stop()


def test_a_dask_local_cluster_serves_hosted_games(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    from tacocat_arena.arena.hosted import DaskWorkers, Hosting
    from tacocat_arena.arena.ladder import Arena, LadderSettings
    from tacocat_arena.arena.players import add_player
    from tacocat_arena.arena.store import ArenaStore
    from tacocat_arena.launch.package import pack

    async def scenario(client: Any) -> list[dict[str, Any]]:
        store = ArenaStore(tmp_path / "arena")
        try:
            arena = Arena(store, LadderSettings())
            hosting = Hosting(arena, HostedSettings(), DaskWorkers(client=client))
            for player, package in (("alice", GREEDY), ("bob", RANDOM)):
                add_player(store, player)
                body = hosting.submissions.receiving()
                body.write_bytes(pack(package))
                version = await hosting.submit(player, body)
                while hosting.submissions.get(player, version.version) == version:
                    await asyncio.sleep(0.2)  # still checking
            stop = asyncio.Event()
            task = asyncio.ensure_future(hosting.run(stop))
            deadline = time.monotonic() + 60
            while arena.tally.games < 4 and time.monotonic() < deadline:
                await asyncio.sleep(0.5)
            stop.set()
            await task
            return hosting.summaries()
        finally:
            store.close()

    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0"
    ) as cluster, distributed.Client(cluster) as client:  # fmt: skip
        found = asyncio.run(scenario(client))
    assert [v["status"] for v in found] == ["active", "active"]
    assert all(v["games"] >= 4 for v in found)


def test_a_hosted_version_plays_connected_bots_too(tmp_path: Path) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "alice", "bob")
    arena = start_arena(folder)
    bot = None
    try:
        assert submit(GREEDY, arena, tokens["alice"], tmp_path).returncode == 0
        bot = start_bot("bob", tokens["bob"], arena.address, tmp_path)

        def mixed() -> list[dict[str, Any]] | None:
            games = arena.json("/api/games?bot=alice@v1&limit=20")
            found = [g for g in games if set(g["seats"]) == {"alice@v1", "bob"} and not g["live"]]
            return found if len({tuple(g["seats"]) for g in found}) == 2 else None

        # Both seatings (a pairing's two games; independent deals against a connected bot,
        # each published as it ends), seat names as the ladder knows them (never the twin's).
        found = wait_until(mixed, 60, "games of alice@v1 against bob in both seats")
        assert {tuple(g["seats"]) for g in found} == {("alice@v1", "bob"), ("bob", "alice@v1")}
        assert versions(arena)["alice@v1"]["games"] >= 2
        # One pairing of a version against connected bots at a time: no second alice@v1
        # replaced the first's session, so no game was lost by a disconnect it did not cause.
        assert versions(arena)["alice@v1"]["status"] == "active"
        lost = [g for g in arena.json("/api/games?bot=alice@v1&limit=50")
                if "disconnect" in str(g.get("reason", ""))]  # fmt: skip
        assert not lost, lost
    finally:
        if bot is not None:
            bot.kill()
        arena.stop()
    # No second process under a live one's name (its connection replaced the first's
    # session, its token was then dropped by the first's end): each log's starts got in.
    for log_file in (folder / "hosted" / "logs").glob("alice@v1*.log"):
        assert "UNAUTHENTICATED" not in log_file.read_text(errors="replace"), log_file.name
    # Every game the arena stored re-verifies as `verify DIR` checks it: the records name the
    # bots (never the twin instance that played: issue 38), the deals re-derive.
    result = verify_any(folder)
    assert not result.problems, "\n".join(map(str, result.problems))
    assert result.ok and result.games >= 2


def test_a_version_left_checking_by_a_killed_arena_is_checked_again_at_restart(
    tmp_path: Path,
) -> None:
    """The arena is killed as soon as the build's process runs (found by a marker on its
    command line), so that the version is left ``checking``, whatever the machine's load;
    its build is then short (a 6 s build both times was 12 s of waiting)."""
    folder = tmp_path / "arena"
    tokens = add_players(folder, "erin")
    package = tmp_path / "slow-build"
    package.mkdir()
    marker = f"regate-{uuid.uuid4().hex}"
    (package / "bot.toml").write_text(
        'command = "python -m example_bots.greedy_bot"\n'
        f"build = \"python -c 'import time; time.sleep(2)' {marker}\"\n"
    )
    arena = start_arena(folder)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tacocat_arena.cli", "submit", str(package), "--arena",
             arena.web, "--token", tokens["erin"]],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert "erin v1: checking" in done.stdout, done.stdout + done.stderr
        wait_until(
            lambda: any(marker in describe(pid) for pid in descendants(arena.process.pid)),
            60,
            "the build running",
        )
    finally:
        arena.stop(signal.SIGKILL)  # mid-build
    with sqlite3.connect(folder / "arena.sqlite") as db:
        (status,) = db.execute("SELECT status FROM versions WHERE player = 'erin'").fetchone()
    assert status == "checking"  # the kill fell on the build
    arena = start_arena(folder)
    try:
        wait_until(lambda: versions(arena)["erin@v1"]["status"] == "active", 60, "the re-gate")
        own = urllib.request.Request(
            arena.web + "/api/submissions/erin/1",
            headers={"Authorization": f"Bearer {tokens['erin']}"},
        )
        with urllib.request.urlopen(own, timeout=10) as response:
            assert "build: built in" in json.loads(response.read())["log"]  # its owner's
    finally:
        arena.stop()


def test_a_killed_arenas_socket_folder_is_removed_at_the_next_start_a_live_ones_never(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """The hosted socket folder is a ``launch.scratch`` folder: named for its arena, removed
    by the next arena's start once its owner is dead, never while the owner lives."""
    # The arenas' temporary folder, not the machine's; a short one, as /tmp is: the socket's
    # path must fit in 107 bytes, and tmp_path under pytest -n is too deep for it.
    tmp = Path(tempfile.mkdtemp(prefix="tacocat-t-"))
    request.addfinalizer(lambda: shutil.rmtree(tmp, ignore_errors=True))
    monkeypatch.setenv("TMPDIR", str(tmp))
    killed = start_arena(tmp_path / "killed")
    left = list(tmp.glob(f"tacocat-hosted-{killed.process.pid}-*"))
    killed.stop(signal.SIGKILL)  # no cleanup possible
    assert len(left) == 1 and (left[0] / "arena.sock").exists()
    alive = owned_folder("hosted", under=tmp)  # this test's process: alive, so kept
    again = start_arena(tmp_path / "again")
    try:
        assert not left[0].exists()
        assert alive.is_dir()
        assert list(tmp.glob(f"tacocat-hosted-{again.process.pid}-*"))
    finally:
        again.stop()
    assert not list(tmp.glob(f"tacocat-hosted-{again.process.pid}-*"))  # an arena that stops
