"""The Python SDK as a newcomer meets it (issue 14): a refused session is one line and a
non-zero exit, a bug in a decision method is reported once per game (or, in strict mode,
stops the bot), and ``play_local`` holds to the even number of games its docs ask for.

Bots run as their own processes against a real referee on loopback.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import arena_harness as h  # tests/bots (pytest pythonpath)
import pytest

from tacocat_arena.engine import DEFAULT_RULESET
from tacocat_arena.referee import RefereeSettings
from tacocat_bot import Bot, play_local

BUGGY_BOT = """
import sys
from tacocat_bot import Bot, run
import tacocat_bot.client

if len(sys.argv) > 1:  # a bot from the future, speaking another protocol version
    tacocat_bot.client.PROTOCOL_VERSION = int(sys.argv[1])

class Buggy(Bot):
    name = "buggy"

    def duel(self, view):
        raise KeyError("no such card")  # every duel (every round): the SDK plays a default

summary = run(Buggy())
print(f"bot errors: {summary.bot_errors} in {summary.games} games", file=sys.stderr)
"""


def start_bot(
    script: Path, port: int, name: str, token: str, *args: str, **env: str
) -> subprocess.Popen[str]:
    environment = dict(
        os.environ,
        TACOCAT_ARENA_ADDRESS=f"127.0.0.1:{port}",
        TACOCAT_ARENA_BOT=name,
        TACOCAT_ARENA_TOKEN=token,
        **env,
    )
    return subprocess.Popen(
        [sys.executable, str(script), *args],
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


async def finish(bot: subprocess.Popen[str], timeout: float = 30) -> tuple[int, str]:
    try:
        code = await h.wait_for_exit(bot, timeout)  # type: ignore[arg-type]
    finally:
        if bot.poll() is None:
            bot.kill()
    return code, bot.stderr.read() if bot.stderr else ""


@pytest.mark.parametrize(
    ("token", "args", "status"),
    [
        ("wrong-token-123", (), "UNAUTHENTICATED: "),
        (h.TOKENS["a"], ("7",), "FAILED_PRECONDITION: "),
    ],
    ids=["wrong-token", "refused-version"],
)
@pytest.mark.slow
def test_a_refused_session_prints_status_and_message_and_exits_non_zero(
    tmp_path: Path, token: str, args: tuple[str, ...], status: str
) -> None:
    script = tmp_path / "buggy.py"
    script.write_text(BUGGY_BOT)

    async def scenario() -> tuple[int, str]:
        async with h.arena(RefereeSettings()) as (_, port):
            return await finish(start_bot(script, port, "a", token, *args))

    code, stderr = h.run_async(scenario(), 60)
    assert code == 1
    assert "Traceback" not in stderr
    assert stderr.startswith(status), stderr
    assert len(stderr.strip().splitlines()) == 1


@pytest.mark.slow
@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
def test_an_exception_in_a_method_is_reported_once_per_game_or_is_fatal_in_strict_mode(
    tmp_path: Path, strict: bool
) -> None:
    script = tmp_path / "buggy.py"
    script.write_text(BUGGY_BOT)

    async def scenario() -> tuple[int, str, list[str]]:
        async with h.arena(RefereeSettings()) as (referee, port):
            env = {"TACOCAT_BOT_STRICT": "1"} if strict else {}
            buggy = start_bot(script, port, "a", h.TOKENS["a"], **env)
            with h.bot_farm(tmp_path, port) as farm:
                farm.start("b")
                await h.wait_until(
                    lambda: referee.live_session("a") and referee.live_session("b"),
                    20,
                    "both bots",
                )
                reports = []
                for index in range(2):
                    seats = ("a", "b") if index == 0 else ("b", "a")
                    try:
                        reports.append(
                            await referee.play(
                                f"g{index}", seats, seed=index, ruleset=DEFAULT_RULESET
                            )
                        )
                    except LookupError:  # strict: the bot is gone after the first game
                        break
                await referee.end_all_sessions("test over")
                code, stderr = await finish(buggy)
            return code, stderr, [r.outcome.termination.value for r in reports]

    code, stderr, endings = h.run_async(scenario(), 90)
    if strict:
        assert code == 1
        assert "KeyError: 'no such card'" in stderr  # the bot stopped at the first one
        assert endings[0] in ("disconnect", "crash")
        return
    assert code == 0, stderr
    assert all(ending in ("goal", "round_cap") for ending in endings), endings
    per_game = {}
    for game in ("g0", "g1"):
        # One traceback and one explanation per game ...
        assert stderr.count(f"Buggy.duel() raised in game {game}; played duel") == 1
        marker = f"game {game}: "
        more = [line for line in stderr.splitlines() if line.startswith(f"tacocat_bot: {marker}")]
        # ... then, if it happened again, how often, at the game's end.
        per_game[game] = int(more[0].split(marker)[1].split()[0]) if more else 1
    assert stderr.count("KeyError: 'no such card'") == 2
    assert "TACOCAT_BOT_STRICT=1" in stderr
    assert f"bot errors: {sum(per_game.values())} in 2 games" in stderr


def test_play_local_refuses_an_odd_number_of_games() -> None:
    with pytest.raises(ValueError, match="games: must be an even number >= 2"):
        play_local(Bot(), Bot(), games=3)
    assert play_local(Bot(), Bot(), games=2).games == 2


def test_run_can_raise_instead_of_exiting() -> None:
    from tacocat_bot import SessionError, run

    async def scenario() -> None:
        async with h.arena(RefereeSettings()) as (_, port):
            with pytest.raises(SessionError) as caught:
                await asyncio.to_thread(
                    run, Bot(), f"127.0.0.1:{port}", "bad-token-1", "a", exit_on_error=False
                )
            assert caught.value.status == "UNAUTHENTICATED"
            assert str(caught.value).startswith("UNAUTHENTICATED: ")

    h.run_async(scenario(), 30)


@pytest.mark.slow
def test_a_bot_started_with_no_referee_says_what_it_waits_for_then_gives_up(
    tmp_path: Path,
) -> None:
    import socket

    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = tmp_path / "lonely.py"
    script.write_text(
        "import tacocat_bot.client as c\nfrom tacocat_bot import Bot, run\n"
        "c.CONNECT_TIMEOUT_S = 5.0\nrun(Bot())\n"
    )
    bot = start_bot(script, port, "a", "token-a")
    code, stderr = h.run_async(finish(bot, 30), 40)
    assert code == 1
    assert f"tacocat_bot: waiting for a referee at 127.0.0.1:{port}" in stderr
    assert stderr.strip().splitlines()[-1] == (
        f"UNAVAILABLE: no referee answered at 127.0.0.1:{port} within 5 s"
    )
