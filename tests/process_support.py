"""The one place a test starts a real process: start, wait for readiness by polling, stop the
whole process group (SIGTERM, then SIGKILL), and show its output when the test fails.

Why one place: a suite that starts hundreds of servers and bots stays fast and quiet only if
every one of them is stopped the same way.  Each process gets a session (and so a process group)
of its own, so ``stop`` reaches whatever it started too; its output goes to a file rather than a
pipe, so a chatty process never blocks on a full pipe and the output can be read at any time.

tests/conftest.py registers every ``RealProcess`` started during a test (``started_in_test``),
stops those still running when the test ends, attaches their output to the report of a failed
test, and fails a test that leaves any other child process behind (``descendants``).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Every RealProcess started since the current test began (conftest.py empties it per test).
started_in_test: list[RealProcess] = []

#: Predicates that say a process is a longer-lived fixture's (a Dask cluster's worker that its
#: nanny restarted during a test): the end-of-test check leaves those alone.
kept_by_fixtures: list[Callable[[int], bool]] = []

#: How long ``stop`` waits after SIGTERM before it sends SIGKILL to the group.
STOP_GRACE_S = 10.0


@dataclass
class RealProcess:
    """A process started by ``start_process``; ``log`` holds its stdout and stderr."""

    name: str
    command: Sequence[str]
    popen: subprocess.Popen[bytes]
    log: Path
    _offset: int = field(default=0, repr=False)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def poll(self) -> int | None:
        return self.popen.poll()

    def output(self) -> str:
        """Everything the process printed so far (stdout and stderr, interleaved)."""
        try:
            return self.log.read_bytes().decode(errors="replace")
        except FileNotFoundError:
            return ""

    def lines(self) -> list[str]:
        return self.output().splitlines()

    def wait_for(
        self, ready: str | re.Pattern[str] | Callable[[], Any], timeout: float, what: str = ""
    ) -> Any:
        """Poll until ``ready`` holds: a regular expression found in the output (the match is
        returned) or a callable returning something truthy (returned).  Fails with the output
        if the process exits first or ``timeout`` seconds pass."""
        if isinstance(ready, str | re.Pattern):
            pattern = re.compile(ready, re.MULTILINE) if isinstance(ready, str) else ready

            def check() -> Any:
                return pattern.search(self.output())

            what = what or f"/{pattern.pattern}/ in its output"
        else:
            check = ready
            what = what or getattr(ready, "__name__", "readiness")
        deadline = time.monotonic() + timeout
        interval = 0.01
        while True:
            value = check()
            if value:
                return value
            if self.popen.poll() is not None:
                value = check()  # the last lines may have come with the exit
                if value:
                    return value
                raise AssertionError(
                    f"{self.name} exited with {self.popen.returncode} before {what}:\n"
                    f"{self.output()[-4000:]}"
                )
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{self.name} not ready after {timeout:g} s ({what}):\n{self.output()[-4000:]}"
                )
            time.sleep(interval)
            interval = min(interval * 2, 0.1)

    def wait(self, timeout: float) -> int:
        """The exit code, once the process exits within ``timeout`` s (TimeoutExpired if not)."""
        return self.popen.wait(timeout)

    def signal_group(self, sig: int) -> None:
        """Send ``sig`` to the whole process group (the process and what it started)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, sig)

    def stop(
        self, sig: int = signal.SIGTERM, grace: float = STOP_GRACE_S, *, group: bool = False
    ) -> int:
        """Send ``sig`` to the process (to its whole group with ``group``), wait up to ``grace``
        s for it to exit, then SIGKILL the whole group (whatever it left running too) and reap
        it; the exit code.  ``sig`` goes to the process alone by default, as an organizer's
        ``kill`` would: stopping what it started is the process's own job, which a test checks."""
        if self.popen.poll() is None:
            if group:
                self.signal_group(sig)
            else:
                with contextlib.suppress(ProcessLookupError):
                    self.popen.send_signal(sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(grace)
        if self.popen.poll() is None:
            self.signal_group(signal.SIGKILL)
        return self.popen.wait(30)

    def kill(self) -> int:
        """SIGKILL the process at once (as when the machine loses it)."""
        return self.stop(signal.SIGKILL, grace=30)

    def kill_group(self) -> None:
        """SIGKILL whatever is left of the process's group (stragglers after it exited)."""
        self.signal_group(signal.SIGKILL)


def start_process(
    command: Sequence[str],
    *,
    name: str,
    log_dir: Path,
    env: Mapping[str, str] | None = None,
    cwd: Path | str | None = None,
    stdin: Any = subprocess.DEVNULL,
    ready: str | re.Pattern[str] | Callable[[], Any] | None = None,
    ready_timeout: float = 60.0,
    **popen: Any,
) -> RealProcess:
    """Start ``command`` in a session of its own, its output in ``log_dir/NAME-N.log``; wait for
    ``ready`` (see ``RealProcess.wait_for``) when given.  ``env`` replaces the environment
    (None: this process's).  Registered for the end-of-test stop and leak check."""
    log_dir.mkdir(parents=True, exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:60]
    log = log_dir / f"{safe}-{time.monotonic_ns()}.log"
    with open(log, "wb") as handle:
        popen_object = subprocess.Popen(
            list(command),
            env=None if env is None else dict(env),
            cwd=cwd,
            stdin=stdin,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            **popen,
        )
    process = RealProcess(name, tuple(command), popen_object, log)
    started_in_test.append(process)
    if ready is not None:
        try:
            process.wait_for(ready, ready_timeout)
        except BaseException:
            process.kill()
            raise
    return process


def python_command(*args: str) -> list[str]:
    """This interpreter with ``args`` (``-m module ...`` or a script path)."""
    return [sys.executable, *args]


# -- what is left behind -------------------------------------------------------------------------
def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            listed = Path(f"/proc/{pid}/task/{task}/children").read_text()
            found.extend(int(child) for child in listed.split())
        except OSError:
            continue
    return found


def state_of(pid: int) -> str:
    """The process's state letter from /proc (``Z`` for a zombie, ``""`` once it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rpartition(")")[2].split()[0]


def descendants(pid: int | None = None, *, beyond: Collection[int] = ()) -> set[int]:
    """Live (not zombie) descendants of ``pid`` (this process by default), from /proc; those
    in ``beyond`` and whatever they started are left out (a longer-lived fixture's processes
    and what they start, such as a Dask nanny's restarted worker, are the fixture's)."""
    root = os.getpid() if pid is None else pid
    seen: set[int] = set()
    todo = _children(root)
    while todo:
        child = todo.pop()
        if child in seen or child in beyond:
            continue
        seen.add(child)
        todo.extend(_children(child))
    return {p for p in seen if state_of(p) not in ("", "Z", "X")}


def describe(pid: int) -> str:
    """``PID: command line`` for a report."""
    try:
        cmdline = (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except OSError:
        cmdline = "?"
    return f"{pid}: {cmdline.strip()[:300]}"
