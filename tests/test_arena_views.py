"""What the arena's pages show of a live game, in-process: the decision pending with its
clock, public names only (a twin instance ``NAME~B`` is ``NAME``), and the live page's data.

The browser tests (tests/test_arena_board.py) check the same against a real server; these
pin the plain data in milliseconds.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tacocat_arena.arena.failures import game_failures
from tacocat_arena.arena.ladder import LiveGame
from tacocat_arena.arena.names import public_name, public_record, public_text
from tacocat_arena.arena.store import StoredGame
from tacocat_arena.engine import DEFAULT_RULESET, DecisionKind, Game, Termination
from tacocat_arena.referee import PendingDecision
from tacocat_arena.report import render_live
from tacocat_arena.stats.tables import GameResult
from tacocat_arena.tournament.runner import TWIN_SUFFIX
from tacocat_arena.web import views

GOLDEN = Path(__file__).resolve().parent / "golden"


def _live(seats: tuple[str, str] = ("alice@v1" + TWIN_SUFFIX, "ben")) -> LiveGame:
    live = LiveGame("L000003b", seats, "ladder", 1000.0)
    live.game = Game(DEFAULT_RULESET, 7)
    return live


def test_the_pending_decision_names_its_seat_public_bot_kind_and_deadline() -> None:
    live = _live()
    seat = min(live.game.pending)
    live.pending = (PendingDecision(seat, DecisionKind.REPLACE, 1000.25, 2000, 500.0, 1002.75),)
    state = views.spectator_state(live)
    assert state["seats"] == ["alice@v1", "ben"]
    assert state["pending"] == [
        {
            "seat": seat,
            "bot": ("alice@v1", "ben")[seat],
            "kind": "replace",
            "asked_at": 1000.25,
            "deadline_at": 1002.75,
            "allowance_ms": 2000,
            "bank_left_ms": 500,
        }
    ]
    # No clock: no deadline.
    live.pending = (PendingDecision(1, DecisionKind.DUEL, 5.0, 0, 0.0, None),)
    assert views.pending_decisions(live)[0]["deadline_at"] is None
    # Nothing pending once the engine has an outcome (the record tells the rest).
    live.game.forfeit(0, Termination.FORFEIT_TIMEOUT, "test")
    assert views.spectator_state(live)["pending"] == []


def test_no_twin_name_in_a_live_games_summary_frames_or_page() -> None:
    live = _live()
    assert views.live_summary(live)["seats"] == ["alice@v1", "ben"]
    frames = views.live_frames(live)
    assert frames and not any(TWIN_SUFFIX in line for f in frames for line in f.text)
    html = render_live(
        frames,
        views.live_seats(live),
        live.game.ruleset,
        game_id=live.game_id,
        stream=f"/games/{live.game_id}/events",
        back=("/", "the arena's leaderboard"),
        pending=views.pending_decisions(live),
    )
    assert TWIN_SUFFIX not in html
    assert "alice@v1's hand" in html
    data = json.loads(
        re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', html, re.S)[1]
    )
    assert data["server_now"] > 0 and data["stream"] == "/games/L000003b/events"


def test_public_names_and_texts() -> None:
    assert public_name("alice@v1~B") == "alice@v1"
    assert public_name("alice") == "alice"
    detail = "alice@v1~B (seat 1): no answer to request 9 (attack) within 2000 ms"
    assert public_text(detail, ["ben", "alice@v1"]) == detail.replace("~B", "")
    # Only the seats' own twins: other text is left as it is.
    assert public_text("x~B", ["ben"]) == "x~B"


def test_a_records_texts_name_the_bots_and_the_stored_record_is_untouched() -> None:
    record = {
        "players": ["ben", "alice@v1"],
        "events": [{"type": "forfeit", "detail": "alice@v1~B (seat 1): bot 'alice@v1~B' left"}],
        "seed": 3,
    }
    shown = public_record(record, ["ben", "alice@v1"])
    assert shown["events"][0]["detail"] == "alice@v1 (seat 1): bot 'alice@v1' left"
    assert shown["seed"] == 3 and shown["players"] == ["ben", "alice@v1"]
    assert "~B" in record["events"][0]["detail"]


def test_a_players_failure_names_its_bot_not_the_twin_that_failed() -> None:
    """The owner's page (``arena.failures``) shows a forfeit's detail with public names, as
    every other page does: the twin that crashed (``greedy~B``) is ``greedy``."""
    record = json.loads((GOLDEN / "forfeit-crash.json").read_text())
    detail = "greedy~B (seat 0): bot 'greedy~B' disconnected: its stream ended"
    for entry in record["actions"] + record["events"]:  # the record re-verifies: both
        if "forfeit" in (entry.get("type"), *entry):
            entry["detail"] = detail
    result = GameResult("L000002b", ("greedy", "random"), 1, 1, Termination.FORFEIT_CRASH, 1,
                        (1, 1), (0.0, 0.0), forfeit_by=0)  # fmt: skip
    stored = StoredGame(2, result, "ladder", 1, "", "2026-12-01T00:00:00Z")
    (failure,) = game_failures(record, stored, "greedy", 1000)
    assert failure["detail"] == "greedy (seat 0): bot 'greedy' disconnected: its stream ended"
    assert TWIN_SUFFIX not in json.dumps(failure)
