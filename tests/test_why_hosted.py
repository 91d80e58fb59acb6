"""Issue 39's done-when, with a hosted version: a newcomer's package that crashes on one request
kind (a defence against a connected bot: the gate's opponents are other versions, so it
passes the gate) plays on a real arena; over real HTTP its player's token (and the
organizer's, nobody else's) reads the game, the request it died on and its stderr **of that
game**; ``replay --bot`` on the game downloaded from the arena reproduces the crash with a real
process and the fixed build answers that request.  Its batches against another hosted
version (two games at once on one process) are attributed to the games in flight, the
overlaps named."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import arena_support
import pytest
from arena_support import add_players, post_json, start_bot, submitted, wait_until
from browser_support import PageWatch, browser, browser_page  # noqa: F401 (fixtures)

from tacocat_arena.launch.sandbox import bwrap_path

REPO = Path(__file__).resolve().parents[1]
GREEDY = REPO / "example_bots" / "packages" / "python-greedy"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap (bwrap) cannot sandbox here"),
]

#: The newcomer's bot: greedy, saying which game it is in, dying on a defence against the
#: connected bot alice (``fixed`` on its command line: the next build, which defends).
NEWCOMER = """\
import os, sys
from example_bots.greedy_bot import GreedyBot
from tacocat_bot import run

class Newcomer(GreedyBot):
    name = "newcomer"

    def on_game_start(self, game_id, seat, opponent):
        self.opponent = opponent
        print(f"newcomer in game {game_id} against {opponent}", file=sys.stderr, flush=True)

    def defend(self, view):
        if self.opponent == "alice" and "fixed" not in sys.argv[1:]:
            print("<img src='http://198.51.100.7/x.png'> is text", file=sys.stderr, flush=True)
            print("IndexError: my defence table is empty", file=sys.stderr, flush=True)
            os._exit(3)
        return super().defend(view)

