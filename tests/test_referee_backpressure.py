"""One bad bot cannot stall the referee: back-pressure, bounded input, no hidden cards in what
the other seat reads, absent bots.

Every hostile client is its own process (tests/bots/hostile_bot.py, written from arena.proto
alone) talking real gRPC over 127.0.0.1; the referee runs in the test's event loop.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import arena_harness as h  # tests/bots (pytest pythonpath)
import grpc
import pytest
from google.protobuf.message import Message
from verify_support import assert_verifies  # tests/ (pytest pythonpath)

from tacocat.v1 import arena_pb2 as pb
from tacocat_arena.engine import DEFAULT_RULESET, Termination
from tacocat_arena.referee import (
    ClockSettings,
    GameReport,
    Referee,
    RefereeSettings,
    SessionLimits,
)

pytestmark = pytest.mark.slow

HOSTILE_BOT = h.BOTS_DIR / "hostile_bot.py"
TOKENS = {"a": "token-a", "b": "token-b", "c": "token-c"}
FINISHED = (Termination.GOAL, Termination.ROUND_CAP)


class Processes:
    """Hostile bot processes, killed on exit whatever happened."""

    def __init__(self, tmp_path: Path, port: int) -> None:
        self.tmp_path = tmp_path
        self.port = port
        self.started: list[subprocess.Popen[bytes]] = []

    def start(self, mode: str, name: str, *options: str) -> tuple[subprocess.Popen[bytes], Path]:
        record = self.tmp_path / f"{name}-{len(self.started)}.out"
        process = subprocess.Popen(
            [
                sys.executable,
                str(HOSTILE_BOT),
                mode,
                f"127.0.0.1:{self.port}",
                name,
                TOKENS[name],
                str(record),
                *options,
            ],
            stdin=subprocess.DEVNULL,
        )
        self.started.append(process)
        return process, record

    def close(self) -> None:
        for process in self.started:
            if process.poll() is None:
                process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(5)


@contextlib.contextmanager
def processes(tmp_path: Path, port: int) -> Iterator[Processes]:
    started = Processes(tmp_path, port)
    try:
        yield started
    finally:
        started.close()


def received(record: Path) -> list[pb.RefereeMessage]:
    """Every message a ``play`` bot received, batches unpacked."""
    messages = []
    for line in record.read_text().splitlines():
        envelope = pb.RefereeMessage.FromString(base64.b64decode(line))
        if envelope.HasField("batch"):
            messages.extend(envelope.batch.messages)
        else:
            messages.append(envelope)
    return messages


def strings_of(message: Message) -> Iterator[str]:
    """Every string field of a message, at any depth."""
    for _, value in message.ListFields():
        scalar = isinstance(value, str | bytes | int | float | Message)
        values = [value] if scalar else value  # a repeated field's container
        for item in values:
            if isinstance(item, Message):
                yield from strings_of(item)
            elif isinstance(item, str):
                yield item


def renderings(hand: tuple[int, ...]) -> list[str]:
    """The ways a hand is written in texts (engine messages, Python reprs)."""
    cards = list(hand)
    return [
        " ".join(map(str, cards)),
        ", ".join(map(str, cards)),
        repr(tuple(cards)),
        repr(cards),
    ]


async def play_games(
    referee: Referee, names: tuple[str, str], count: int, prefix: str
) -> list[GameReport]:
    """``count`` games between two connected bots, one after another."""
    reports = []
    for index in range(count):
        reports.append(
            await referee.play(f"{prefix}{index}", names, seed=index + 1, ruleset=DEFAULT_RULESET)
        )
    return reports


# ---------------------------------------------------------------------------------------------
# Writes never block a game
# ---------------------------------------------------------------------------------------------
def test_never_reading_bot_with_a_tiny_window_is_disconnected_at_its_write_deadline(
    tmp_path: Path,
) -> None:
    """c opens 32 games with a 1 KiB HTTP/2 window and never reads: the referee's writes to
    it stall, so it is disconnected after the write deadline and loses every open game as a
    disconnect that says why.  (That others play on meanwhile is the next test's.)"""
    deadline_s = 1.0
    settings = RefereeSettings(
        clock=ClockSettings(decision_ms=30_000),  # only the write deadline can end c's games
        limits=SessionLimits(write_deadline_s=deadline_s),
    )

    async def scenario() -> None:
        async with h.arena(settings, TOKENS) as (referee, port):
            with processes(tmp_path, port) as bots:
                bots.start("play", "a")
                never, _ = bots.start("never-read", "c", "--games", "32")
                for name in "ac":
                    await referee.wait_for_session(name, 20)
                stalled = [
                    asyncio.create_task(
                        referee.play(f"c{i}", ("c", "a"), seed=i + 1, ruleset=DEFAULT_RULESET)
                    )
                    for i in range(32)
                ]
                reports = await asyncio.gather(*stalled)
                for report in reports:
                    assert report.outcome.termination is Termination.FORFEIT_DISCONNECT, report
                    assert report.outcome.winner == 1, report
                    assert "took no message for 1 s" in report.detail, report.detail
                    assert "stopped reading" in report.detail
                # Disconnected by the write deadline (the detail says so; the decision clock
                # of 30 s would have made them timeouts), with no clock on this test's side.
                assert never.poll() is None, "c was disconnected by the referee, not by leaving"
                # gRPC cannot end a stream that is not read from this side: it stays open
                # until c goes, and meanwhile c may not open another (one per bot at most).
                again = h.RawClient(port)
                try:
                    await again.hello("c", TOKENS["c"])
                    refused = await again.rejected()
                    assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, refused
                    assert "stopped reading" in (refused.details() or "")
                finally:
                    await again.close()
                never.kill()
                await h.wait_until(lambda: "c" not in referee.stalled, 20, "c's stream to end")
                back = h.RawClient(port)
                try:
                    assert (await back.connect("c", TOKENS["c"])).bot_name == "c"
                finally:
                    await back.close()

    h.run_async(scenario(), 120)


def test_others_play_a_whole_game_while_a_write_to_a_bot_that_stopped_reading_is_stuck(
    tmp_path: Path,
) -> None:
    """c opens 32 games against a with a 1 KiB window and never reads, so the referee's
    write to c gets stuck; meanwhile a and b play a whole game, from its start to its end,
    with that same write to c still in flight: no game waits on the write to c.

    Told by events, not by a clock: the write deadline is beyond anything this test waits
    for, so c's stuck write lasts until the test kills c, and what is checked is the order
    of events (a game between a and b started and ended within one write to c).  A referee
    whose write to a bot that does not read holds up its loop, or other sessions' writes,
    cannot end such a game while the write lasts, and fails here.  How long a game waits on
    the referee (the longest untimed gap) is a figure, printed by ``bench load``."""
    settings = RefereeSettings(
        clock=ClockSettings(decision_ms=120_000),  # c's games wait on c until it is killed
        limits=SessionLimits(write_deadline_s=90.0),  # never reached: c is killed first
    )

    async def scenario() -> None:
        async with h.arena(settings, TOKENS) as (referee, port):
            with processes(tmp_path, port) as bots:
                bots.start("play", "a")
                bots.start("play", "b")
                never, _ = bots.start("never-read", "c", "--games", "32", "--max-seconds", "140")
                for name in "abc":
                    await referee.wait_for_session(name, 20)
                c = referee.live_session("c")
                assert c is not None
                stalled = [
                    asyncio.create_task(
                        referee.play(f"c{i}", ("c", "a"), seed=i + 1, ruleset=DEFAULT_RULESET)
                    )
                    for i in range(32)
                ]
                await h.wait_until(lambda: c.outbox_size[0] > 0, 20, "c's messages to back up")
                # c's writes go on until its window is full (a few hundred bytes more), then
                # one stays in flight for good: play until a game fits within one write.
                whole = None
                for index in range(10):
                    writing = c.write_started  # the write to c in flight as the game starts
                    report = await asyncio.wait_for(
                        referee.play(
                            f"ab{index}", ("a", "b"), seed=index + 1, ruleset=DEFAULT_RULESET
                        ),
                        60,
                    )
                    assert report.outcome.termination in FINISHED, report
                    assert sum(report.decisions) > 10
                    if writing is not None and c.write_started == writing:
                        whole = report
                        break
                assert whole is not None, "no game of a and b fitted within one write to c"
                assert c.is_open, "c was disconnected while a and b played"
                never.kill()
                for report in await asyncio.gather(*stalled):
                    assert report.outcome.termination is Termination.FORFEIT_DISCONNECT, report

    h.run_async(scenario(), 150)


# ---------------------------------------------------------------------------------------------
# Bounded input
# ---------------------------------------------------------------------------------------------
def test_flood_of_junk_replies_is_answered_within_budget_then_disconnected(
    tmp_path: Path,
) -> None:
    """c sends 100 batches of 4000 replies to requests never sent (56 KB each): the
    referee answers a few, coalesces the rest, ends the session with RESOURCE_EXHAUSTED, its
    outbox stays small throughout, and a game between a and b is not disturbed."""
    limits = SessionLimits()
    settings = RefereeSettings(clock=ClockSettings(decision_ms=10_000), limits=limits)

    async def scenario() -> None:
        async with h.arena(settings, TOKENS) as (referee, port):
            with processes(tmp_path, port) as bots:
                bots.start("play", "a")
                bots.start("play", "b")
                for name in "ab":
                    await referee.wait_for_session(name, 20)
                flood, result_file = bots.start("junk", "c", "--batches", "100", "--size", "4000")
                session = await referee.wait_for_session("c", 20)
                largest_outbox = 0

                async def watch() -> None:
                    nonlocal largest_outbox
                    while session.is_open:
                        largest_outbox = max(largest_outbox, session.outbox_size[1])
                        await asyncio.sleep(0.005)

                watcher = asyncio.create_task(watch())
                reports = await play_games(referee, ("a", "b"), 2, "ab")
                await asyncio.wait_for(asyncio.to_thread(flood.wait), 40)
                await asyncio.wait_for(watcher, 5)
                result = json.loads(result_file.read_text())
                assert session.misconduct is not None and "had to ignore" in session.misconduct
                # The status says why, unless the junk still in flight makes the bot's own
                # gRPC report the reset stream as INTERNAL first.
                assert result["code"] in ("RESOURCE_EXHAUSTED", "INTERNAL"), str(result)
                if result["code"] == "RESOURCE_EXHAUSTED":
                    assert "had to ignore" in result["details"], result
                assert result["sent"] >= limits.ignored_burst
                # At most the Error burst plus the refill while it lasted (a few seconds).
                assert result["errors"] <= limits.error_burst + 10 * limits.errors_per_s, result
                assert result["bytes"] < 64 * 1024, result  # was ~1 MB of Errors for 60 KB
                assert largest_outbox < 64 * 1024, largest_outbox
                assert referee.live_session("c") is None
                for report in reports:
                    assert report.outcome.termination in FINISHED, report

    h.run_async(scenario(), 90)


def test_errors_beyond_the_burst_are_coalesced_into_the_next_error() -> None:
    """Ignored replies past the Error burst are counted, and the next Error says how many."""
    session_limits = SessionLimits(error_burst=2, errors_per_s=1000.0, ignored_burst=100)

    async def scenario() -> None:
        from tacocat_arena.referee import BotSession

        session = BotSession("x", 1, limits=session_limits)
        written: list[bytes] = []

        async def writer(data: bytes) -> None:
            written.append(data)

        session.start_writing(writer)
        for request_id in range(1, 6):  # 5 junk replies in one instant: 2 answered
            session.deliver(pb.Action(game_id="g", request_id=request_id))
        await asyncio.sleep(0.02)  # the bucket refills (1000/s)
        session.deliver(pb.Action(game_id="g", request_id=99))
        await asyncio.sleep(0.02)
        texts = [pb.RefereeMessage.FromString(d).error.message for d in written]
        assert len(texts) == 3, texts
        assert "3 more ignored messages were not answered" in texts[-1], texts
        session.close()

    h.run_async(scenario(), 10)


# ---------------------------------------------------------------------------------------------
# No hidden cards in anything sent to the other seat
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("misbehave", "both", "termination"),
    [
        ("illegal", False, Termination.FORFEIT_ILLEGAL),
        ("malformed", False, Termination.FORFEIT_ILLEGAL),
        ("timeout", False, Termination.FORFEIT_TIMEOUT),
        ("disconnect", False, Termination.FORFEIT_DISCONNECT),
        ("crash", False, Termination.FORFEIT_CRASH),
        ("illegal", True, Termination.FORFEIT_ILLEGAL),  # both seats fail one duel (D1)
    ],
    ids=["illegal", "malformed", "timeout", "disconnect", "crash", "both-illegal"],
)
def test_forfeit_messages_to_the_other_seat_hold_no_hidden_card(
    tmp_path: Path, misbehave: str, both: bool, termination: Termination
) -> None:
    """Whatever ends the game, no string of any message a seat receives quotes the hand of
    the seat that failed (its own Error may: it is its own hand)."""
    settings = RefereeSettings(clock=ClockSettings(decision_ms=400))
    offender_process: dict[str, subprocess.Popen[bytes]] = {}

    async def classify(name: str) -> Termination:
        process = offender_process[name]
        with contextlib.suppress(subprocess.TimeoutExpired):
            await asyncio.to_thread(process.wait, 1.0)
        return (
            Termination.FORFEIT_CRASH
            if process.poll() is not None
            else Termination.FORFEIT_DISCONNECT
        )

    async def scenario() -> None:
        async with h.arena(settings, TOKENS, classify_disconnect=classify) as (referee, port):
            with processes(tmp_path, port) as bots:
                records: dict[str, Path] = {}
                for name in "ab":
                    bad = name == "a" or both
                    options = ("--misbehave", misbehave) if bad else ()
                    process, records[name] = bots.start("play", name, *options)
                    offender_process[name] = process
                for name in "ab":
                    await referee.wait_for_session(name, 20)
                report = await referee.play("g", ("a", "b"), seed=5, ruleset=DEFAULT_RULESET)
                assert report.outcome.termination is termination, report
                game = report.game
                assert game is not None
                victims = [1, 0] if both else [1]
                readers = ["ab"[v] for v in victims] + (["a"] if misbehave == "illegal" else [])
                for name in readers:
                    await h.wait_until(
                        lambda name=name: any(
                            m.HasField("game_end") for m in received(records[name])
                        ),
                        10,
                        f"{name}'s GameEnd",
                    )
                if misbehave == "illegal":
                    # The failing seat itself is told its hand: the scan below can fail.
                    own = " ".join(t for m in received(records["a"]) for t in strings_of(m))
                    assert any(r in own for r in renderings(game.hands[0])), own
                offenders = [0, 1] if both else [0]
                for offender in offenders:
                    victim = records["ab"[1 - offender]]
                    hidden = renderings(game.hands[offender])
                    messages = received(victim)
                    for message in messages:
                        for text in strings_of(message):
                            leaked = [r for r in hidden if r in text]
                            assert not leaked, f"{text!r} shows the opponent's hand {hidden[0]}"

    h.run_async(scenario(), 60)


