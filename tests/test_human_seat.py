"""A person's seat for real (docs/human-seat.md): Chromium clicking through a whole game
against ``builtin:random``'s process, over the real referee on loopback.

The first test plays ``human.local.play_human`` in a thread of this process, so that every
body byte the page sent is tapped (``page.Tap``) and scanned for the opponent's hands and the
draw pile, and each request's view compared with what ``build_view`` gives the seat; the
second runs ``tacocat-arena play human`` as a process, opens its page and leaves: the person
loses by the clock and the bot's process is gone.  ``TACOCAT_HUMAN_SCREENSHOTS=DIR`` keeps the
first test's screenshots (docs/human-seat-1280.png and -375.png are made so).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from a11y_support import axe_skip_reason_or_source, serious_violations
from browser_support import watch_page
from human_support import hidden_card_leaks, views_at_own_decisions
from process_support import descendants, describe, python_command, start_process, state_of

from tacocat_arena.human.local import human_config, play_human
from tacocat_arena.report.verify_tables import verify_run_folder
from tacocat_arena.tournament.config import load_config

pytestmark = pytest.mark.slow


def _config(out: Path, human_s: float) -> Any:
    config = load_config(
        None,
        {"games_per_pairing": 2, "seed": 5, "move_timeout_s": 5.0, "out": out},
        ["human=", "random=builtin:random"],
        external_ok=True,
    )
    return human_config(config, "human", human_s)


class Match(threading.Thread):
    """``play_human`` on a loop of its own; ``url`` once the page listens."""

    def __init__(self, out: Path, human_s: float, tap: list[bytes]) -> None:
        super().__init__(daemon=True)
        self.config = _config(out, human_s)
        self.tap = tap
        self.url = ""
        self.listening = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        def on_url(url: str) -> None:
            self.url = url
            self.listening.set()

        try:
            self.result = asyncio.run(
                play_human(self.config, pair=True, on_url=on_url, tap=self.tap, linger_s=3.0)
            )
        except BaseException as error:  # re-raised by the test
            self.error = error
            self.listening.set()


def _turn(page: Any) -> str:
    """The turn line once it is the person's turn, the twin game's offer or the end."""
    handle = page.wait_for_function(
        """() => {
            const text = document.getElementById('turn').textContent;
            return /^(Your turn|The match is over|The game is over: play the twin)/.test(text)
              ? text : false;
        }""",
        timeout=120_000,
    )
    return str(handle.json_value())


def _play_one_decision(page: Any, kind: str) -> None:
    """Click a legal answer: the first playable card (or keep the hand), each defence's
    first option that is free, then Play."""
    if kind == "defend":
        for index in range(page.locator(".defend-row").count()):  # each click redraws them
            row = page.locator(".defend-row").nth(index)
            row.locator("button[aria-disabled='false']").first.click()
    elif kind != "replace":
        page.locator("#hand button[aria-disabled='false']").first.click()
    page.locator("#play:not([disabled])").click()


def _post(page: Any, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    answer = page.evaluate(
        """async (body) => {
            const r = await fetch("action", {method: "POST",
              headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
            return [r.status, await r.json()];
        }""",
        body,
    )
    return answer[0], answer[1]


def _states(tap: list[bytes]) -> list[dict[str, Any]]:
    text = b"".join(tap).decode()
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: {")]


def test_a_person_plays_a_duplicate_pair_by_clicking_and_sees_only_their_own_view(
    browser: Any, tmp_path: Path
) -> None:
    before = descendants()
    tap: list[bytes] = []
    match = Match(tmp_path / "out", 90.0, tap)
    match.start()
    assert match.listening.wait(120), "the page never listened"
    if match.error is not None:
        raise match.error
    # bypass_csp: the audit injects axe-core as a script, which the page's CSP forbids.
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    page = context.new_page()
    watch = watch_page(page)
    page.goto(match.url)
    bot_processes: set[int] = set()
    decisions = 0
    refused: list[tuple[int, dict[str, Any]]] = []
    shots = os.environ.get("TACOCAT_HUMAN_SCREENSHOTS")
    reason, source = axe_skip_reason_or_source()
    axe = source if reason is None else None  # the audit where axe-core can be had
    audited = False
    keyboard = None
    while True:
        turn = _turn(page)
        if turn.startswith("The match is over"):
            break
        if "twin" in turn:
            page.locator("#twin-yes").click()
            page.wait_for_function("() => state.twin !== 'offered'")
            continue
        kind = re.match(r"Your turn: (\w+)", turn)[1]  # type: ignore[index]
        bot_processes |= {p for p in descendants() - before if "chrom" not in describe(p)}
        if kind == "attack" and not audited:  # each width: a screenshot, the audit
            audited = True
            for width, height in ((1280, 900), (375, 800)):
                page.set_viewport_size({"width": width, "height": height})
                if shots:
                    page.screenshot(
                        path=str(Path(shots) / f"human-seat-{width}.png"), full_page=True
                    )
                if axe is not None:
                    found = serious_violations(page, axe)
                    assert not found, f"at {width} px:\n" + "\n".join(found)
            page.set_viewport_size({"width": 1280, "height": 900})
        request_id = page.evaluate("() => state.request.id")
        if kind == "duel" and not keyboard:
            # By keyboard alone: the request put the focus on the hand; the next card, Enter
            # to choose it, Tab to the Play button, Enter.
            keyboard = page.evaluate("() => state.view.hand[1]")
            with page.expect_response(lambda r: r.url.endswith("/action")) as answered:
                for key in ("ArrowRight", "Enter", "Tab", "Enter"):
                    page.keyboard.press(key)
            assert answered.value.json() == {"played": f"duel {keyboard}"}
        else:
            _play_one_decision(page, kind)
        decisions += 1
        page.wait_for_function(f"() => !state.request || state.request.id !== {request_id}")
        if decisions == 2:  # the same answer again, then one to a request never open
            refused.append(_post(page, {"request_id": request_id, "action": {"kind": kind}}))
            refused.append(_post(page, {"request_id": 10**6, "action": {"kind": kind}}))
    match.join(60)
    assert not match.is_alive() and match.error is None, match.error
    context.close()
    # The two refused POSTs are the browser's only complaints (it logs every 409).
    assert [e for e in watch.console_errors if "409" not in e] == [], watch.problems()
    assert not watch.page_errors and not watch.network_requests, watch.problems()

    first, twin = match.result.results  # both played to their end, seats swapped
    assert {first.reason.value, twin.reason.value} <= {"goal", "round_cap"}, match.result
    assert first.seats == tuple(reversed(twin.seats)) and first.seed == twin.seed
    assert match.result.pair_points is not None
    assert decisions >= 6 and audited and keyboard is not None
    assert [status for status, _ in refused] == [409, 409]
    assert "already answered" in refused[0][1]["error"]
    assert "not the open one" in refused[1][1]["error"]
    assert bot_processes and all(state_of(pid) in ("", "Z") for pid in bot_processes)

    out = tmp_path / "out"
    verification = verify_run_folder(out)  # both games, the plan, the tables
    assert verification.ok, verification
    records = [json.loads(line)["record"] for line in (out / "games.jsonl").read_text().split()]
    # What each game's states sent, and the rest (the page, its script, the POSTs' answers).
    by_game: dict[int, list[bytes]] = {1: [], 2: []}
    other = b""
    for chunk in tap:
        if chunk.startswith(b"event: state\ndata: "):
            by_game[max(1, json.loads(chunk.split(b"data: ", 1)[1])["game"])].append(chunk)
        else:
            other += chunk
    for number, chunks in by_game.items():
        # The game's record is the one where the person sat where that game's states say.
        (seat,) = {s["seat"] for s in _states(chunks) if s["seat"] is not None}
        (record,) = [r for r in records if r["players"].index("human") == seat]
        assert record["referee"]["seat_decision_ms"][seat] == 90_000
        assert record["referee"]["seat_decision_ms"][1 - seat] == 5_000
        assert not hidden_card_leaks(b"".join(by_game[number]) + other, record, seat)
        # Each attack and defence the page was asked: exactly the seat's own view, no more.
        asked = {}
        for state in _states(by_game[number]):
            if state["request"] and state["request"]["kind"] in ("attack", "defend"):
                asked[state["request"]["id"]] = state["view"]
        expected = views_at_own_decisions(record, seat)
        differ = [
            (index, key, got[key], want[key])
            for index, (got, want) in enumerate(zip(asked.values(), expected, strict=False))
            for key in want
            if got.get(key) != want[key]
        ]
        assert len(asked) == len(expected) and not differ, (number, differ[:3])


def test_a_person_who_leaves_loses_by_the_clock_and_the_bot_process_is_stopped(
    browser: Any, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    cli = start_process(
        python_command(
            "-m", "tacocat_arena.cli", "play", "human", "builtin:random", "--no-browser",
            "--human-move-timeout", "4", "--out", str(out),
        ),
        name="play-human",
        log_dir=tmp_path,
        ready=r"Play in your browser: (http://127\.0\.0\.1:\d+/\S+/)",
    )  # fmt: skip
    url = re.search(r"Play in your browser: (\S+)", cli.output())[1]  # type: ignore[index]
    context = browser.new_context(viewport={"width": 375, "height": 800})
    page = context.new_page()
    page.goto(url)
    page.wait_for_function(
        "() => /Your turn|turn…/.test(document.getElementById('turn').textContent)",
        timeout=60_000,
    )
    bots = descendants(cli.pid)
    context.close()  # the person leaves
    assert cli.wait(120) == 0, cli.output()
    assert bots and all(state_of(pid) in ("", "Z") for pid in bots), "the bot outlived its match"
    line = json.loads((out / "games.jsonl").read_text().splitlines()[0])
    assert line["reason"] == "timeout" and line["seats"][1 - line["winner"]] == "human"
    assert "you lost by timeout" in cli.output()
    verified = start_process(
        python_command("-m", "tacocat_arena.cli", "verify", str(out)),
        name="verify",
        log_dir=tmp_path,
    )
    assert verified.wait(120) == 0, verified.output()
