"""Nothing the arena, ``run`` or ``grade`` starts outlives them, however they die.

A runner killed by SIGKILL (the OOM killer, ``kill -9``) runs no clean-up: its builds, gate
checks, hosted bots and worker processes must die by themselves.  Each test kills one real
runner with SIGKILL (that process alone, never its group, as the OOM killer would) and polls,
bounded, until no process of what it started remains: the processes are found by a marker
on their command line (and the workers by their parent), so a survivor is named.

The cause these guard against: ``setpriv --pdeathsig`` sets the death signal only once it
runs, and a runner that dies before (a build started just before the arena was killed)
sends none, so the process ran on, its time limit gone with the runner
(``sandbox._PARENT_CHECK``); and multiprocessing's workers had no tie to their parent at all
(``executors.worker_pool``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from arena_support import add_players, start_arena, wait_until
from nobody_support import NOBODY, as_nobody, python_for_nobody
from process_support import start_process

from tacocat_arena.launch.package import pack
from tacocat_arena.launch.sandbox import bwrap_path

pytestmark = pytest.mark.slow

#: How long a killed runner's processes may take to go (polled, never asserted as a time).
GONE_WITHIN_S = 10.0

#: A hosted bot that plays greedily but slowly in its twin's games (a batch's second game of
#: each deal, ``L000042b``), so that its batch is still running when the arena is killed; the
#: gate plays a version's first games only (``Look.ladder``), at full speed (slow there too,
#: each gate took 21 s; the arena's move timeout, 5 s here, allows either).
SLOW_GREEDY = """\
import time

from example_bots.greedy_bot import GreedyBot
from tacocat_bot import run


class SlowGreedy(GreedyBot):
    slow = False

    def on_game_start(self, game_id, seat, opponent):
        self.slow = game_id.endswith("b")

    def act(self, view):
        if self.slow:
            time.sleep(0.2)
        return super().act(view)


