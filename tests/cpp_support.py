"""The C++ example bot (example_bots/cpp), built once per test session for every test that
asks for the ``cpp_bot`` fixture (tests/conftest.py loads this module as a pytest plugin).

It needs a C++ toolchain with Debian's gRPC (g++, cmake, pkg-config, libgrpc++-dev,
protobuf-compiler-grpc; `.ci/run` installs them when missing); the tests that use it skip
with the reason otherwise.  The build goes into a temporary folder, as a user would make it
(cmake, then cmake --build): about 45 s of CPU, so one build serves test_cpp_bot.py and
test_sdk_sessions.py alike.  ``TACOCAT_CPP_BUILD=DIR`` builds in DIR instead and keeps it:
cmake then recompiles only what changed since the last run (for working on the bot).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CPP_DIR = Path(__file__).resolve().parents[1] / "example_bots" / "cpp"
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


@pytest.fixture(scope="session")
def cpp_bot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built bot's binary; skips with the reason where there is no toolchain."""
    reason = cpp_skip_reason()
    if reason is not None:
        pytest.skip(reason)
    kept = os.environ.get("TACOCAT_CPP_BUILD")
    build = Path(kept) if kept else tmp_path_factory.mktemp("cpp-build")
    for step in (
        ["cmake", "-S", str(CPP_DIR), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"],
        ["cmake", "--build", str(build), "-j", str(os.cpu_count() or 2)],
    ):
        done = subprocess.run(step, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    binary = build / "tacocat_cpp_bot"
    assert binary.is_file()
    return binary
