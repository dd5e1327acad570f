"""The queue's clock: the one seam through which the queue, its latency and fault models read
the time. Stdlib only.

A clock reads integer nanoseconds (`now_ns`). Timers are never kept by the clock: the queue
sets a deadline on it as a timer on the running asyncio loop (`call_at_ns`). That is exact when
the clock runs with the loop's: `MONOTONIC` (the default) is the clock asyncio's own loops use,
and a virtual-time loop (fake_queue.queue.virtual_clock) is its own clock, so on it every timer
jumps.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Protocol


class Clock(Protocol):
    def now_ns(self) -> int:
        """Now, in nanoseconds; only differences mean anything."""
        ...


class MonotonicClock:
    """Real time: `time.monotonic_ns`, which asyncio's event loops time their timers on."""

    now_ns = staticmethod(time.monotonic_ns)  # the builtin itself: no Python frame per read


MONOTONIC = MonotonicClock()


def call_at_ns(
    clock: Clock, target_ns: int, callback: Callable[..., object], *args: Any
) -> asyncio.TimerHandle:
    """`callback(*args)` on the running loop once `clock` reads `target_ns`.

    On real time the timer is set at the target itself (asyncio's loop time is
    `time.monotonic`), not at now + the delay: timers for one instant share one loop time and
    fire in one loop turn (a delay computed a few microseconds apart for each would spread
    them over several). Elsewhere (a virtual-time loop is its own clock) it is the delay."""
    loop = asyncio.get_running_loop()
    if type(clock) is MonotonicClock:
        return loop.call_at(target_ns / 1e9, callback, *args)
    return loop.call_later(max((target_ns - clock.now_ns()) / 1e9, 0.0), callback, *args)
