"""The shared browser fixture notices what the page tests rely on it to notice."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from browser_support import BrowserSession, file_url, is_local_url

pytestmark = pytest.mark.slow


def test_local_urls_are_files_data_and_loopback() -> None:
    assert is_local_url("file:///tmp/report.html")
    assert is_local_url("data:text/plain,hi")
    assert is_local_url("http://127.0.0.1:8080/live")
    assert not is_local_url("https://cdn.example.org/lib.js")


def test_a_clean_page_passes(browser_page, tmp_path: Path) -> None:
    page = tmp_path / "clean.html"
    page.write_text("<!doctype html><title>ok</title><p id=x>hello</p>", encoding="utf-8")
    browser_page.page.goto(file_url(page))
    assert browser_page.page.text_content("#x") == "hello"
    browser_page.assert_clean()
    shot = browser_page.screenshot(tmp_path / "clean.png")
    assert shot.stat().st_size > 0


def test_asyncio_runs_between_the_tests_that_use_the_workers_browser(
    browser_session: BrowserSession,
) -> None:
    """The browser lives as long as the worker, and the worker runs tests that call
    ``asyncio.run`` (or run a loop of their own) between the browser's tests: the test above
    used it, the test below uses it again (in this order under ``-n 0``)."""

    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert asyncio.run(answer()) == 42
    loop = asyncio.new_event_loop()
    try:
        assert loop.run_until_complete(answer()) == 42
    finally:
        loop.close()
    assert browser_session.browser.is_connected()


def test_console_errors_exceptions_and_network_are_caught(browser_page, tmp_path: Path) -> None:
    page = tmp_path / "dirty.html"
    page.write_text(
        "<!doctype html><title>bad</title>"
        '<script src="https://cdn.example.org/lib.js"></script>'
        "<script>console.error('boom'); undefinedFunction();</script>",
        encoding="utf-8",
    )
    browser_page.page.goto(file_url(page))
    problems = browser_page.problems()
    assert any("console error: boom" in p for p in problems), problems
    assert any("undefinedFunction" in p for p in browser_page.page_errors), problems
    assert browser_page.network_requests == ["https://cdn.example.org/lib.js"]
    with pytest.raises(AssertionError):
        browser_page.assert_clean()
