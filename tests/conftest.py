"""Fixtures shared by every test module.

``browser`` and ``browser_page`` (tests/browser_support.py): a headless system Chromium and a
watched page in it; ``axe_source`` (tests/a11y_support.py): axe-core for the accessibility
audit. The tests that use them skip with the reason where there is none.
"""

pytest_plugins = ["browser_support", "a11y_support"]