# ---------------------------------------------------------------------------------------------
# Honest clocks
# ---------------------------------------------------------------------------------------------
def test_timeout_message_states_what_was_left_of_the_bank_and_what_was_used() -> None:
    """The first answer spends part of the bank; the timed-out request then had its allowance
    plus only what was left, which is what the Error quotes (not the bank it started with)."""
    settings = RefereeSettings(clock=ClockSettings(decision_ms=100, bank_ms=600, grace_ms=50))

    async def scenario() -> None:
        async with h.arena(settings) as (referee, port), h.raw_clients(port, 2) as clients:
            for client, name in zip(clients, "ab", strict=True):
                await client.connect(name)
            game = asyncio.create_task(
                referee.play("bank", ("a", "b"), seed=3, ruleset=DEFAULT_RULESET)
            )
            seen: list[pb.DecisionRequest] = []

            async def slow_then_silent(request: pb.DecisionRequest) -> Any:
                seen.append(request)
                if len(seen) == 1:
                    await asyncio.sleep(0.35)  # 250 ms of the bank spent
                    return None
                return False  # never answer the second request

            async def a_side() -> h.PlayLog:
                return await h.play_raw(clients[0], hook=slow_then_silent)

            logs = await asyncio.gather(a_side(), h.play_raw(clients[1], seed=1))
            report = await game
            assert report.outcome.termination is Termination.FORFEIT_TIMEOUT
            second = seen[1]
            left = second.time_bank_left_ms
            assert 0 < left < 600 - 200, left  # the first answer took from the bank
            error = logs[0].errors[-1]
            assert error.code == pb.ERROR_CODE_TIMEOUT
            assert f"within 100 ms plus the {left} ms left of its 600 ms bank" in error.message
            waited = int(error.message.rsplit("waited ", 1)[1].split(" ms")[0])
            assert waited >= 100 + left  # it used all it had
            assert "plus a 600 ms bank" not in error.message  # the old text quoted the full bank

    h.run_async(scenario(), 30)


