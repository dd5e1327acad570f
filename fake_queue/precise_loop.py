"""An asyncio event loop whose timers fire on time instead of 0-1 ms late. Stdlib only.

epoll_wait counts whole milliseconds and selectors.EpollSelector rounds a timeout up, so every
timer fired 0-1 ms late (docs/performance.md, timer fidelity). Rounding down instead wakes the
loop < 1 ms early; it finds no timer due and polls (timeout 0) until one is: timers fire on time
for under a millisecond of polling per wake-up.
"""

from __future__ import annotations

import asyncio
import gc
import math
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

# No automatic full (gen-2) collection while serving: with 50k-120k jobs alive one took 74-230 ms
# and stalled every answer due meanwhile. Young generations are collected as usual; callers run
# gc.collect() at quiet moments (the queue does at /_bench/reset, between reps).
GC_THRESHOLDS = (700, 10, 2**31 - 1)

if hasattr(selectors, "EpollSelector"):

    class FloorEpollSelector(selectors.EpollSelector):
        def select(self, timeout: float | None = None) -> Any:
            if timeout is not None and timeout > 0:
                # the parent takes ceil(ms); floor(ms) - 0.5 makes that exactly floor(ms)
                timeout = max(0.0, (math.floor(timeout * 1e3) - 0.5) * 1e-3)
            return super().select(timeout)


def new_event_loop() -> asyncio.AbstractEventLoop:
    """Precise timers where epoll is available, the default loop elsewhere."""
    if hasattr(selectors, "EpollSelector"):
        return asyncio.SelectorEventLoop(FloorEpollSelector())
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
