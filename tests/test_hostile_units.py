"""In process, the refusals the hostile tests (tests/test_hostile_*.py) found missing: a
reference of any JSON type, a page's write from another origin or to a rebound Host."""

from __future__ import annotations

from pathlib import Path

import pytest

from tacocat_arena.arena.analyses import AnalysisRefused, parse_reference
from tacocat_arena.human.challenges import HISTORY_ROWS, Challenges
from tacocat_arena.human.page import SameOrigin
from tacocat_arena.referee.untrusted import printable


@pytest.mark.parametrize("spec", [5, 1.5, True, ["ismcts"], {"iterations": 9}])
def test_a_reference_that_is_no_text_is_refused_with_400(spec: object) -> None:
    with pytest.raises(AnalysisRefused, match="a reference is a text") as refused:
        parse_reference(spec)
    assert refused.value.status == 400


def _scope(method: str, **headers: str) -> dict[str, object]:
    pairs = [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()]
    return {"type": "http", "method": method, "headers": pairs}


def test_the_local_page_answers_its_own_host_and_takes_writes_from_its_own_origin() -> None:
    guard = SameOrigin(None, ("127.0.0.1:8123", "localhost:8123"))
    own = "http://127.0.0.1:8123"
    assert guard.refusal(_scope("GET", host="127.0.0.1:8123")) == ""
    local = _scope("POST", host="LOCALHOST:8123", origin="http://localhost:8123")
    assert guard.refusal(local) == ""
    assert guard.refusal(_scope("POST", host="127.0.0.1:8123", origin=own)) == ""
    assert guard.refusal(_scope("POST", host="127.0.0.1:8123", sec_fetch_site="same-origin")) == ""
    assert guard.refusal(_scope("POST", host="127.0.0.1:8123")) == ""  # no browser's
    for refused in (
        _scope("GET", host="evil.example:8123"),
        _scope("GET"),
        _scope("POST", host="127.0.0.1:8123", origin="http://evil.example"),
        _scope("POST", host="127.0.0.1:8123", origin="null"),
        _scope("POST", host="127.0.0.1:8123", origin="http://127.0.0.1:8124"),
        _scope("POST", host="127.0.0.1:8123", sec_fetch_site="cross-site"),
        _scope("POST", host="127.0.0.1:8123", sec_fetch_site="same-site"),
    ):
        assert guard.refusal(refused), refused


def test_a_strangers_text_is_shown_as_escapes_and_cut() -> None:
    assert (
        printable("bot\x1b[2J\nINFO forged\x07\u2028 é")
        == "bot\\x1b[2J\\nINFO forged\\x07\\u2028 é"
    )
    assert printable("x" * 500, 10) == "x" * 10 + "…"
    assert printable("plain text, 'quoted'") == "plain text, 'quoted'"


def test_a_players_history_of_games_by_hand_is_its_last_rows(tmp_path: Path) -> None:
    """A player whose script plays game after game made its public page and
    /api/human/games?player= list every one of them (the all-players list was capped)."""
    challenges = Challenges(tmp_path, bot_move_timeout_s=1.0)
    rows = [("ann", "random", "", 0.0)] * (HISTORY_ROWS + 50) + [("bob", "greedy", "", 0.0)]
    challenges.db.execute("BEGIN")  # one transaction: the table's connection autocommits
    challenges.db.executemany(
        "INSERT INTO human_games (player, opponent, folder, started_at) VALUES (?, ?, ?, ?)", rows
    )
    challenges.db.execute("COMMIT")
    mine = challenges.history("ann")
    assert len(mine) == HISTORY_ROWS and mine[0]["number"] == HISTORY_ROWS + 50
    assert [r["player"] for r in challenges.history("bob")] == ["bob"]
    assert len(challenges.history()) == HISTORY_ROWS


@pytest.mark.parametrize(
    ("args", "refused"),
    [
        (["human", "random", "--sprt", "0,5"], "play human takes no --sprt"),
        (["human", "random", "--games", "4", "-q"], "play human takes no --games, --quiet"),
        (["human", "random", "--resume"], "play human takes no --resume"),
        (["random", "greedy", "--pair"], "--pair: only when A is human"),
        (["random", "greedy", "--human-move-timeout", "3"], "--human-move-timeout: only when"),
    ],
)
def test_an_option_play_would_ignore_is_refused(args: list[str], refused: str) -> None:
    """Each was dropped silently (a person's --resume did not resume, --sprt tested nothing)."""
    from click.testing import CliRunner

    from tacocat_arena.cli.main import main

    done = CliRunner().invoke(main, ["play", *args])
    assert done.exit_code == 2 and refused in done.output, done.output


@pytest.mark.parametrize(
    ("name", "refused"),
    [
        ("ladder", "the ladder's own name"),  # its games were taken for the ladder's
        ("a/b", "without / ? # %"),  # its page /event/a/b was no route
        ("a\nb", "printable text"),
        (" ", "printable text"),
    ],
)
def test_an_event_name_that_breaks_its_page_or_the_ladder_is_refused(
    name: str, refused: str
) -> None:
    """serve --event refuses it before the arena starts (cli/serve.py); in process here, as
    a serve that took it would run on."""
    from tacocat_arena.arena.events import event_name_problem

    assert refused in event_name_problem(name)
    assert event_name_problem("cup") == event_name_problem("spring cup 2026") == ""
