"""The C++ example bot (example_bots/cpp), built once per version of its sources for every test
that asks for the ``cpp_bot`` fixture (tests/conftest.py loads this module as a pytest plugin).

It needs a C++ toolchain with Debian's gRPC (g++, cmake, pkg-config, libgrpc++-dev,
protobuf-compiler-grpc; `.ci/run` installs them when missing); the tests that use it skip
with the reason otherwise.  The build goes into a temporary folder, as a user would make it
(cmake, then cmake --build): about 45 s of CPU, so the binary is kept between runs in
``~/.cache/tacocat-arena-tests/cpp-bot/KEY`` (``$TACOCAT_TEST_CACHE`` or ``$XDG_CACHE_HOME``
instead of ``~/.cache``), KEY a digest of the bot's sources, the protocol and the toolchain's
versions: a change to any of them builds again, and nothing else does.  ``TACOCAT_CPP_BUILD=DIR``
builds in DIR instead and keeps it: cmake then recompiles only what changed since the last run
(for working on the bot).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

CPP_DIR = Path(__file__).resolve().parents[1] / "example_bots" / "cpp"
KEPT_BUILDS = 4
TOOLS = ("g++", "cmake", "pkg-config", "protoc", "grpc_cpp_plugin")


def cpp_skip_reason() -> str | None:
    """Why the C++ bot cannot be built here, or None when it can."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        return f"no C++ gRPC toolchain: {', '.join(missing)} not on PATH"
    probe = subprocess.run(["pkg-config", "--exists", "grpc++", "protobuf"], check=False)
    if probe.returncode != 0:
        return "pkg-config finds no grpc++/protobuf (install libgrpc++-dev)"
    return None


def _source_key() -> str:
    """A digest of everything the build reads: the bot's sources, the protocol (proto/ is a
    link into the repository's own) and the toolchain's versions."""
    digest = hashlib.sha256()
    files = [
        Path(folder, name)
        for folder, _, names in os.walk(CPP_DIR, followlinks=True)  # proto/ is a link
        for name in names
    ]
    for path in sorted(files):
        digest.update(str(path.relative_to(CPP_DIR)).encode() + b"\0" + path.read_bytes())
    for probe in (["g++", "--version"], ["pkg-config", "--modversion", "grpc++", "protobuf"]):
        done = subprocess.run(probe, capture_output=True, text=True, check=False)
        digest.update(done.stdout.encode())
    return digest.hexdigest()[:20]


def cache_root() -> Path:
    """Where built bots are kept between runs: ``$TACOCAT_TEST_CACHE`` or the user's cache."""
    base = os.environ.get("TACOCAT_TEST_CACHE") or os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base else Path.home() / ".cache"
    return root / "tacocat-arena-tests"


def build_cpp_bot() -> Path:
    """The bot's binary, built once per version of its sources and toolchain and kept in
    ``cache_root()``: a second run (or a second xdist worker, which waits on the lock) reuses
    it.  A failed or interrupted build leaves nothing in the cache."""
    key = _source_key()
    root = cache_root() / "cpp-bot"
    root.mkdir(parents=True, exist_ok=True)
    done_dir = root / key
    binary = done_dir / "tacocat_cpp_bot"
    with open(root / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time; the others then find it
        if binary.is_file():
            return binary
        build = Path(tempfile.mkdtemp(prefix=f"{key}.building-", dir=root))
        try:
            for step in (
                ["cmake", "-S", str(CPP_DIR), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"],
                ["cmake", "--build", str(build), "-j", str(os.cpu_count() or 2)],
            ):
                done = subprocess.run(step, capture_output=True, text=True, timeout=900)
                assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
            assert (build / "tacocat_cpp_bot").is_file()
            shutil.rmtree(done_dir, ignore_errors=True)
            build.rename(done_dir)
        finally:
            shutil.rmtree(build, ignore_errors=True)
        # The newest few builds stay (other checkouts may be at other commits), no more.
        kept = sorted(
            (d for d in root.iterdir() if d.is_dir() and ".building-" not in d.name),
            key=lambda d: d.stat().st_mtime,
            reverse=True,
        )
        for old in kept[KEPT_BUILDS:]:
            shutil.rmtree(old, ignore_errors=True)
            (root / f"{old.name}.lock").unlink(missing_ok=True)
    return binary


@pytest.fixture(scope="session")
def cpp_bot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the built bot's binary in a temporary folder of the session (readable by a
    sandboxed bot's uid, unlike a private cache); skips with the reason where there is no
    toolchain."""
    reason = cpp_skip_reason()
    if reason is not None:
        pytest.skip(reason)
    kept = os.environ.get("TACOCAT_CPP_BUILD")
    if kept:
        build = Path(kept)
        for step in (
            ["cmake", "-S", str(CPP_DIR), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"],
            ["cmake", "--build", str(build), "-j", str(os.cpu_count() or 2)],
        ):
            done = subprocess.run(step, capture_output=True, text=True, timeout=900)
            assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        binary = build / "tacocat_cpp_bot"
        assert binary.is_file()
        return binary
    binary = tmp_path_factory.mktemp("cpp-bot") / "tacocat_cpp_bot"
    shutil.copy2(build_cpp_bot(), binary)
    return binary