# ---------------------------------------------------------------------------------------------
# Absent bots
# ---------------------------------------------------------------------------------------------
#: How long the leaving test's bots may take to connect at first (a bot process can take 5 s
#: to start at load 10): its connect timeout is b's reconnect window, kept short, as the test
#: waits one window for b (it was 10 s of its wall when the first connects shared it).
FIRST_CONNECT_S = 30.0


def test_bot_that_leaves_for_good_forfeits_its_remaining_games_within_one_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """b (a remote bot) leaves during its first game: its remaining games are forfeited after
    one reconnect window for the bot, not one per game, and while they wait a and c play on
    in the only slot.

    The windows are counted from the waits the referee asked for (each wait for b's session
    that ran out, from when it was asked to its timeout), not from how long the run took, so
    a loaded machine cannot fail it: the waits of one shared window cover one window's
    span, one window per game would cover 14 of them."""
    from tacocat_arena.stats.tables import GameResult
    from tacocat_arena.tournament.config import BotSpec, TournamentConfig
    from tacocat_arena.tournament.runner import run_tournament
    from tacocat_arena.tournament.storage import TournamentStore

    window = 4.0  # b's reconnect window (the first connects wait FIRST_CONNECT_S instead)
    config = TournamentConfig(
        bots=tuple(BotSpec(name, "") for name in "abc"),
        games_per_pairing=8,
        concurrency=1,
        move_timeout_s=5.0,
        connect_timeout_s=window,
        out=tmp_path / "out",
        base_dir=tmp_path,
    )
    results: list[tuple[float, GameResult]] = []
    waits: list[tuple[float, float]] = []  # b's waits that ran out: (asked at, its deadline)
    wait_for_session = Referee.wait_for_session
    first_waits: set[str] = set()

    async def recorded(self: Referee, name: str, timeout: float) -> Any:
        asked = time.monotonic()
        if name not in first_waits:  # its first connect, before any game: not the window's
            first_waits.add(name)
            timeout = max(timeout, FIRST_CONNECT_S)
        try:
            return await wait_for_session(self, name, timeout)
        except TimeoutError:
            if name == "b":
                waits.append((asked, asked + timeout))
            raise

    monkeypatch.setattr(Referee, "wait_for_session", recorded)
    with processes(tmp_path, 0) as bots:

        def listening(port: int) -> None:
            bots.port = port
            bots.start("play", "a")
            bots.start("play", "b", "--leave-after", "5")
            bots.start("play", "c")

        async def scenario() -> None:
            store = TournamentStore(config.out)
            try:
                await run_tournament(
                    config,
                    store,
                    tokens=TOKENS,
                    on_listening=listening,
                    on_game=lambda result, done, total: results.append((time.monotonic(), result)),
                )
            finally:
                store.close()

        h.run_async(scenario(), 120)

    assert len(results) == 24
    assert_verifies(config.out)  # every disconnect forfeit as recorded; no results.json yet
    # The referee waited for b: one window, shared by all its games.  The span its waits
    # cover (their union) is one window (give or take the instants between reading the
    # clock here and in the referee); a window per game would cover one per game in turn.
    assert waits, "the referee never waited for b to come back"
    covered, (start, end) = 0.0, sorted(waits)[0]
    for asked, deadline in sorted(waits)[1:]:
        if asked > end:
            covered, start = covered + (end - start), asked
        end = max(end, deadline)
    covered += end - start
    assert covered / window < 1.5, (covered / window, sorted(waits))
    with_b = [(t, r) for t, r in results if "b" in r.seats]
    left_at = min(t for t, r in with_b if r.reason is Termination.FORFEIT_DISCONNECT)
    gone = [(t, r) for t, r in with_b if t >= left_at]
    assert len(gone) >= 14  # every b game but the ones before it left
    for _, result in gone:
        assert result.reason is Termination.FORFEIT_DISCONNECT, result
        assert result.forfeit_by is not None
        assert result.seats[result.forfeit_by] == "b", result
    a_c = [(t, r) for t, r in results if "b" not in r.seats]
    assert all(not r.reason.is_forfeit for _, r in a_c), a_c
    # The only slot was not held by b's waiting games: a and c played while it waited.
    opened, closed = min(a for a, _ in waits), max(d for _, d in waits)
    assert any(opened < t < closed for t, _ in a_c), (opened, closed, [t for t, _ in a_c])


