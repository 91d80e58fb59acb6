"""A person's game in the arena (docs/human-seat.md, "In the arena"): a registered player
challenges ``random`` with its token over real HTTP to a real ``serve`` process, plays the
game to its end through the page's own routes (its event stream read, its answers POSTed as
the page's script does), and the game is in the people's history, unrated, its folder
verified; the ladder holds no game of it, and the stream never held the bot's hand."""

from __future__ import annotations

import http.client
import json
import shutil
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from arena_support import add_players, post_json, start_arena
from human_support import first_legal_answer, hidden_card_leaks
from process_support import start_process

pytestmark = pytest.mark.slow


def _play(web: str, page: str, per_game: dict[int, bytes] | None = None) -> bytes:
    """Read the page's stream and answer each request until the match is over; every byte
    the stream sent."""
    parts = urlsplit(web)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
    connection.request("GET", page + "events")
    response = connection.getresponse()
    assert response.status == 200
    sent = b""
    answered: set[int] = set()
    twins: list[tuple[int, dict[str, Any]]] = []  # the twin game accepted once offered
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        line = response.fp.readline()
        if not line:
            break
        sent += line
        if not line.startswith(b"data: "):
            continue
        state = json.loads(line[6:])
        if per_game is not None:  # each game's states apart: the twin game deals the same
            per_game[state["game"]] = per_game.get(state["game"], b"") + line
        if state["finished"]:
            break
        if state["twin"] == "offered" and not twins:
            twins.append(post_json(web, page + "twin", {"accept": True}))
            assert twins[0][0] == 200, twins
        request = state["request"]
        if request is not None and request["id"] not in answered:
            answered.add(request["id"])
            status, reply = post_json(
                web,
                page + "action",
                {"request_id": request["id"], "action": first_legal_answer(request["legal"])},
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
        assert post_json(web, "/api/human/challenges", {"opponent": "random"})[0] == 401
        status, refused = post_json(
            web, "/api/human/challenges", {"opponent": "rm -rf"}, tokens["bob"]
        )
        assert status == 409 and "not a bot you may challenge" in refused["error"]
        bad = {"opponent": "random", "pair": "yes"}
        assert post_json(web, "/api/human/challenges", bad, tokens["alice"])[0] == 400
        status, started = post_json(
            web, "/api/human/challenges", {"opponent": "random", "pair": True}, tokens["alice"]
        )
        assert status == 201 and started["pair"] is True, started
        again = post_json(web, "/api/human/challenges", {"opponent": "greedy"}, tokens["alice"])
        assert again[0] == 409 and "in play already" in again[1]["error"]
        assert arena.status("/human/not-a-key/") == 404
        assert b"Your hand" in arena.get(started["url"])
        per_game: dict[int, bytes] = {}
        sent = _play(web, started["url"], per_game)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            (game,) = arena.json("/api/human/games?player=alice")["games"]
            if game["result"]:
                break
            time.sleep(0.2)
        assert game["opponent"] == "random" and game["result"] in ("win", "loss", "draw")
        # The twin game (same deal, seats swapped) was offered, accepted and played.
        assert game["games"] == 2 and game["twin_result"] in ("win", "loss", "draw"), game
        points = {"win": 1.0, "draw": 0.5, "loss": 0.0}
        assert game["pair_points"] == points[game["result"]] + points[game["twin_result"]]
        assert game["reason"] in ("goal", "round_cap"), game
        assert arena.json("/api/human/games?player=bob")["games"] == []
        assert b"Played by hand" in arena.get("/players/alice")  # in the player's history
        assert b"Played by hand" not in arena.get("/players/bob")
        assert arena.json("/api/games") == []  # nothing of it on the ladder
    finally:
        arena.stop()
    out = folder / "human" / str(started["game"])
    lines = (out / "games.jsonl").read_text().splitlines()
    assert len(lines) == 2 and {1, 2} <= set(per_game)  # 0: before the first game
    for index, line in enumerate(lines, 1):  # each game's bytes against its own deal
        record = json.loads(line)["record"]
        leaks = hidden_card_leaks(per_game[index], record, record["players"].index("alice"))
        assert not leaks, f"game {index}: {leaks}"
    assert b'"hands"' not in sent and b'"draw_pile"' not in sent
    verified = start_process(
        [sys.executable, "-m", "tacocat_arena.cli", "verify", str(out)],
        name="verify",
        log_dir=tmp_path,
    )
    assert verified.wait(120) == 0, verified.output()


GREEDY_PACKAGE = Path(__file__).resolve().parent.parent / "example_bots/packages/python-greedy"


def _post_raw(web: str, path: str, body: bytes, headers: dict[str, str]) -> int:
    request = urllib.request.Request(web + path, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="hosted versions run under bwrap")
def test_a_friend_plays_a_hosted_version_and_its_owner_opts_it_out(tmp_path: Path) -> None:
    """bob plays alice's hosted version (started in the hosted wing's sandbox) without its
    code; a cross-origin answer is refused; alice (only alice) opts it out, and a challenge
    of it is then refused saying so; ``verify DIR`` checks DIR/human/ and catches a row
    that disagrees with its game's record."""
    folder = tmp_path / "arena"
    tokens = add_players(folder, "alice", "bob", "carol")
    # One referee slot: a person's game against a version holds it until the game ends.
    arena = start_arena(folder, "--move-timeout", "5", "--workers", "1", "--concurrency", "1")
    try:
        web = arena.web
        done = subprocess.run(
            [sys.executable, "-m", "tacocat_arena.cli", "submit", str(GREEDY_PACKAGE),
             "--arena", web, "--token", tokens["alice"], "--wait", "--timeout", "150"],
            cwd=tmp_path, capture_output=True, text=True, timeout=200,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert "alice@v1" in arena.json("/api/human/games")["opponents"]
        status, refused = post_json(
            web, "/api/human/challenges", {"opponent": "bob@v9"}, tokens["bob"]
        )
        assert status == 409 and "no hosted version playing" in refused["error"]
        status, started = post_json(
            web, "/api/human/challenges", {"opponent": "alice@v1"}, tokens["bob"]
        )
        assert status == 201, started
        page = started["url"]
        answer = json.dumps({"request_id": 1, "action": {"kind": "replace", "cards": []}})
        for hostile in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}):
            headers = {"Content-Type": "text/plain", **hostile}
            assert _post_raw(web, page + "action", answer.encode(), headers) == 403
            assert _post_raw(web, page + "twin", b"{}", headers) == 403
        full = post_json(web, "/api/human/challenges", {"opponent": "alice@v1"}, tokens["carol"])
        assert full[0] == 409 and "referee slots are all in use" in full[1]["error"]
        for player, key in (("bob", page), ("carol", "")):
            if not key:  # bob's game over: its slot is free again
                status, started = post_json(
                    web, "/api/human/challenges", {"opponent": "alice@v1"}, tokens[player]
                )
                assert status == 201, started
                key = started["url"]
            _play(web, key)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                (game,) = arena.json(f"/api/human/games?player={player}")["games"]
                if game["result"]:
                    break
                time.sleep(0.2)
            assert game["opponent"] == "alice@v1" and game["result"] in ("win", "loss", "draw")
            assert game["reason"] in ("goal", "round_cap"), game  # the version played it out
        assert arena.json("/api/games") == []  # unrated: nothing on the ladder

        opt_out = "/api/human/versions/alice/1"
        assert post_json(web, opt_out, {"challenges": False})[0] == 401
        assert post_json(web, opt_out, {"challenges": False}, tokens["bob"])[0] == 403
        assert post_json(web, opt_out, {"challenges": "no"}, tokens["alice"])[0] == 400
        assert (
            post_json(web, "/api/human/versions/alice/7", {"challenges": False}, tokens["alice"])[0]
            == 404
        )
        status, reply = post_json(web, opt_out, {"challenges": False}, tokens["alice"])
        assert status == 200 and reply == {"bot": "alice@v1", "challenges": False}
        assert "alice@v1" not in arena.json("/api/human/games")["opponents"]
        assert b"Let people play v1" in arena.get("/players/alice")
        status, refused = post_json(
            web, "/api/human/challenges", {"opponent": "alice@v1"}, tokens["bob"]
        )
        assert status == 409 and "opted it out" in refused["error"]
        assert post_json(web, opt_out, {"challenges": True}, tokens["alice"])[0] == 200
        assert b"Opt v1 out of games against people" in arena.get("/players/alice")
    finally:
        arena.stop()
    command = [sys.executable, "-m", "tacocat_arena.cli", "verify", str(folder)]
    verified = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "2 game(s) played by hand" in verified.stdout
    with sqlite3.connect(folder / "human" / "games.sqlite") as db:
        db.execute("UPDATE human_games SET rounds = rounds + 1 WHERE number = 1")
    verified = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert verified.returncode == 1 and "human/1 H1" in verified.stdout + verified.stderr


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="hosted versions run under bwrap")
def test_an_owner_opts_a_version_out_by_its_button_in_chromium(
    tmp_path: Path,
    browser_page: Any,
) -> None:
    """The player's page's button (with the owner's token typed in) opts the version out;
    the challenge form no longer offers it, and the button then lets people play it again."""
    folder = tmp_path / "arena"
    tokens = add_players(folder, "alice")
    arena = start_arena(folder, "--move-timeout", "5", "--workers", "1")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tacocat_arena.cli", "submit", str(GREEDY_PACKAGE),
             "--arena", arena.web, "--token", tokens["alice"], "--wait", "--timeout", "150"],
            cwd=tmp_path, capture_output=True, text=True, timeout=200,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        page = browser_page.page
        page.goto(arena.web + "/human/")
        page.wait_for_selector("#opponent option[value='alice@v1']", state="attached")
        page.goto(arena.web + "/players/alice")
        page.fill("#upload-token", tokens["alice"])
        page.click("button[data-challenges='false']")
        page.wait_for_selector("text=Let people play v1", timeout=30_000)  # reloaded
        assert "alice@v1" not in arena.json("/api/human/games")["opponents"]
        page.goto(arena.web + "/human/")
        page.wait_for_selector("#opponent option[value='greedy']", state="attached")
        assert page.query_selector("#opponent option[value='alice@v1']") is None
        page.goto(arena.web + "/players/alice")
        page.fill("#upload-token", tokens["alice"])
        page.click("button[data-challenges='true']")
        page.wait_for_selector("text=Opt v1 out of games against people", timeout=30_000)
        assert "alice@v1" in arena.json("/api/human/games")["opponents"]
        browser_page.assert_clean()
    finally:
        arena.stop()
