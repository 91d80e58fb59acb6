"""Running the arena as an ordinary user from tests that run as root: uid 65534 (nobody),
with a Python it can reach that imports this checkout's packages."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

NOBODY = 65534


def python_for_nobody(folder: Path) -> str:
    """A Python that uid 65534 can run with this environment's packages: a venv in
    ``folder`` on a base interpreter it can reach, whose one .pth adds our site-packages."""
    import site

    def runs(python: str, code: str) -> bool:
        done = subprocess.run([*as_nobody(python), "-c", code], capture_output=True, timeout=60)
        return done.returncode == 0

    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    bases = [f"/usr/bin/{version}", f"/usr/local/bin/{version}", sys._base_executable]  # type: ignore[attr-defined]
    reach = "import os, sys; os.stat(sys.executable)"
    base = next((b for b in bases if os.path.exists(b) and runs(b, reach)), None)
    if base is None:
        pytest.skip(f"no {version} that uid {NOBODY} can run (tried {', '.join(bases)})")
    venv = folder / "venv"
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    (pth,) = venv.glob("lib/python*/site-packages")
    lines = [f"import site; site.addsitedir({path!r})" for path in site.getsitepackages()]
    (pth / "tacocat-tests.pth").write_text("\n".join(lines) + "\n")
    python = str(venv / "bin" / "python")
    if not runs(python, f"{reach}; import tacocat_arena.cli, example_bots, tacocat_bot"):
        pytest.skip(f"uid {NOBODY} cannot read this checkout or its packages")
    return python


def as_nobody(python: str) -> list[str]:
    """The command prefix that runs ``python`` as uid 65534, without root's groups."""
    ids = ["--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups", "--"]
    return ["setpriv", *ids, python]
