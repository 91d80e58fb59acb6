"""``--notify URL`` (tournament/notify.py): POSTs over real loopback HTTP, in process."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from notify_support import endpoint

from tacocat_arena.launch.spec import ConfigError
from tacocat_arena.tournament.notify import ATTEMPTS, check_url, post, summary

BODY = {"event": "cup", "standings": [{"rank": 1, "bot": "a"}]}


def test_a_flaky_endpoint_is_retried_until_it_answers() -> None:
    said: list[str] = []
    pauses: list[float] = []
    with endpoint([500, 503]) as server:
        assert post(server.url, BODY, say=said.append, sleep=pauses.append)
    assert server.bodies == [BODY] * 3
    assert pauses == [1.0, 2.0] and len(said) == 2 and "HTTP 500" in said[0]


def test_a_failing_endpoint_never_raises_and_says_why() -> None:
    said: list[str] = []
    with endpoint([500] * 10) as server:
        assert not post(server.url, BODY, say=said.append, sleep=lambda s: None)
    assert len(server.bodies) == ATTEMPTS
    assert "gave up" in said[-1]
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    said.clear()
    assert not post(closed, BODY, say=said.append, sleep=lambda s: None)
    assert len(said) == ATTEMPTS + 1 and "refused" in said[0].lower()


def test_a_redirect_is_not_followed() -> None:
    with endpoint() as target, endpoint([302] * 5, location="") as first:
        first.location = target.url
        assert not post(first.url, BODY, sleep=lambda s: None)
    assert target.bodies == [] and len(first.bodies) == ATTEMPTS


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.org/", "http://", "x"])
def test_only_http_urls_with_a_host(url: str) -> None:
    with pytest.raises(ConfigError, match="must be an http:// or https:// URL"):
        check_url(url)
    assert check_url("https://example.org/hook") == "https://example.org/hook"


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://[::1", "Invalid IPv6 URL"),
        ("http://127.0.0.1:99999/", "out of range"),
        ("http://a b/", "no space"),
        ("http://a/\nX-Forged: 1", "no space"),
    ],
)
def test_a_url_the_post_would_refuse_is_refused_before_the_event(url: str, why: str) -> None:
    """Each was accepted (the first a traceback) and failed only at the event's end."""
    with pytest.raises(ConfigError, match=why):
        check_url(url)
    assert check_url("http://[::1]:8080/hook") == "http://[::1]:8080/hook"


def test_the_summary_says_where_the_results_are(tmp_path: Path) -> None:
    body = summary(
        {"name": "cup", "format": "knockout", "complete": True, "games_played": 8},
        [{"rank": 1, "bot": "a", "games": 4, "score": 4, "elo": 100, "wins": 4}],
        {"knockout": {"champion": "a"}},
        tmp_path,
    )
    assert body["champion"] == "a" and body["standings"][0] == {
        "rank": 1, "bot": "a", "games": 4, "score": 4, "elo": 100
    }  # fmt: skip
    assert body["results"] == str(tmp_path.resolve() / "results.json")


def test_grade_refuses_a_bad_notify_url_and_summarises_grades(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from tacocat_arena.cli.main import main
    from tacocat_arena.tournament.notify import grades_summary

    refused = CliRunner().invoke(main, ["grade", "--batch", str(tmp_path), "--notify", "file:///x"])
    assert refused.exit_code != 0 and "must be an http:// or https:// URL" in refused.output
    grades = [{"student": "ada", "points": 60.0, "max_points": 70.0, "rubric": "course", "x": 1}]
    body = grades_summary(grades, tmp_path / "grades.csv", tmp_path / "class.html")
    assert body["students"] == [{"student": "ada", "points": 60.0, "max_points": 70.0}]
    assert body["event"] == "grade: course" and body["results"].endswith("grades.csv")
