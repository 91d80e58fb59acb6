"""An automated accessibility audit of our pages: axe-core (from npm) run inside Chromium.

``axe_source`` fetches the axe-core package once with ``npm pack`` (the registry's ordinary
client) into a cache folder (``$TACOCAT_AXE_CACHE``, else ~/.cache/tacocat-arena/axe-core)
and yields its ``axe.min.js``; tests skip with the reason when npm or the package is not to
be had.  ``serious_violations`` injects it into a page (as a script's text: nothing is
fetched by the page) and returns the violations of impact "serious" or "critical".
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest

#: The axe-core release the audit runs (pinned: a new rule set must not fail a build by itself).
AXE_VERSION = "4.14.1"


def _cache() -> Path:
    folder = os.environ.get("TACOCAT_AXE_CACHE")
    return Path(folder) if folder else Path.home() / ".cache" / "tacocat-arena" / "axe-core"


def axe_skip_reason_or_source() -> tuple[str | None, str]:
    """``(None, axe.min.js text)``, or ``(why not, "")``."""
    folder = _cache() / AXE_VERSION
    script = folder / "axe.min.js"
    if not script.exists():
        npm = shutil.which("npm")
        if npm is None:
            return "npm is not on PATH: cannot fetch axe-core for the accessibility audit", ""
        folder.mkdir(parents=True, exist_ok=True)
        try:
            done = subprocess.run(
                [npm, "pack", f"axe-core@{AXE_VERSION}", "--pack-destination", str(folder),
                 "--silent"],
                capture_output=True, text=True, timeout=180, check=True,
            )  # fmt: skip
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as error:
            return f"npm pack axe-core failed: {error}", ""
        archive = folder / done.stdout.strip().splitlines()[-1]
        with tarfile.open(archive) as tar:
            member = tar.extractfile("package/axe.min.js")
            if member is None:
                return f"{archive} holds no package/axe.min.js", ""
            script.write_bytes(member.read())
        archive.unlink()
    return None, script.read_text("utf-8")


@pytest.fixture(scope="session")
def axe_source() -> str:
    """axe-core's script text; skips with the reason where it cannot be had."""
    reason, source = axe_skip_reason_or_source()
    if reason is not None:
        pytest.skip(reason)
    return source


def serious_violations(page: Any, source: str) -> list[str]:
    """Run axe on ``page``; one line per node of each serious or critical violation."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(content=source)
    results = page.evaluate("async () => await window.axe.run(document)")
    found = []
    for violation in results["violations"]:
        if violation["impact"] in ("serious", "critical"):
            for node in violation["nodes"]:
                found.append(f"{violation['id']}: {node['target']} {node['failureSummary']}")
    return found
