"""``referee.stopping`` in process: which signals stop a command, and how it ends."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator

import pytest

from tacocat_arena.referee.stopping import Stopped, run_until_signalled, stop_signals


@pytest.fixture
def hangup_ignored() -> Iterator[None]:
    """SIGHUP ignored, as ``nohup`` starts a command."""
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGHUP, previous)


@pytest.fixture
def hangup_default() -> Iterator[None]:
    """SIGHUP at its default, as a terminal starts a command (whatever this run's is)."""
    previous = signal.signal(signal.SIGHUP, signal.SIG_DFL)
    try:
        yield
    finally:
        signal.signal(signal.SIGHUP, previous)


async def _signalled(signum: int) -> str:
    """Sends itself ``signum``, then waits for what it does (a stop cancels this wait)."""
    os.kill(os.getpid(), signum)
    for _ in range(20):  # a taken signal is handled within a turn or two of the loop
        await asyncio.sleep(0.01)
    return "went on"


def test_a_terminal_closing_stops_a_command_cleanly(hangup_default: None) -> None:
    """SIGHUP unhandled would kill Python at once, no ``finally`` run; taken, it is a stop
    like SIGTERM's: the program's clean-up runs, then Stopped with the shell's 129."""
    cleaned = []

    async def program() -> str:
        try:
            return await _signalled(signal.SIGHUP)
        finally:
            cleaned.append(True)

    assert signal.SIGHUP in stop_signals()
    with pytest.raises(Stopped) as stopped:
        run_until_signalled(program())
    assert stopped.value.name == "SIGHUP" and stopped.value.exit_code == 129
    assert cleaned == [True]
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_DFL  # given back as it was


def test_a_command_started_under_nohup_outlives_its_terminal(hangup_ignored: None) -> None:
    assert signal.SIGHUP not in stop_signals()
    assert set(stop_signals()) == {signal.SIGINT, signal.SIGTERM}
    assert run_until_signalled(_signalled(signal.SIGHUP)) == "went on"
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
