"""Running an asyncio program that a signal may stop, with a gRPC server inside it.

``asyncio.run`` alone stops badly on a signal with grpc.aio loaded.  Where SIGINT is ignored
(a job started with ``&`` by a non-interactive shell: CI, ``nohup``) or on SIGTERM turned into
KeyboardInterrupt, the interrupt escapes the loop between two callbacks, with the gRPC server
and every game's task still running; ``asyncio.run`` then cancels those tasks itself while
the loop closes, and grpc's Cython layer crashes in it (a segmentation fault, exit 139:
issue 37), or prints "Task was destroyed but it is pending!" and "Loop ... is closed".

``run_until_signalled`` instead handles SIGINT, SIGTERM and SIGHUP inside the loop: the first one
cancels the program's main task, so that every ``finally`` (the server's ``stop``, the bots'
``stop``) runs with the loop alive; any task still left once the program has returned is
cancelled and awaited, again with the loop alive; and only then is ``Stopped`` raised, for
the command to say what was kept and exit with the shell's code (128 + the signal's number:
130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).  A second signal during that clean-up is
ignored: the clean-up is bounded (the server's grace, the bots' stop timeouts), and cutting it
short is what crashed.

SIGHUP is the terminal closing (its window shut, an ssh session lost): without a handler
Python dies of it at once, its ``finally`` blocks unrun.  A command started to outlive its
terminal (``nohup``: SIGHUP ignored from the start) keeps it ignored (``stop_signals``).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

#: The signals that stop a command: Ctrl-C, ``kill`` / systemd / ``docker stop``, and the
#: terminal closing.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

#: How long the tasks left after the program's own clean-up get to finish once cancelled.
_LEFTOVER_S = 5.0


def stop_signals() -> tuple[signal.Signals, ...]:
    """The ``STOP_SIGNALS`` this process takes: all but a SIGHUP it was started ignoring
    (``nohup``: the person asked it to outlive the terminal).  A SIGINT ignored from the start
    (a job started with ``&`` by a non-interactive shell) is taken all the same: ``kill -INT``
    is then still someone's request to stop."""
    return tuple(
        s for s in STOP_SIGNALS if s != signal.SIGHUP or signal.getsignal(s) != signal.SIG_IGN
    )


class Stopped(Exception):  # noqa: N818 (a stop is not an error of the program's)
    """The program was stopped by ``signum`` (after its clean-up ran)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum

    @property
    def name(self) -> str:
        """SIGINT, SIGTERM or SIGHUP."""
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        """The shell's convention: 128 + the signal's number (SIGINT 130, SIGTERM 143,
        SIGHUP 129)."""
        return 128 + self.signum


def run_until_signalled(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, stopped cleanly by SIGINT, SIGTERM or SIGHUP (see the module
    docstring): ``main``'s result, or ``Stopped`` once everything it started has ended."""
    received: list[int] = []

    async def guarded() -> T:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None

        def on_signal(signum: int) -> None:
            if not received:
                task.cancel()
            received.append(signum)

        installed = []
        for signum in stop_signals():
            # Outside the main thread, or on a loop without signals: asyncio's own handling.
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, on_signal, signum)
                installed.append(signum)
        try:
            return await main
        finally:
            try:
                await _end_leftovers(task)
            finally:
                for signum in installed:
                    loop.remove_signal_handler(signum)

    try:
        result = asyncio.run(guarded())
    except asyncio.CancelledError:
        if received:
            raise Stopped(received[0]) from None
        raise
    except Exception as error:  # the program's clean-up failed on the way out of a stop
        if received:
            raise Stopped(received[0]) from error
        raise
    if received:
        raise Stopped(received[0])
    return result


async def _end_leftovers(current: asyncio.Task[Any]) -> None:
    """Cancel and await every task but ``current`` (its own clean-up has run), while the
    loop, and so grpc's completion queue, is still alive."""
    for _ in range(3):  # a cancelled task may start another one on its way out
        left = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
        if not left:
            return
        for leftover in left:
            leftover.cancel()
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(
                asyncio.shield(asyncio.gather(*left, return_exceptions=True)), _LEFTOVER_S
            )
