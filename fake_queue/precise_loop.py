"""An asyncio event loop whose timers fire on time instead of 0-1 ms late. Stdlib only.

epoll_wait counts whole milliseconds and selectors.EpollSelector rounds a timeout up, so every
timer fired 0-1 ms late (benchmarks/NOTES.md, timer fidelity). This selector waits on the epoll
descriptor itself with select(), whose timeout has microsecond resolution, then collects the
events with a zero-timeout epoll_wait. An earlier version rounded down and polled through the
last millisecond instead; on two cores that spinning kept the CPU the kernel had just woken the
other process on (a socket wake-up is placed on the waker's CPU), delaying it by ~1 ms.

For the queue, garbage collection runs in the loop's idle time too: `run(idle_collection=True)`
turns automatic collection off and the selector collects the young generations just before it
would sleep, when the wait until the next timer is long enough for the collection
(benchmarks/NOTES.md, timer fidelity).
"""

from __future__ import annotations

import asyncio
import gc
import select
import selectors
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

# No automatic full (gen-2) collection while serving: with 50k-120k jobs alive one took 74-230 ms
# and stalled every answer due meanwhile; callers run gc.collect() at quiet moments (the queue
# does at /_bench/reset, between reps). The queue's loop collects the young generations in its
# idle time, at these thresholds (IdleCollector); every other loop automatically, at these.
GC_THRESHOLDS = (700, 10, 2**31 - 1)

# A timed sleep overshoots by the kernel's slack (0.1 % of the timeout, at least 50 us) and then
# by the wake-up itself (80-250 us on these VMs): sleep that much less, poll the rest.
KERNEL_SLACK_MIN_S = 50e-6
WAKE_UP_S = 300e-6


class IdleCollector:
    """Young-generation collections at CPython's own thresholds, but only in idle time.

    At the design load (benchmarks/NOTES.md, timer fidelity) an automatic collection of
    generation 0 took 0.1-0.9 ms and one of generations 0 and 1 up to 7.5 ms, and it ran
    wherever an allocation tipped the count: inside the callback answering 63 takes due
    together, or between two of them. Here one runs when the loop is about to wait longer than
    twice the collection's expected time (objects to examine x that generation's last time an
    object, plus the wake-up); generation 1, when due, waits for a wait long enough for it,
    generation 0 going meanwhile. A loop never idle that long collects anyway, at the start of
    a loop turn: generation 0 once the young objects reach FORCE_AFTER times the threshold,
    generation 1 once generation 0 was collected FORCE_AFTER times as often as it should be.
    Active only while automatic collection is off (`run(idle_collection=True)`): a loop in a
    thread of a process that collects automatically (tests, embedded use, workers) leaves
    collection alone."""

    FORCE_AFTER = 50

    def __init__(self) -> None:
        self.gen0_threshold, self.gen1_every, _ = GC_THRESHOLDS
        self.per_object_s = [50e-9, 100e-9]  # generation 0, and 0 with 1: measured each time
        self.in_gen1 = 0  # objects moved to generation 1 since it was last collected

    def before_wait(self, timeout: float | None) -> float:
        """Collect if there is room before `timeout` (s, None: no timer); the seconds spent."""
        young, gen0_runs, _ = gc.get_count()
        if young < self.gen0_threshold or gc.isenabled():
            return 0.0
        if gen0_runs >= self.gen1_every and (
            self._fits(1, young, timeout) or gen0_runs >= self.gen1_every * self.FORCE_AFTER
        ):
            generation = 1
        elif self._fits(0, young, timeout) or young >= self.gen0_threshold * self.FORCE_AFTER:
            generation = 0
        else:
            return 0.0
        started = time.perf_counter()
        found = gc.collect(generation)
        took = time.perf_counter() - started
        self.per_object_s[generation] = took / max(self._examined(generation, young), 1)
        self.in_gen1 = 0 if generation else self.in_gen1 + max(young - found, 0)
        return took

    def _examined(self, generation: int, young: int) -> int:
        return young + (self.in_gen1 if generation else 0)

    def _fits(self, generation: int, young: int, timeout: float | None) -> bool:
        expected = self._examined(generation, young) * self.per_object_s[generation]
        return timeout is None or timeout >= 2 * expected + WAKE_UP_S


