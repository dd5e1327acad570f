"""An asyncio event loop on virtual time: whenever nothing is ready to run, its clock jumps to
the next timer instead of waiting for it. Stdlib only.

The loop is also a `fake_queue.clock.Clock`, so a `JobQueue(sampler, clock=loop)` and the
model-worker policies it serves (through an in-process link, jobbench.workers.queue_link) run
minutes of queue time in milliseconds, with every timer exactly on time. Nothing may wait on
real I/O or another thread: when nothing is ready and no timer is left the loop raises
`VirtualTimeDeadlock` rather than block forever.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class VirtualTimeDeadlock(RuntimeError):
    """Nothing is ready and no timer is scheduled: on virtual time nothing can ever happen."""


class _JumpingSelector(selectors.DefaultSelector):
    """Never blocks: collects what is ready, and otherwise advances time by the timeout the
    loop asked for (the delay to its earliest timer)."""

    def __init__(self, advance: Callable[[float], None]) -> None:
        super().__init__()
        self._advance = advance

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = super().select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:
            raise VirtualTimeDeadlock("nothing is ready and no timer is scheduled")
        self._advance(timeout)
        return []


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """A selector event loop whose `time()` is virtual, starting at `start_s`."""

    def __init__(self, start_s: float = 0.0) -> None:
        self._virtual_s = start_s
        super().__init__(_JumpingSelector(self._advance))
        # The loop fires every timer due before time() + resolution: the jump lands on the
        # timer to within a float rounding, far below this.
        self._clock_resolution = 1e-9

    def _advance(self, seconds: float) -> None:
        self._virtual_s += seconds

    def time(self) -> float:
        return self._virtual_s

    def now_ns(self) -> int:
        """The loop's time as a `Clock`: whole nanoseconds."""
        return round(self._virtual_s * 1e9)


def run(main: Coroutine[Any, Any, T], *, start_s: float = 0.0) -> T:
    """asyncio.run on a fresh virtual-time loop: tasks still pending at the end are cancelled."""
    loop = VirtualTimeLoop(start_s)
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(main)
    finally:
        try:
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            asyncio.set_event_loop(None)
            loop.close()