run(SlowGreedy())
"""


def marked(marker: str) -> list[str]:
    """The live processes whose command line holds ``marker``: "pid cmdline" each."""
    found = []
    for pid, state, cmdline in _processes():
        if marker.encode() in cmdline and state != "Z":
            shown = cmdline.replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{pid} {shown}")
    return found


def children(parent: int) -> list[int]:
    """The live child processes of ``parent``."""
    return [pid for pid, state, _ in _children_of(parent) if state != "Z"]


def _children_of(parent: int) -> list[tuple[int, str, bytes]]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == parent:
            found.append((int(entry.name), fields[0], b""))
    return found


def _processes() -> list[tuple[int, str, bytes]]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        found.append((int(entry.name), state, cmdline))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def left_behind(marker: str, others: list[int]) -> list[str]:
    """What remains of a killed runner after polling up to GONE_WITHIN_S: processes marked
    ``marker`` and those of ``others`` (its workers) still alive."""
    deadline = time.monotonic() + GONE_WITHIN_S
    while True:
        remaining = marked(marker) + [f"{pid} (a worker)" for pid in others if alive(pid)]
        if not remaining or time.monotonic() > deadline:
            return remaining
        time.sleep(0.2)


def package(folder: Path, marker: str, *, code: str, build: str = "") -> Path:
    """A Python package whose command (and build) carry ``marker`` as an argument."""
    folder.mkdir(parents=True)
    manifest = f'command = "python bot.py {marker}"\n'
    if build:
        manifest += f"build = {json.dumps(build)}\n"
    (folder / "bot.toml").write_text(manifest)
    (folder / "bot.py").write_text(code)
    return folder


def upload(web: str, body: bytes, token: str) -> int:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(
        web + "/api/submissions", data=body, method="POST",
        headers={"Authorization": f"Bearer {token}"},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


needs_bwrap = pytest.mark.skipif(
    bwrap_path() is None, reason="bubblewrap (bwrap) cannot sandbox here"
)


@needs_bwrap
def test_a_sigkilled_arena_leaves_no_build_behind(tmp_path: Path) -> None:
    marker = f"orphan-{uuid.uuid4().hex}"
    folder = tmp_path / "arena"
    tokens = add_players(folder, "mal")
    arena = start_arena(folder, "--gates", "1", "--build-timeout", "600")
    build = f"python -c 'import time; time.sleep(600)' {marker}"
    body = pack(package(tmp_path / "sleeper", marker, code="raise SystemExit(0)\n", build=build))
    assert upload(arena.web, body, tokens["mal"]) == 201
    wait_until(lambda: marked(marker), 60, "the build running")
    os.kill(arena.process.pid, signal.SIGKILL)
    arena.process.wait(30)
    assert left_behind(marker, []) == []


@needs_bwrap
def test_a_sigkilled_arena_leaves_no_hosted_bot_nor_worker_behind(tmp_path: Path) -> None:
    marker = f"orphan-{uuid.uuid4().hex}"
    folder = tmp_path / "arena"
    tokens = add_players(folder, "alice", "bob")
    arena = start_arena(folder, "--workers", "1", "--move-timeout", "5")
    for player in ("alice", "bob"):
        body = pack(package(tmp_path / player, marker, code=SLOW_GREEDY))
        assert upload(arena.web, body, tokens[player]) == 201
    # Both versions active and a batch playing: two slow bots in the worker, at once.
    workers: list[int] = []

    def playing() -> bool:
        workers[:] = [p for p in children(arena.process.pid) if b"multiprocessing" in _cmd(p)]
        return any(_has_descendant(w, marker) for w in workers)

    wait_until(playing, 240, "a hosted batch playing in the worker")
    os.kill(arena.process.pid, signal.SIGKILL)
    arena.process.wait(30)
    assert left_behind(marker, workers) == []


def _cmd(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _has_descendant(pid: int, marker: str) -> bool:
    todo = [pid]
    while todo:
        here = todo.pop()
        if marker.encode() in _cmd(here) and here != pid:
            return True
        todo += children(here)
    return False


SLEEPER = "import time\ntime.sleep(600)\n"


@pytest.mark.parametrize("workers", [None, 1], ids=["in-process", "workers"])
def test_a_sigkilled_run_leaves_no_bot_nor_worker_behind(
    tmp_path: Path, workers: int | None
) -> None:
    """``run``'s bots never connect (they sleep): killed while it waits for them."""
    marker = f"orphan-{uuid.uuid4().hex}"
    (tmp_path / "sleeper.py").write_text(SLEEPER)
    config = tmp_path / "tournament.toml"
    lines = ["games = 2", "connect_timeout = 300", 'out = "results"']
    for name in ("a", "b"):
        command = f"python sleeper.py {marker}"
        lines += ["", "[[bots]]", f'name = "{name}"', f"command = {json.dumps(command)}"]
    config.write_text("\n".join(lines) + "\n")
    argv = [sys.executable, "-m", "tacocat_arena.cli", "run", str(config), "--quiet"]
    if workers:
        argv += ["--workers", str(workers)]
    run = start_process(argv, name="run", log_dir=tmp_path / "logs", cwd=tmp_path)
    wait_until(lambda: len(marked(marker)) >= 2 or run.poll() is not None, 120, "the bots")
    assert run.poll() is None, run.output()
    started = [p for p in children(run.pid) if b"multiprocessing" in _cmd(p)]
    os.kill(run.pid, signal.SIGKILL)
    run.popen.wait(30)
    assert left_behind(marker, started) == []


