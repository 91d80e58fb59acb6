"""Memory limits for an ordinary (non-root) organizer (issue 34, point 10).

Without a writable memory cgroup, ``RLIMIT_DATA`` and the tmpfs sizes bound only the heap and
``/tmp``: a 1 GiB shared mapping or memfd passes a 256 MiB limit.  Where the organizer's
systemd user manager can make a transient scope, the launcher starts in one with
``MemoryMax``; where it cannot, the limits line printed at start says shared memory and
memfds are not limited.  Here (a container without a user bus) the second case runs for
real as uid 65534; the first is checked on the command line it builds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from nobody_support import NOBODY, as_nobody

from tacocat_arena.launch import sandbox
from tacocat_arena.launch.sandbox import Limits, SandboxMode


def test_a_systemd_user_scope_holds_the_launcher_where_no_cgroup_is_writable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sandbox, "systemd_scope", lambda: "/usr/bin/systemd-run")
    monkeypatch.setattr(sandbox, "_cgroup_kind", lambda controller: "")
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/1000")
    limits = Limits(memory_mib=256, processes=16)
    prefix = sandbox.launcher(limits, None)
    assert prefix[:5] == ["/usr/bin/systemd-run", "--user", "--scope", "--quiet", "--collect"]
    assert f"MemoryMax={256 * 2**20}" in prefix and "MemorySwapMax=0" in prefix
    assert "TasksMax=16" in prefix
    assert prefix[prefix.index("--") + 1].endswith("setpriv")  # then our usual launcher
    assert sandbox.memory_limit_kind() == "systemd user scope"
    line = sandbox.describe_limits(limits, SandboxMode.BWRAP)
    assert "systemd user scope: heap, /tmp, shared memory" in line
    # The user bus is the organizer's own variable, handed to systemd-run; nothing else is.
    assert sandbox.launcher_env() == {**sandbox.LAUNCHER_ENV, "XDG_RUNTIME_DIR": "/run/user/1000"}


def test_without_cgroup_or_scope_the_limits_line_says_shared_memory_is_not_limited(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sandbox, "systemd_scope", lambda: None)
    monkeypatch.setattr(sandbox, "_cgroup_kind", lambda controller: "")
    line = sandbox.describe_limits(Limits(memory_mib=256), SandboxMode.BWRAP)
    assert "memory 256 MiB (RLIMIT_DATA: the heap and /tmp only;" in line
    assert "shared memory and memfds are NOT limited" in line
    assert sandbox.launcher(Limits(), None)[0].endswith("setpriv")


@pytest.mark.slow
def test_an_ordinary_user_here_is_told_what_is_not_limited() -> None:
    """As uid 65534 for real (``launch/sandbox.py`` imports the standard library and
    ``launch/scratch.py`` alone, so a copy of the two, in their packages, in a folder uid
    65534 can read is enough): whichever case this machine is, the line says it."""
    python = next((p for p in ("/usr/bin/python3", sys.executable) if os.path.exists(p)), None)
    folder = Path(tempfile.mkdtemp(prefix="tacocat-nobody-"))
    try:
        folder.chmod(0o755)
        launch = Path(sandbox.__file__).parent
        for name in ("__init__.py", "launch/__init__.py", "launch/sandbox.py", "launch/scratch.py"):
            copy = folder / "tacocat_arena" / name
            copy.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            shutil.copy(launch.parent / name, copy)
            copy.chmod(0o644)
        code = (
            f"import json, sys; sys.path.insert(0, {str(folder)!r}); "
            "import tacocat_arena.launch.sandbox as s; "
            "print(json.dumps([s.memory_limit_kind(), "
            "s.describe_limits(s.Limits(memory_mib=256), s.SandboxMode.BWRAP)]))"
        )
        done = subprocess.run(
            [*as_nobody(str(python)), "-I", "-c", code],
            capture_output=True, text=True, timeout=120, cwd="/",
        )  # fmt: skip
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if done.returncode != 0 and "Permission denied" in done.stderr:
        pytest.skip(f"uid {NOBODY} cannot run {python}: {done.stderr.strip()[-200:]}")
    assert done.returncode == 0, done.stderr
    kind, line = json.loads(done.stdout)
    if kind:
        assert f"{kind}: heap, /tmp, shared memory" in line
    else:
        assert "shared memory and memfds are NOT limited" in line
        assert "no writable memory cgroup or systemd user scope" in line
