"""How ``BotProcess.stop`` ends a bot: a grace for one that was told to leave, none for one
whose start was given up before it connected.

A ``run`` whose bot cannot start stops the other bot of the game, already started and still
connecting; it was stopped with the 3 s grace meant for a bot finishing after SessionEnd,
though nothing had told it anything (SessionEnd goes to sessions), so the run waited 3 s for
nothing.  Real processes: a Python bot of the SDK over loopback gRPC, and a script.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

import pytest

from tacocat_arena.launch.bots import BotProcess, BotStartError, Launch, new_token
from tacocat_arena.launch.sandbox import Limits, SandboxMode
from tacocat_arena.launch.spec import BotSpec
from tacocat_arena.referee import Referee, RefereeSettings, start_server, stop_server

pytestmark = [pytest.mark.slow]

REPO = Path(__file__).resolve().parent.parent
#: A bot that takes its time to connect: it says it is up (a file), then sleeps, for at most
#: a minute, never connecting.
SLOW_TO_CONNECT = (
    "import pathlib, sys, time\n"
    "pathlib.Path(sys.argv[1]).touch()\n"
    "for _ in range(1200):\n"
    "    time.sleep(0.05)\n"
)


def _process(name: str, command: str, tmp_path: Path, address: str, token: str) -> BotProcess:
    launch = Launch(
        identity=name,
        token=token,
        log_path=tmp_path / f"{name}.log",
        cwd=REPO,
        mode=SandboxMode.NONE,
        limits=Limits(),
        tcp_address=address,
    )
    return BotProcess(BotSpec(name, command), launch)


def _gone_within(pid: int, bound_s: float) -> bool:
    """Whether process ``pid`` has died (a zombie, or reaped) within ``bound_s`` seconds,
    asked of the process table while the caller holds its event loop: nothing of the loop's
    can signal the process meanwhile."""
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True  # reaped (the child watcher's thread waits for it)
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


def test_a_bot_whose_start_is_given_up_before_it_connects_is_terminated_at_once(
    tmp_path: Path,
) -> None:
    """Stopped while ``wait_connected`` still waits for its session, the bot gets SIGTERM in
    ``stop``'s first step: the test holds the loop right after it, so a grace (a timer of
    the loop's) could never end and only a signal sent at once ends the bot."""
    up = tmp_path / "up"
    script = tmp_path / "slow.py"
    script.write_text(SLOW_TO_CONNECT, encoding="utf-8")

    async def scenario() -> tuple[BotProcess, bool]:
        referee = Referee({"slow": new_token()}, RefereeSettings())
        bot = _process("slow", f"python {script} {up}", tmp_path, "127.0.0.1:9", "unused")
        await bot.start()
        assert bot.process is not None
        waiting = asyncio.ensure_future(bot.wait_connected(referee, 60.0))
        for _ in range(1200):  # it is running its own code: the start is done
            if up.exists():
                break
            await asyncio.sleep(0.05)
        stopping = asyncio.ensure_future(bot.stop())  # the default grace, as run's end
        await asyncio.sleep(0)  # stop's first step, and no more of the loop's work
        gone = _gone_within(bot.process.pid, 30.0)
        await stopping
        with contextlib.suppress(BotStartError):
            await waiting
        return bot, gone

    bot, gone = asyncio.run(scenario())
    assert gone, "the bot was still running after stop's first step: it was given a grace"
    assert bot.exits == ["killed by signal 15 (SIGTERM)"], bot.exits
    assert bot.crashes == []  # the runner's stop, not the bot's failure


def test_a_connected_bot_told_session_end_still_exits_by_itself(tmp_path: Path) -> None:
    """The grace stays for a bot that was told to leave: SessionEnd, then ``stop``, and the
    SDK's bot exits with code 0 (not SIGTERM)."""
    token = new_token()

    async def scenario() -> BotProcess:
        referee = Referee({"greedy": token}, RefereeSettings())
        server, port = await start_server(referee)
        try:
            bot = _process(
                "greedy", "python example_bots/greedy_bot.py", tmp_path, f"127.0.0.1:{port}", token
            )
            await bot.start()
            try:
                await bot.wait_connected(referee, 60.0)
            finally:
                await referee.end_all_sessions("the test is over")
                await bot.stop()
        finally:
            await stop_server(server, 0.5)
        return bot

    bot = asyncio.run(scenario())
    assert bot.exits == ["exited with code 0"], bot.exits