run(Newcomer())
"""


def get(web: str, path: str, token: str | None) -> tuple[int, bytes]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    request = urllib.request.Request(web + path, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def get_json(web: str, path: str, token: str | None) -> tuple[int, Any]:
    status, body = get(web, path, token)
    return status, json.loads(body)


def replay(game: str, command: str, token: str, cwd: Path) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "tacocat_arena.cli", "replay", game, "--bot", command,
         "--seat", "newt", "--json"],
        cwd=cwd, capture_output=True, text=True, timeout=180,
        env={**os.environ, "TACOCAT_ARENA_TOKEN": token},
    )  # fmt: skip
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def test_a_hosted_crash_shows_its_game_request_and_stderr_to_its_owner_and_replays(
    tmp_path: Path,
    browser_page: PageWatch,  # noqa: F811 (the fixture)
) -> None:
    folder = tmp_path / "arena"
    tokens = add_players(folder, "alice", "newt")
    arena = arena_support.start_arena(folder, "--move-timeout", "5", "--workers", "1")
    organizer = (folder / "organizer.token").read_text().strip()
    package = tmp_path / "newcomer"
    package.mkdir()
    (package / "bot.toml").write_text('command = "python bot.py"\n')
    (package / "bot.py").write_text(NEWCOMER)
    path = "/api/players/newt/failures"
    bot = None
    try:
        assert "newt v1: active" in submitted(package, arena, tokens["newt"], tmp_path)
        assert "alice v1: active" in submitted(GREEDY, arena, tokens["alice"], tmp_path)
        bot = start_bot("alice", tokens["alice"], arena.address, tmp_path, reconnect=False)

        def crashed_and_batched() -> dict[str, Any] | None:
            status, report = get_json(arena.web, path, tokens["newt"])
            assert status == 200, report
            crashes = [f for f in report["failures"] if f["kind"] == "defend" and f["output"]]
            batched = [g for g in report["game_output"] if "against alice@v1" in g["output"]]
            return report if crashes and batched else None

        report = wait_until(crashed_and_batched, 180, "newt's crash and a batch against alice@v1")
        # What follows reads games already played: the organizer pauses the ladder (games in
        # flight end, none starts), so the arena stops playing newt against alice (a process
        # a game) and against alice@v1 (a batch) for the rest of the test.
        assert post_json(arena.web, "/api/pause", {}, organizer) == (200, {"paused": True})
        failure = next(f for f in report["failures"] if f["kind"] == "defend" and f["output"])
        assert failure["bot"] == "newt@v1" and failure["failure"] == "forfeit"
        assert failure["request"]["kind"] == "DECISION_KIND_DEFEND"
        assert failure["request"]["game_id"] == failure["game"] and failure["request"]["legal"]
        output = failure["output"]
        # its stderr of that very game (one process per game against a connected bot: exact)
        assert output["game"] == failure["game"] and output["exact"]
        assert f"newcomer in game {failure['game']} against alice" in output["output"]
        assert "IndexError: my defence table is empty" in output["output"]
        assert "exited with code 3" in output["output"]
        assert output["cap_bytes"] == report["game_output_cap_bytes"] == 64 * 1024
        # Every game's output names only its own game, or the games it overlapped (a batch
        # plays two games at once on each process), which it then lists.
        for shown in report["game_output"]:
            named = set(re.findall(r"newcomer in game (\S+) against", shown["output"]))
            assert named <= {shown["game"], *shown["shared_with"]}, shown
            assert shown["exact"] == (not shown["shared_with"])
            assert str(folder) not in shown["output"]

        # Nobody else reads a byte of it.
        assert get(arena.web, path, None)[0] == 401
        for token in (tokens["alice"], "x" * 43, organizer[:-1] + "?"):
            status, body = get(arena.web, path, token)
            assert status == 404 and b"IndexError" not in body and b"newcomer" not in body
        status, seen = get_json(arena.web, path, organizer)
        assert status == 200 and any(f["game"] == failure["game"] for f in seen["failures"])

        # Its page shows them, once its token is typed in (the page itself holds none of it).
        status, html = get(arena.web, "/players/newt", None)
        assert status == 200 and b"IndexError" not in html and b"newcomer in game" not in html
        page = browser_page.page
        page.goto(f"{arena.web}/players/newt")
        page.fill("#owner-token", tokens["alice"])
        page.click("#owner-form button")
        page.wait_for_selector("#owner-status.fail", timeout=20_000)
        assert "not yours" in page.inner_text("#owner-status")
        assert page.locator(".failure").count() == 0
        page.fill("#owner-token", tokens["newt"])
        page.click("#owner-form button")
        shown = page.locator(f".failure[data-game='{failure['game']}']")
        shown.wait_for(timeout=20_000)
        text = shown.inner_text()
        assert "DECISION_KIND_DEFEND" in text and "IndexError: my defence table is empty" in text
        assert "exact" in text and "64 KiB" in text
        # what a bot prints is text on its page, never markup (no image fetched, no element)
        assert "<img src='http://198.51.100.7/x.png'> is text" in text
        assert page.locator("#owner-report img").count() == 0
        browser_page.screenshot(tmp_path / "owner.png", full_page=False)
        if os.environ.get("TACOCAT_SCREENSHOT_DIR"):  # docs/why-lose-owner.png is made so
            shown.evaluate("node => node.scrollIntoView()")
            page.screenshot(
                path=str(Path(os.environ["TACOCAT_SCREENSHOT_DIR"]) / "why-lose-owner.png")
            )
        # clean, but for Chromium's console line about alice's token's 404
        assert not browser_page.page_errors and not browser_page.network_requests
        assert all("404" in line for line in browser_page.console_errors)

        # Analysis on request of one of its finished games (a batch's, a whole game), with a
        # small reference: its owner's alone, one at a time, its progress then its marks.
        batch_game = next(g["game"] for g in report["game_output"] if "alice@v1" in g["output"])
        cheap = {"game": batch_game, "reference": "ismcts?iterations=1000&seeds=1"}
        analyses = "/api/players/newt/analyses"
        assert post_json(arena.web, analyses, cheap, None)[0] == 401
        assert post_json(arena.web, analyses, cheap, tokens["alice"])[0] == 404
        # alice played that game too, but not newt's seat of it; and no game is nobody's
        seats = get_json(arena.web, f"/api/games/{batch_game}", None)[1]["seats"]
        theirs = {**cheap, "seat": seats.index("newt@v1")}
        assert (
            post_json(arena.web, "/api/players/alice/analyses", theirs, tokens["alice"])[0] == 404
        )
        nothing = {**cheap, "game": "L999999a"}
        assert post_json(arena.web, analyses, nothing, tokens["newt"])[0] == 404
        huge = {**cheap, "reference": "ismcts?iterations=1000000&seeds=64"}
        assert post_json(arena.web, analyses, huge, tokens["newt"])[0] == 400
        status, job = post_json(arena.web, analyses, cheap, tokens["newt"])
        assert status == 202 and job["state"] in ("queued", "running"), job
        status, busy = post_json(arena.web, analyses, {"game": failure["game"]}, tokens["newt"])
        assert status == 429 and "one analysis at a time" in busy["error"]

        def analysed() -> dict[str, Any] | None:
            status, found = get_json(arena.web, analyses, tokens["newt"])
            assert status == 200
            (job,) = [a for a in found["analyses"] if a["game"] == batch_game]
            assert job["state"] != "failed", job
            return job if job["state"] == "done" else None

        job = wait_until(analysed, 240, "the analysis of a batch game")
        seat = job["seat"]
        assert job["result"]["seat"] == seat and job["result"]["decisions"]
        status, again = post_json(arena.web, analyses, cheap, tokens["newt"])
        assert status == 200 and again["state"] == "done"  # cached
        status, html = get(arena.web, f"/games/{batch_game}?analysis={seat}", None)
        assert status == 200 and b'id="analysis"' in html
        page.goto(f"{arena.web}/games/{batch_game}")
        assert page.is_visible("#analysis") and page.is_visible(".loss-graph")
        bars = page.locator(".loss-graph rect").count()
        assert bars == len(job["result"]["decisions"])
        assert "%" in page.text_content("#accuracy")
        page.click("#next")  # the replay still steps under the analysis
        assert "Step 2 of" in page.text_content("#step")
        if os.environ.get("TACOCAT_SCREENSHOT_DIR"):
            page.screenshot(
                path=str(Path(os.environ["TACOCAT_SCREENSHOT_DIR"]) / "why-lose-arena.png")
            )
        page.goto(f"{arena.web}/players/newt")
        page.fill("#owner-token", tokens["newt"])
        page.click("#owner-form button")
        page.locator(f"#analyses li.done[data-game='{batch_game}']").wait_for(timeout=20_000)
        assert page.locator(f"#analyses li[data-game='{batch_game}'] a").count() == 1
        assert not browser_page.page_errors and not browser_page.network_requests

        code, local = replay(
            f"{arena.web}/games/{failure['game']}", "python bot.py", tokens["newt"], package
        )
        code_fixed, fixed = replay(
            f"{arena.web}/games/{failure['game']}", "python bot.py fixed", tokens["newt"], package
        )
    finally:
        if bot is not None:
            bot.kill()
        arena.stop()
    assert code == 1 and local["exit_code"] == 3 and local["game"] == failure["game"]
    (gone,) = [d for d in local["decisions"] if d["verdict"] == "gone"]
    assert gone["index"] == failure["index"] and gone["kind"] == "defend"
    assert "IndexError: my defence table is empty" in json.dumps(local)
    assert code_fixed == 0
    (answered,) = [d for d in fixed["decisions"] if d["index"] == failure["index"]]
    assert answered["verdict"] == "different" and answered["answered"] == "forfeit"
