"""web/limits.py subclasses uvicorn's private ``HttpToolsProtocol`` (uvicorn has no public hook
for a head deadline, a head-size cap or per-address connection caps), so pyproject pins uvicorn
to the minor version it was written for.  These fail, naming what changed, when the installed
uvicorn is outside the pin or its private class no longer has the shape the subclass relies
on; the limits themselves are tested against a real server in tests/test_web_limits.py."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

from tacocat_arena.web.limits import RELIED_ON_METHODS, _LimitedProtocol, protocol_problems

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def _uvicorn_requirement() -> Requirement:
    dependencies = tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]
    found = [Requirement(d) for d in dependencies if re.match(r"uvicorn\b", d)]
    assert len(found) == 1, dependencies
    return found[0]


def test_uvicorn_is_pinned_to_a_minor_version_and_the_installed_one_is_in_it() -> None:
    requirement = _uvicorn_requirement()
    upper = [s for s in requirement.specifier if s.operator == "<"]
    assert upper, f"pin uvicorn's range from above (web/limits.py): {requirement}"
    installed = metadata.version("uvicorn")
    assert requirement.specifier.contains(installed), (
        f"uvicorn {installed} is outside the tested range {requirement.specifier}"
    )


def test_the_private_protocol_has_the_shape_the_limits_rely_on() -> None:
    assert protocol_problems() == [], (
        "uvicorn's HttpToolsProtocol changed: fix web/limits.py before raising the pin"
    )
    # The subclass overrides exactly the methods the check names (none forgotten).
    limited = _LimitedProtocol
    overridden = {
        name for name in vars(limited) if callable(vars(limited)[name]) and not name.startswith("_")
    }
    assert overridden == set(RELIED_ON_METHODS), overridden
