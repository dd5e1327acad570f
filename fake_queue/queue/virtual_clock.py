"""An asyncio event loop on virtual time: whenever nothing is ready to run, its clock jumps to
the next timer instead of waiting for it. Stdlib only.

The loop is also a `fake_queue.queue.clock.Clock`, so a `JobQueue(sampler, clock=loop)` and the
model-worker policies it serves (through an in-process link, jobbench.workers.queue_link) run
minutes of queue time in milliseconds, with every timer exactly on time. Nothing may wait on
real I/O or another thread: when nothing is ready and no timer is left the loop raises
`VirtualTimeDeadlock` rather than block forever.

Timers are kept by due time, one list per instant, with a heap of the instants (floats,
compared in C), instead of asyncio's heap of handles compared in Python: a simulated burst
sets thousands of timers for the same few instants (a batch's jobs all end together), and a
million-job rep pops about a million of them.
"""

from __future__ import annotations

import asyncio
import heapq
from asyncio.events import Handle, TimerHandle
from collections.abc import Callable, Coroutine
from contextvars import Context, copy_context
from typing import Any, TypeVar

T = TypeVar("T")


class VirtualTimeDeadlock(RuntimeError):
    """Nothing is ready and no timer is scheduled: on virtual time nothing can ever happen."""


def _fill_handle(
    handle: Handle,
    callback: Callable[..., object],
    args: tuple[Any, ...],
    loop: asyncio.AbstractEventLoop,
    context: Context | None,
) -> None:
    """What Handle.__init__ sets, without asking the loop whether it is in debug mode (a
    simulated rep makes millions of handles; this loop never runs in debug mode)."""
    handle._context = copy_context() if context is None else context  # type: ignore[attr-defined]
    handle._loop = loop  # type: ignore[attr-defined]
    handle._callback = callback  # type: ignore[attr-defined]
    handle._args = args
    handle._cancelled = False
    handle._repr = None  # type: ignore[attr-defined]
    handle._source_traceback = None  # type: ignore[attr-defined]


class _SoonHandle(Handle):
    __slots__ = ()

    def __init__(
        self,
        callback: Callable[..., object],
        args: tuple[Any, ...],
        loop: asyncio.AbstractEventLoop,
        context: Context | None = None,
    ) -> None:
        _fill_handle(self, callback, args, loop, context)


class _TimerHandle(TimerHandle):
    __slots__ = ()

    def __init__(
        self,
        when: float,
        callback: Callable[..., object],
        args: tuple[Any, ...],
        loop: asyncio.AbstractEventLoop,
        context: Context | None = None,
    ) -> None:
        _fill_handle(self, callback, args, loop, context)
        self._when = when
        self._scheduled = False


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """A selector event loop whose `time()` is virtual, starting at `start_s`."""

    def __init__(self, start_s: float = 0.0) -> None:
        self._virtual_s = start_s
        self._timers: dict[float, list[TimerHandle]] = {}  # due time -> timers, in order set
        self._timer_times: list[float] = []  # a heap of the keys of _timers
        super().__init__()
        # Timers due before time() + resolution fire: the clock lands on a timer exactly.
        self._clock_resolution = 1e-9

    def time(self) -> float:
        return self._virtual_s

    def now_ns(self) -> int:
        """The loop's time as a `Clock`: whole nanoseconds."""
        return round(self._virtual_s * 1e9)

    def call_soon(  # type: ignore[override]  # typeshed's is generic over *args
        self, callback: Callable[..., object], *args: Any, context: Context | None = None
    ) -> Handle:
        """As asyncio's, less its debug-mode checks (a simulated rep calls it millions of
        times; this loop never runs in debug mode)."""
        if self._closed:  # type: ignore[attr-defined]
            raise RuntimeError("Event loop is closed")
        handle = _SoonHandle(callback, args, self, context)
        self._ready.append(handle)  # type: ignore[attr-defined]
        return handle

    def call_at(  # type: ignore[override]  # typeshed's is generic over *args
        self,
        when: float,
        callback: Callable[..., object],
        *args: Any,
        context: Context | None = None,
    ) -> TimerHandle:
        if when is None:
            raise TypeError("when cannot be None")
        self._check_closed()  # type: ignore[attr-defined]
        timer = _TimerHandle(when, callback, args, self, context)
        due = self._timers.get(when)
        if due is None:
            self._timers[when] = [timer]
            heapq.heappush(self._timer_times, when)
        else:
            due.append(timer)
        timer._scheduled = True
        return timer

    def _run_once(self) -> None:
        """One iteration: if nothing is ready (nor made ready by polling the selector), jump to
        the next timer; fire the timers now due (those set for the same instant in the order
        they were set); run what is ready."""
        ready: Any = self._ready  # type: ignore[attr-defined]
        if not ready and not self._stopping:  # type: ignore[attr-defined]
            # The selector is polled only here, where a real loop would wait in it: polled
            # every turn, it was ~5 % of a simulated rep's time, for a self-pipe nothing writes.
            self._process_events(self._selector.select(0))  # type: ignore[attr-defined]
            if not ready:
                self._jump_to_next_timer()
        end = self._virtual_s + self._clock_resolution
        times = self._timer_times
        while times and times[0] < end:
            for timer in self._timers.pop(heapq.heappop(times)):
                timer._scheduled = False  # type: ignore[attr-defined]
                if not timer._cancelled:
                    ready.append(timer)
        for _ in range(len(ready)):  # not those the callbacks schedule: they run next time
            handle = ready.popleft()
            if not handle._cancelled:
                handle._run()

    def _jump_to_next_timer(self) -> None:
        """The clock onto the earliest instant with a timer still set; instants whose timers
        were all cancelled are dropped without moving it, as asyncio drops cancelled timers."""
        times = self._timer_times
        while times:
            due = self._timers[times[0]]
            if any(not timer._cancelled for timer in due):
                self._virtual_s = max(self._virtual_s, times[0])
                return
            for timer in self._timers.pop(heapq.heappop(times)):
                timer._scheduled = False  # type: ignore[attr-defined]
        raise VirtualTimeDeadlock("nothing is ready and no timer is scheduled")

    def close(self) -> None:
        self._timers.clear()
        self._timer_times.clear()
        super().close()


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
