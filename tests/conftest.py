"""Fixtures and hooks shared by every test module.

``browser`` and ``browser_page`` (tests/browser_support.py): a headless system Chromium and a
watched page in it; ``axe_source`` (tests/a11y_support.py): axe-core for the accessibility
audit; ``cpp_bot`` (tests/cpp_support.py): the C++ example bot, built once per version of its
sources and kept between runs.  The tests that use them skip with the reason where there is
none.  ``cleanup``: arena and bot processes killed at the end of a test (the arena tests').

The two tiers (README, docs/architecture.md): ``-m "not slow"`` is the fast tier.  So that it
stays fast, a test that asks for a real-process fixture (``REAL_PROCESS_FIXTURES``) is marked
slow at collection, and a test that takes more than ``FAST_LIMIT_S`` without the mark fails
with its name and duration (the time its threads waited for a core, which only a loaded machine
adds, not counted).  Unmarked tests that
started a process are listed at the end of the run.

After every test the processes it started through tests/process_support.py are stopped (whole
process group) and their output is attached to a failure's report; any other process the test
left behind (a child or grandchild of this one, found in /proc; this process is a child
subreaper, so orphans of the test's processes count too) is killed and fails the test.

``tmp_path`` and ``mktemp`` folders are world-readable: a root runner's sandboxed bots run as
uid 65534, and pytest makes them 0700 (bots in a folder of their own, as organizers keep
them, read it as is).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import multiprocessing.process
import multiprocessing.resource_tracker
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import process_support
import pytest

pytest_plugins = ["browser_support", "a11y_support", "cpp_support"]

#: Fixtures that start a real server, bot process or browser: a test using one is slow.
REAL_PROCESS_FIXTURES = frozenset(
    {"browser", "browser_page", "axe_source", "cpp_bot", "cleanup", "processes"}
)
#: The per-test timeout of a test that asks for the C++ bot, which it may have to build.
CPP_BUILD_TIMEOUT_S = 1500
#: The longest an unmarked test may take (setup and call, less the time its thread waited for
#: a core: a loaded machine's share), or ``TACOCAT_FAST_LIMIT_S``.
FAST_LIMIT_S = float(os.environ.get("TACOCAT_FAST_LIMIT_S", "2.0"))
#: ``TACOCAT_DURATIONS_LOG=FILE``: each test's time (setup, call, teardown) and CPU (its worker's
#: and the processes it waited for) appended to FILE as it ends, with the worker and the wall
#: clock at its end, to watch a long parallel run (``--durations`` prints only at the end), find
#: what uses the cores and see how the workers' ends line up.
DURATIONS_LOG = os.environ.get("TACOCAT_DURATIONS_LOG")
#: ``-n auto``'s workers a core (``pytest_xdist_auto_num_workers``). Most of the whole suite's
#: time is end-to-end tests waiting on their servers, bots and clocks, so one worker a core left
#: the cores idle: on the quiet 2-core machine 10 min 2 s (114 % of CPU) with one, 7 min 14 s
#: (164 %) with two (2026-12-02, 1,759 tests).  The suite must pass at a load of 6 for this.
WORKERS_PER_CORE = 2
#: How long processes a test left behind get to exit on their own before they are killed.
LEFT_BEHIND_GRACE_S = float(os.environ.get("TACOCAT_LEFT_BEHIND_GRACE_S", "5.0"))


def _keep_bytecode() -> None:
    """Let this run's Python processes keep their bytecode (``__pycache__``, gitignored), as
    Python does by default.  Under ``PYTHONDONTWRITEBYTECODE`` (set on the project's own
    machine) every process of the run compiled every module of the checkout it imported, from
    source, again: each pytest worker's assertion rewriting of the test modules (~12 s of CPU
    a worker, 3 s with the cache) and each arena, ``run``, ``check`` or ``submit`` started by
    a test (~0.15 s of CPU an arena's start).  The variable is unset for this run's processes
    alone (the workers and what the tests start inherit that), not for the machine."""
    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:  # the workers inherit it
        sys.dont_write_bytecode = False  # this process: the test modules' rewritten bytecode


_keep_bytecode()

_spawned = pytest.StashKey[list[str]]()
_durations = pytest.StashKey[dict[str, float]]()
_waits_at_start = pytest.StashKey[dict[str, int]]()
_cpu_at_start = pytest.StashKey[float]()
_outcomes = pytest.StashKey[dict[str, str]]()
_current: list[pytest.Item] = []


# -- processes -------------------------------------------------------------------------------------
def _audit(event: str, args: tuple[Any, ...]) -> None:
    """Notes every process a test starts (whatever starts it) on the running test."""
    if event in ("subprocess.Popen", "os.posix_spawn", "os.fork", "os.forkpty") and _current:
        argv = args[1] if event != "os.fork" and len(args) > 1 else event
        what = argv if isinstance(argv, str | bytes) else " ".join(map(str, argv))
        with contextlib.suppress(Exception):
            _current[-1].stash.setdefault(_spawned, []).append(what[:200])


def pytest_configure(config: pytest.Config) -> None:
    sys.addaudithook(_audit)
    _note_wait_at_exit()
    if sys.platform == "linux":
        # PR_SET_CHILD_SUBREAPER: orphans of the test's processes become ours, not init's, so
        # the end-of-test check sees them (and reaps them).
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Ask the sandbox's code paths once, before any test: the answer comes from a Python
    process (``sandbox._bot_module_path``) and is kept for the process's life, so whichever
    fast test placed a bot's folder first (launch/folder.py) started that process.  Not in
    an xdist controller, which runs no test."""
    if getattr(session.config.option, "numprocesses", None) and not hasattr(
        session.config, "workerinput"
    ):
        return
    from tacocat_arena.launch import sandbox

    sandbox.code_paths()


def _owned_pids() -> set[int]:
    """Children that some object here will wait for (a Popen, a multiprocessing Process):
    not ours to reap."""
    pids = {p.pid for p in multiprocessing.process._children if p.pid}  # type: ignore[attr-defined]
    pids.update(
        o.pid for o in gc.get_objects() if isinstance(o, subprocess.Popen) and o.returncode is None
    )
    return pids


def _reap_orphans() -> None:
    """Reap zombie children that nothing here waits for (orphans handed to us as subreaper)."""
    zombies = [
        pid
        for pid in process_support._children(os.getpid())
        if process_support.state_of(pid) == "Z"
    ]
    if not zombies:
        return
    owned = _owned_pids()
    for pid in zombies:
        if pid not in owned:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


@pytest.fixture(scope="session", autouse=True)
def _temporary_folders_readable_by_bots(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every folder ``tmp_path`` and ``tmp_path_factory.mktemp`` make is readable by the
    sandbox's uid when the tests run as root (the folders above them do not matter)."""
    if os.geteuid() != 0:
        return
    mktemp = tmp_path_factory.mktemp

    def readable_mktemp(basename: str, numbered: bool = True) -> Path:
        folder = mktemp(basename, numbered)
        folder.chmod(0o755)
        return folder

    tmp_path_factory.mktemp = readable_mktemp  # type: ignore[method-assign]


@pytest.fixture
def ram_path(tmp_path: Path) -> Iterator[Path]:
    """A fresh folder in RAM (``/dev/shm``, tmpfs) where there is one, else ``tmp_path``:
    for an in-process test that stores many games.  The arena's store fsyncs each commit
    (synchronous=FULL), and 300 commits on the disk the other workers' tests write to waited
    seconds on it alone (3.6 s of wall for 0.35 s of CPU in a whole run), which the fast
    tier's limit counts: only the waits for a core are taken off.  Durability is not what
    such a test checks (test_arena_server's kill -9 does, on disk)."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    with tempfile.TemporaryDirectory(prefix="tacocat-test-", dir=shm) as folder:
        yield Path(folder)


@pytest.fixture
def cleanup() -> object:
    """Arena and bot processes (tests/arena_support.py) registered here are killed at the end
    of the test, whatever happened."""
    from arena_support import BotProc

    started: list[Any] = []
    yield started
    for item in reversed(started):
        if isinstance(item, BotProc):
            item.kill()
        else:
            item.stop(signal.SIGKILL, timeout=10)


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Any]:
    """``processes(command, name=..., ready=...)`` starts a process through
    tests/process_support.py with its log in the test's folder (stopped after the test)."""

    def start(command: list[str], **options: Any) -> process_support.RealProcess:
        options.setdefault("log_dir", tmp_path / "process-logs")
        options.setdefault("name", Path(command[0]).name)
        return process_support.start_process(command, **options)

    yield start


def _left_behind(before: set[int]) -> set[int]:
    left = process_support.descendants(beyond=before)
    kept = process_support.kept_by_fixtures
    # This process's own multiprocessing resource tracker (started by the first test that
    # makes a process pool, e.g. a Dask LocalCluster): one per process, by design, living as
    # long as the pytest worker itself.
    tracker = getattr(multiprocessing.resource_tracker._resource_tracker, "_pid", None)
    return {pid for pid in left if pid != tracker and not any(keeps(pid) for keeps in kept)}


@pytest.fixture(autouse=True)
def _no_process_left_behind(request: pytest.FixtureRequest) -> Iterator[None]:
    """Stops the test's RealProcesses and fails the test if it leaves any other process."""
    before = process_support.descendants()
    process_support.started_in_test.clear()
    _current.append(request.node)
    try:
        yield
    finally:
        _current.remove(request.node)
        for process in reversed(process_support.started_in_test):
            if process.poll() is None:  # the test did not stop it: its whole group goes
                process.stop()
                process.kill_group()
        deadline = time.monotonic() + LEFT_BEHIND_GRACE_S
        left = _left_behind(before)
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = _left_behind(before)
        described = [process_support.describe(pid) for pid in sorted(left)]
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        for process in process_support.started_in_test:
            process.kill_group()  # any straggler outside this process's tree
        _reap_orphans()
        if described:
            pytest.fail(
                f"{request.node.nodeid} left {len(described)} process(es) running "
                f"{LEFT_BEHIND_GRACE_S:g} s after it ended (now killed):\n  "
                + "\n  ".join(described),
                pytrace=False,
            )


def pytest_sessionfinish() -> None:
    """Reap what the session's fixtures orphaned (the worker's browser ends after the last
    test's check): else those processes' CPU is missing from this process's children's."""
    _reap_orphans()


# -- tiers -----------------------------------------------------------------------------------------
@pytest.hookimpl(tryfirst=True)  # before -m "not slow" deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if REAL_PROCESS_FIXTURES.intersection(fixtures):
            item.add_marker(pytest.mark.slow)
        # The C++ build runs in the setup of the first test that needs it (a few minutes of
        # CPU when its sources changed, more on a loaded machine): that test's allowance.
        if "cpp_bot" in fixtures and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(CPP_BUILD_TIMEOUT_S))
    # The slow tests first (in their order), the short ones after: pytest-xdist hands tests
    # out in this order, so the last ones to start are short and the workers end together,
    # instead of one running a long end-to-end test while the others have nothing left.
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, absent under -p no:xdist
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: ``WORKERS_PER_CORE`` workers a core for the whole suite, one for the fast
    tier (``-m "not slow"``).  Most of the whole suite's time is end-to-end tests waiting on
    their servers and bots, not on a core, so one worker a core leaves the cores idle much of
    the run; the fast tier's tests use their core throughout, and each worker more collects
    the whole suite once more (``-n N`` still sets any other number)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    fast_tier = "not slow" in (config.option.markexpr or "")
    return (cores or 1) * (1 if fast_tier else WORKERS_PER_CORE)


def _thread_wait_ns(path: str) -> int | None:
    """How long a thread has waited for a core so far, in ns (Linux schedstat: time runnable
    but not running), from its ``/proc/.../schedstat``; None where the kernel does not say."""
    try:
        return int(Path(path).read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return None


#: The waits of the threads that ended, by thread id, as each ended (``_note_wait_at_exit``).
_ended_waits: dict[str, int] = {}


def _note_wait_at_exit() -> None:
    """Keep each Python thread's wait for a core as it ends: a test's bots, servers and event
    loops often run in threads that are gone by the time the test ends."""
    bootstrap = threading.Thread._bootstrap_inner  # type: ignore[attr-defined]

    def noted(self: threading.Thread) -> None:
        try:
            bootstrap(self)
        finally:
            if (ns := _thread_wait_ns("/proc/thread-self/schedstat")) is not None:
                _ended_waits[str(threading.get_native_id())] = ns

    threading.Thread._bootstrap_inner = noted  # type: ignore[attr-defined]


def _waits() -> dict[str, int]:
    """How long each thread of this process has waited for a core so far, in ns, by thread
    id, those that ended included; empty where the kernel does not say."""
    waits = dict(_ended_waits)
    with contextlib.suppress(OSError):
        for task in os.scandir("/proc/self/task"):
            if (ns := _thread_wait_ns(f"{task.path}/schedstat")) is not None:
                waits[task.name] = ns
    return waits


def _waited_s(since: dict[str, int]) -> float:
    """How long the threads of this process waited for a core since ``since`` (``_waits``), in
    all: a test's own thread also waits while a thread it waits on (a bot's, gRPC's, an event
    loop's) waits for a core."""
    return sum(max(0, ns - since.get(tid, 0)) for tid, ns in _waits().items()) / 1e9


def _cpu_s() -> float:
    """CPU used so far by this process and the children it waited for."""
    own, children = (
        resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.stash[_waits_at_start] = _waits()
    item.stash[_cpu_at_start] = _cpu_s()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    durations = item.stash.setdefault(_durations, {})
    durations[call.when] = call.duration
    if DURATIONS_LOG:
        outcomes = item.stash.setdefault(_outcomes, {})
        outcomes[call.when] = report.outcome
        if call.when == "teardown":  # one line per test as it ends (to watch a -n run)
            failed = [f"{when} failed" for when, o in outcomes.items() if o == "failed"]
            shown = failed[0] if failed else outcomes.get("call", outcomes["setup"])
            with open(DURATIONS_LOG, "a") as log:
                cpu = _cpu_s() - item.stash.get(_cpu_at_start, _cpu_s())
                worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
                log.write(
                    f"{sum(durations.values()):8.2f} {cpu:7.2f} {shown} {item.nodeid} "
                    f"{worker} {time.time():.1f}\n"
                )
    if report.failed and process_support.started_in_test:
        for process in process_support.started_in_test:
            status = process.poll()
            state = "running" if status is None else f"exit code {status}"
            tail = process.output()[-6000:]
            report.sections.append((f"{process.name} (pid {process.pid}, {state})", tail))
    if call.when == "call" and report.passed and item.get_closest_marker("slow") is None:
        spawned = item.stash.get(_spawned, [])
        wall = durations.get("setup", 0.0) + call.duration
        # The time it would take on a quiet machine: what it waited for a core is the load's.
        waited = _waited_s(item.stash.get(_waits_at_start, _waits()))
        took = wall - min(waited, wall)
        if took > FAST_LIMIT_S:
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid} took {took:.2f} s (setup and call: {wall:.2f} s, less {waited:.2f} "
                f"s waiting for a core), over the fast tier's {FAST_LIMIT_S:g} s, and is not "
                "marked slow: mark it @pytest.mark.slow or make it faster"
            )
        elif spawned:
            # Listed at the end of the run rather than failed: a library's cached probe (which
            # bwrap, which sys.path) runs in whichever test needs it first, so which unmarked
            # test it lands in depends on the order.
            report.user_properties.append(("spawned", spawned[0]))
    return report


def pytest_terminal_summary(terminalreporter: Any) -> None:
    spawning = [
        (report.nodeid, value)
        for report in terminalreporter.stats.get("passed", [])
        for key, value in getattr(report, "user_properties", ())
        if key == "spawned"
    ]
    if spawning:
        terminalreporter.section("unmarked tests that started a process (mark them slow?)")
        for nodeid, what in spawning:
            terminalreporter.line(f"{nodeid}: {what}")
