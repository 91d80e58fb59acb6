"""A real headless browser for the tests of our pages: Playwright driving the system Chromium.

Playwright for Python ships its driver in the wheel but not a browser; we never let it download
one (the network here reaches package registries only) and start Debian's ``chromium`` instead,
through ``executable_path``. The tests run as root on a closed network, hence ``--no-sandbox``
and the flags that stop Chromium from phoning home.

tests/conftest.py loads this module as a pytest plugin, so any test can ask for the
``browser`` and ``browser_page`` fixtures by name; a script or bench can call
``launch_browser``. Every page opened through ``browser_page`` records console errors,
uncaught exceptions and any request that leaves ``file://``/``data:``/loopback, so a test can
assert that a page works offline with ``watch.assert_clean()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Playwright

#: Where Debian's chromium package puts the browser; TACOCAT_CHROMIUM overrides it.
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")

#: Headless as root on a closed network: no sandbox (root), no GPU, nothing fetched in the
#: background (component updates, sync, safe-browsing lists), no first-run dialogs.
LAUNCH_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)

#: Schemes and hosts a page may load from without counting as "network".
_LOCAL_SCHEMES = frozenset({"file", "data", "blob", "about"})
_LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})


def find_chromium() -> str | None:
    """The path of a Chromium binary, or None when none is installed."""
    override = os.environ.get("TACOCAT_CHROMIUM")
    if override:
        return override if Path(override).exists() else None
    for candidate in CHROMIUM_CANDIDATES:
        if Path(candidate).exists():
            return candidate
    return shutil.which("chromium")


def browser_skip_reason() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]')"
    if find_chromium() is None:
        return "no Chromium installed (apt-get install chromium; .ci/run does it as root)"
    return None


def launch_browser(playwright: Playwright) -> Browser:
    """Start the system Chromium headless with LAUNCH_ARGS."""
    executable = find_chromium()
    if executable is None:
        raise RuntimeError(browser_skip_reason())
    return playwright.chromium.launch(
        executable_path=executable, headless=True, args=list(LAUNCH_ARGS)
    )


def file_url(path: Path) -> str:
    """The ``file://`` URL of a local file, as a person opening it from disk would have."""
    return path.resolve().as_uri()


def is_local_url(url: str) -> bool:
    """True for URLs that do not reach the network: files, data, blobs, loopback."""
    parts = urlsplit(url)
    if parts.scheme in _LOCAL_SCHEMES:
        return True
    return parts.hostname in _LOCAL_HOSTS


@dataclass
class PageWatch:
    """A page and what went wrong on it: console errors, page errors, non-local requests."""

    page: Page
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    network_requests: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        """Everything recorded so far, one line each."""
        return (
            [f"console error: {text}" for text in self.console_errors]
            + [f"uncaught exception: {text}" for text in self.page_errors]
            + [f"network request: {url}" for url in self.network_requests]
        )

    def assert_clean(self) -> None:
        """Fail the test if the page logged an error, threw, or tried to reach the network."""
        problems = self.problems()
        assert not problems, "\n".join(problems)

    def screenshot(self, path: Path, *, full_page: bool = True) -> Path:
        """Save a PNG of the page (kept under the test's tmp folder by the caller)."""
        self.page.screenshot(path=str(path), full_page=full_page)
        return path


def watch_page(page: Page) -> PageWatch:
    """Attach the recorders to ``page``; non-local requests are recorded and aborted."""
    watch = PageWatch(page)

    def on_console(message: Any) -> None:
        if message.type == "error":
            watch.console_errors.append(message.text)

    def on_route(route: Any) -> None:
        url = route.request.url
        if is_local_url(url):
            route.continue_()
        else:
            watch.network_requests.append(url)
            route.abort()

    page.on("console", on_console)
    page.on("pageerror", lambda error: watch.page_errors.append(str(error)))
    page.route("**/*", on_route)
    return watch


@dataclass
class BrowserSession:
    """The worker's Chromium and the event loop of the Playwright that drives it."""

    browser: Browser
    loop: asyncio.AbstractEventLoop


@contextlib.contextmanager
def _playwright_loop_running(loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """Playwright's loop marked as this thread's running loop, as its sync API needs it.

    Playwright runs its event loop in a greenlet of the calling thread and, after every sync
    call, marks that loop as the thread's running loop again (``wait_for_future`` in
    playwright/_impl/_greenlets.py): its own code resumes inside the loop at the next call.
    While it is marked, ``asyncio.run`` in the same thread raises "cannot be called from a
    running event loop".  So it is marked only while a test uses the browser, and unmarked
    (``asyncio._set_running_loop``, the call Playwright itself makes) in between."""
    previous = asyncio._get_running_loop()
    asyncio._set_running_loop(loop)
    try:
        yield
    finally:
        asyncio._set_running_loop(previous)


@pytest.fixture(scope="session")
def browser_session() -> Iterator[BrowserSession]:
    """One headless Chromium per pytest process (each xdist worker); skips with the reason
    where there is none.

    Session scope, not module: a Playwright driver and a Chromium cost ~1 s of CPU to start
    and stop, and a whole run started one per module per worker (12, on 4 workers).  Between
    the tests that use it, Playwright's event loop is not left marked as running
    (``_playwright_loop_running``), so the tests that call ``asyncio.run`` in between work;
    tests/test_browser_support.py checks it.
    """
    reason = browser_skip_reason()
    if reason is not None:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = launch_browser(playwright)
        # Chromium starts its helpers (GPU, network, storage processes) with its first page:
        # started here, in a session fixture's setup (before conftest notes the processes
        # that exist when a test begins), they belong to the session's browser, not to the
        # first test that opens a page (conftest fails a test that leaves processes behind).
        chromium.new_page().close()
        loop = asyncio.get_running_loop()  # Playwright's, marked running by the calls above
        asyncio._set_running_loop(None)
        try:
            yield BrowserSession(chromium, loop)
        finally:
            asyncio._set_running_loop(loop)  # as the sync API left it, for the close and its exit
            chromium.close()


@pytest.fixture
def browser(browser_session: BrowserSession) -> Iterator[Browser]:
    """The worker's headless Chromium, usable for the length of the test."""
    with _playwright_loop_running(browser_session.loop):
        yield browser_session.browser


@pytest.fixture
def browser_page(browser: Browser) -> Iterator[PageWatch]:
    """A fresh page (own context) in the worker's browser, watched for errors and network."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        yield watch_page(context.new_page())
    finally:
        context.close()
