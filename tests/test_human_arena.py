"""A person's game in the arena (docs/human-seat.md, "In the arena"): a registered player
challenges ``random`` with its token over real HTTP to a real ``serve`` process, plays the
game to its end through the page's own routes (its event stream read, its answers POSTed as
the page's script does), and the game is in the people's history, unrated, its folder
verified; the ladder holds no game of it, and the stream never held the bot's hand."""

from __future__ import annotations

import http.client
import json
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from arena_support import add_players, start_arena
from process_support import start_process

pytestmark = pytest.mark.slow


def _post(web: str, path: str, body: Any, token: str = "") -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        web + path, data=json.dumps(body).encode(), method="POST", headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _answer(legal: dict[str, Any]) -> dict[str, Any]:
    """A legal answer from the options the page was sent."""
    kind = legal["kind"]
    if kind == "replace":
        return {"kind": kind, "cards": []}
    if kind == "duel":
        return {"kind": kind, "cards": [legal["duel_values"][0]]}
    if kind == "attack":
        return {"kind": kind, "cards": legal["attacks"][0]}
    return {"kind": kind, "answers": [None] * len(legal["defence"])}


def _play(web: str, page: str) -> bytes:
    """Read the page's stream and answer each request until the match is over; every byte
    the stream sent."""
    parts = urlsplit(web)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
    connection.request("GET", page + "events")
    response = connection.getresponse()
    assert response.status == 200
    sent = b""
    answered: set[int] = set()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        line = response.fp.readline()
        if not line:
            break
        sent += line
        if not line.startswith(b"data: "):
            continue
        state = json.loads(line[6:])
        if state["finished"]:
            break
        request = state["request"]
        if request is not None and request["id"] not in answered:
            answered.add(request["id"])
            status, reply = _post(
                web,
                page + "action",
                {"request_id": request["id"], "action": _answer(request["legal"])},
            )
            assert status == 200, reply
    connection.close()
    assert answered, "no request came"
    return sent


def test_a_player_challenges_a_builtin_and_plays_an_unrated_game_to_its_end(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "alice", "bob")
    arena = start_arena(folder, "--move-timeout", "5")
    try:
        web = arena.web
        assert _post(web, "/api/human/challenges", {"opponent": "random"})[0] == 401
        status, refused = _post(web, "/api/human/challenges", {"opponent": "rm -rf"}, tokens["bob"])
        assert status == 409 and "not a bot you may challenge" in refused["error"]
        status, started = _post(
            web, "/api/human/challenges", {"opponent": "random"}, tokens["alice"]
        )
        assert status == 201, started
        again = _post(web, "/api/human/challenges", {"opponent": "greedy"}, tokens["alice"])
        assert again[0] == 409 and "in play already" in again[1]["error"]
        assert arena.status("/human/not-a-key/") == 404
        assert b"Your hand" in arena.get(started["url"])
        sent = _play(web, started["url"])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            (game,) = arena.json("/api/human/games?player=alice")["games"]
            if game["result"]:
                break
            time.sleep(0.2)
        assert game["opponent"] == "random" and game["result"] in ("win", "loss", "draw")
        assert game["reason"] in ("goal", "round_cap"), game
        assert arena.json("/api/human/games?player=bob")["games"] == []
        assert b"Played by hand" in arena.get("/players/alice")  # in the player's history
        assert b"Played by hand" not in arena.get("/players/bob")
        assert arena.json("/api/games") == []  # nothing of it on the ladder
    finally:
        arena.stop()
    out = folder / "human" / str(started["game"])
    record = json.loads((out / "games.jsonl").read_text().splitlines()[0])["record"]
    seat = record["players"].index("alice")
    # An opponent that replaced its whole dealt hand showed it face up: public, not a leak.
    shown = {
        (e["round"], tuple(e["discarded"]))
        for e in record["events"]
        if e["type"] == "replace" and e["seat"] == 1 - seat
    }
    for event in record["events"]:
        if (
            event["type"] == "deal"
            and (event["round"], tuple(event["hands"][1 - seat])) not in shown
        ):
            hand = json.dumps(event["hands"][1 - seat], separators=(",", ":")).encode()
            assert hand not in sent, f"round {event['round']}: the bot's hand reached the page"
    assert b'"hands"' not in sent and b'"draw_pile"' not in sent
    verified = start_process(
        [sys.executable, "-m", "tacocat_arena.cli", "verify", str(out)],
        name="verify",
        log_dir=tmp_path,
    )
    assert verified.wait(120) == 0, verified.output()
