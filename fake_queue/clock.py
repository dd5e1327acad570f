"""The queue's clock: the one seam through which the queue, its latency and fault models read
the time. Stdlib only.

A clock reads integer nanoseconds (`now_ns`). Timers are never kept by the clock: the queue
turns a deadline on it into a delay and sleeps that long on the running asyncio loop. That is
exact when the clock runs with the loop's: `MONOTONIC` (the default) is the clock asyncio's
own loops use, and a virtual-time loop (fake_queue.virtual_clock) is its own clock, so on it
every timer jumps.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol


class Clock(Protocol):
    def now_ns(self) -> int:
        """Now, in nanoseconds; only differences mean anything."""
        ...


class MonotonicClock:
    """Real time: `time.monotonic_ns`, which asyncio's event loops time their timers on."""

    now_ns = staticmethod(time.monotonic_ns)  # the builtin itself: no Python frame per read


MONOTONIC = MonotonicClock()


async def sleep_until(clock: Clock, target_ns: int) -> None:
    """Sleep on the running loop until `clock` reads `target_ns` (at once if it has passed).
    On the real server the precise loop (fake_queue.precise_loop) fires the timer on time."""
    delay = (target_ns - clock.now_ns()) / 1e9
    if delay > 0:
        await asyncio.sleep(delay)