#: Started as uid 65534: builds a sleeping package (the whole launcher, bwrap included) and
#: kills itself with SIGKILL ``argv[2]`` seconds after the build's process started (0: at once,
#: before the launcher has set its death signal), or, given ``running`` and the build's marker
#: (``argv[3]``), as soon as the build's own Python runs in the sandbox (polled, bounded).
_KILLED_BUILDER = """\
import asyncio, os, signal, sys, time
from pathlib import Path
from tacocat_arena.launch import build, sandbox
from tacocat_arena.launch.package import load_package

start = sandbox.spawn

def build_runs(marker):
    for entry in Path("/proc").iterdir():
        if entry.name == str(os.getpid()):
            continue  # this builder's own argv holds the marker too
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\\0")
        except OSError:
            continue
        if marker in argv and Path(argv[0].decode()).name.startswith("python"):
            return True
    return False

async def spawn_then_die(*args, **kwargs):
    process = await start(*args, **kwargs)
    print(process.pid, flush=True)
    if sys.argv[2] == "running":
        deadline = time.monotonic() + 60
        while not build_runs(sys.argv[3].encode()) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
    else:
        await asyncio.sleep(float(sys.argv[2]))
    os.kill(os.getpid(), signal.SIGKILL)
    return process

sandbox.spawn = spawn_then_die
asyncio.run(build.build_package(load_package(Path(sys.argv[1])), sandbox.SandboxMode.BWRAP))
"""


@needs_bwrap
@pytest.mark.parametrize("user", ["root", "nobody"])
def test_a_builder_killed_as_soon_as_its_build_starts_leaves_nothing(user: str) -> None:
    """The race: killed right after the spawn (before ``setpriv`` has run, often, under
    load) and once the build's own process runs (seen, rather than 3 s after); as the
    runner's user and as an ordinary user."""
    if user == "nobody" and os.geteuid() != 0:
        pytest.skip("only root can start a process as uid 65534")
    base = Path(tempfile.mkdtemp(prefix="tacocat-orphans-"))  # outside root's 0700 tmp
    try:
        base.chmod(0o755)
        prefix = as_nobody(python_for_nobody(base)) if user == "nobody" else [sys.executable]
        marker = f"orphan-{uuid.uuid4().hex}"
        script = base / "builder.py"
        script.write_text(_KILLED_BUILDER)
        root = package(base / "pkg", marker, code=SLEEPER, build=f"python bot.py {marker}")
        if user == "nobody":
            for path in (root, root / "bot.py", root / "bot.toml"):
                os.chown(path, NOBODY, NOBODY)
        for delay in ("0", "0", "0", "0", "0", "running"):
            done = subprocess.run(
                [*prefix, str(script), str(root), delay, marker], capture_output=True, timeout=120
            )
            assert done.returncode == -signal.SIGKILL, done.stderr.decode(errors="replace")
            when = "once the build ran" if delay == "running" else "as the build started"
            assert left_behind(marker, []) == [], f"killed {when}"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _group_and_terminal(pid: int) -> tuple[int, int]:
    """A process's group and controlling terminal (0: none), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[2]), int(fields[4])


@needs_bwrap
def test_every_process_of_a_sandbox_is_in_its_launchers_group_with_no_terminal(
    tmp_path: Path,
) -> None:
    """One kill of the launcher's process group ends a sandbox, pid 1 included: what the
    reaper does when the runner dies before bwrap's pid 1 has tied itself to it (bwrap's
    ``--new-session`` would put the sandbox out of its reach).  And no process of it has a
    terminal to push input into (the launcher's session, ``spawn``'s, has none)."""
    marker = f"orphan-{uuid.uuid4().hex}"
    script = tmp_path / "builder.py"
    script.write_text(_KILLED_BUILDER)
    root = package(tmp_path / "pkg", marker, code=SLEEPER, build=f"python bot.py {marker}")
    with subprocess.Popen(
        [sys.executable, str(script), str(root), "60"], stdout=subprocess.PIPE, text=True
    ) as runner:
        try:
            assert runner.stdout is not None
            launcher = int(runner.stdout.readline())

            def build_running() -> list[str]:
                return [line for line in marked(marker) if "sh -c" not in line]

            running = wait_until(build_running, 60, "the sandboxed build's own process")
            sandbox = [int(line.split()[0]) for line in marked(marker)]
            assert len(sandbox) >= 3, marked(marker)  # both bwraps and the build
            for pid in sandbox:
                assert _group_and_terminal(pid) == (launcher, 0), (pid, marked(marker), running)
        finally:
            runner.kill()
    assert left_behind(marker, []) == []