EPOLL = hasattr(selectors, "EpollSelector")

if EPOLL:

    class PreciseEpollSelector(selectors.EpollSelector):
        def __init__(self) -> None:
            super().__init__()
            self.collector = IdleCollector()
            self.ready_ns = time.monotonic_ns()  # when the last wait ended

        def select(self, timeout: float | None = None) -> Any:
            collecting = self.collector.before_wait(timeout)
            if timeout is not None and timeout > 0:
                timeout = max(timeout - collecting, 0.0)
                # Sleep until an event or until just before the timer (microsecond timeout),
                # then collect. The loop finds no timer due and comes back with the rest,
                # which it polls through: ~0.1-0.2 ms of polling per timer.
                wait = timeout - max(timeout / 1000, KERNEL_SLACK_MIN_S) - WAKE_UP_S
                if wait > 0:
                    select.select([self.fileno()], [], [], wait)
                timeout = 0
            events = super().select(timeout)
            self.ready_ns = time.monotonic_ns()
            return events

    class PreciseEventLoop(asyncio.SelectorEventLoop):
        """The loop on the precise selector; it knows when its last wait ended."""

        def __init__(self) -> None:
            self._precise = PreciseEpollSelector()
            super().__init__(self._precise)

        def ready_ns(self) -> int:
            return self._precise.ready_ns


def new_event_loop() -> asyncio.AbstractEventLoop:
    """Precise timers where epoll is available, the default loop elsewhere."""
    if EPOLL:
        return PreciseEventLoop()
    return asyncio.new_event_loop()


def wake_ns(loop: asyncio.AbstractEventLoop) -> int:
    """When bytes a protocol is reading now arrived, as well as the loop can tell: on the
    precise loop, when its last wait ended (the readers it found ready run in that loop turn,
    so a request's stamp does not include the time the readers before it took: requests read
    together are stamped together, and a take's answer falls due with theirs); elsewhere now.
    Monotonic ns, the clock of the queue a server runs (fake_queue.queue.clock.MONOTONIC)."""
    if EPOLL and isinstance(loop, PreciseEventLoop):
        return loop.ready_ns()
    return time.monotonic_ns()


def awake_around(loop: asyncio.AbstractEventLoop, when: float) -> Callable[[], None]:
    """Keep the precise loop polling from WAKE_UP_S before `when` (loop time) to WAKE_UP_S
    after it, for I/O expected then: a CPU that sleeps until the bytes arrive takes 0.1-0.4 ms
    to wake on these VMs (benchmarks/NOTES.md, harness overhead). The loop already polls the
    last WAKE_UP_S before every timer, so two empty timers do it. The canceller it returns
    ends the window (call it once the I/O came). Elsewhere: nothing."""
    if not (EPOLL and isinstance(loop, PreciseEventLoop)):
        return _nothing
    handles = [loop.call_at(when, _nothing), loop.call_at(when + WAKE_UP_S, _nothing)]

    def cancel() -> None:
        for handle in handles:
            handle.cancel()

    return cancel


def _nothing() -> None:
    pass


def run(main: Coroutine[Any, Any, T], *, idle_collection: bool = False) -> T:
    """asyncio.run on the precise loop. `idle_collection`: young collections in idle time only
    (IdleCollector), for the queue, whose answers due together must not wait for one. Not for
    a model worker: at the harness's ceiling (16 workers on one CPU, never idle long) its forced
    collections of a bigger young generation cost about 5 % of the throughput (7 of 7 runs
    below the automatic ones', benchmarks/NOTES.md)."""
    gc.set_threshold(*GC_THRESHOLDS)
    loop = new_event_loop()
    collect_when_idle = idle_collection and EPOLL and gc.isenabled()
    if collect_when_idle:
        gc.disable()  # the selector collects the young generations (IdleCollector)
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(main)
    finally:
        if collect_when_idle:
            gc.enable()
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            asyncio.set_event_loop(None)
            loop.close()
