"""An asyncio event loop whose timers fire on time instead of 0-1 ms late. Stdlib only.

epoll_wait counts whole milliseconds and selectors.EpollSelector rounds a timeout up, so every
timer fired 0-1 ms late (docs/performance.md, timer fidelity). This selector waits on the epoll
descriptor itself with select(), whose timeout has microsecond resolution, then collects the
events with a zero-timeout epoll_wait. An earlier version rounded down and polled through the
last millisecond instead; on two cores that spinning kept the CPU the kernel had just woken the
other process on (a socket wake-up is placed on the waker's CPU), delaying it by ~1 ms.
"""

from __future__ import annotations

import asyncio
import gc
import select
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

# No automatic full (gen-2) collection while serving: with 50k-120k jobs alive one took 74-230 ms
# and stalled every answer due meanwhile. Young generations are collected as usual; callers run
# gc.collect() at quiet moments (the queue does at /_bench/reset, between reps).
GC_THRESHOLDS = (700, 10, 2**31 - 1)

# A timed sleep overshoots by the kernel's slack (0.1 % of the timeout, at least 50 us) and then
# by the wake-up itself (80-250 us on these VMs): sleep that much less, poll the rest.
KERNEL_SLACK_MIN_S = 50e-6
WAKE_UP_S = 300e-6

if hasattr(selectors, "EpollSelector"):

    class PreciseEpollSelector(selectors.EpollSelector):
        def select(self, timeout: float | None = None) -> Any:
            if timeout is not None and timeout > 0:
                # Sleep until an event or until just before the timer (microsecond timeout),
                # then collect. The loop finds no timer due and comes back with the rest,
                # which it polls through: ~0.1-0.2 ms of polling per timer.
                wait = timeout - max(timeout / 1000, KERNEL_SLACK_MIN_S) - WAKE_UP_S
                if wait > 0:
                    select.select([self.fileno()], [], [], wait)
                timeout = 0
            return super().select(timeout)


def new_event_loop() -> asyncio.AbstractEventLoop:
    """Precise timers where epoll is available, the default loop elsewhere."""
    if hasattr(selectors, "EpollSelector"):
        return asyncio.SelectorEventLoop(PreciseEpollSelector())
    return asyncio.new_event_loop()


def run(main: Coroutine[Any, Any, T], *, no_full_gc: bool = True) -> T:
    """asyncio.run on the precise loop."""
    if no_full_gc:
        gc.set_threshold(*GC_THRESHOLDS)
    loop = new_event_loop()
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(main)
    finally:
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            asyncio.set_event_loop(None)
            loop.close()