def test_an_answer_read_past_its_deadline_is_a_timeout_even_when_the_timer_ran_late() -> None:
    """One clock: an answer counts when it is read by allowance + bank left + grace.  A timer
    that runs late (the referee's loop stalled) gives no extra time, so an answer read after
    the deadline is ruled a timeout, never applied with a time ``verify`` would reject (T1);
    one read by the deadline is the bot's, its excess over the allowance taken from the bank."""
    from tacocat_arena.engine import DecisionKind
    from tacocat_arena.referee import match

    settings = RefereeSettings(clock=ClockSettings(decision_ms=200, bank_ms=100, grace_ms=50))

    async def answer_read_after(ms: float) -> tuple[Any, float]:
        loop = asyncio.get_running_loop()
        seat = match._Seat(0, Any, "g", 100, [], settings.clock.decision_ms)  # type: ignore[arg-type]  # no session used
        future: asyncio.Future[Any] = loop.create_future()
        started = time.monotonic() - 1.0
        asked = match._Asked(seat, DecisionKind.DUEL, 1, future, None, started, 100.0, 350.0)
        future.set_result((pb.Action(duel=pb.Duel(card=3)), started + ms / 1000))
        return await match._answer(asked, settings), seat.bank_ms

    late, bank_after_late = h.run_async(answer_read_after(350.5), 10)
    assert isinstance(late, match._Failure)
    assert late.termination is Termination.FORFEIT_TIMEOUT
    assert "waited 350 ms" in late.message  # the Error says what the clock measured
    assert bank_after_late == 0.0  # a timeout spends the bank
    just_in_time, _ = h.run_async(answer_read_after(349.5), 10)  # within the grace
    assert not isinstance(just_in_time, match._Failure)
    in_time, bank_after = h.run_async(answer_read_after(250.0), 10)
    assert not isinstance(in_time, match._Failure)
    assert bank_after == 50.0  # 50 ms past the 200 ms allowance come out of the 100 ms bank
