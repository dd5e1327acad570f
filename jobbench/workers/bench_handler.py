"""jobbench's bench handler: what every bench job does. Standalone (stdlib only), so worker
processes in any environment can load it without importing jobbench's CLI stack."""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Callable
from typing import Any, Union

# Per loop: what waits for each instant, all woken by one timer: the futures of the sleeps
# ending then, and the ends of the jobs run without a task (call_when).
Waiter = Union["asyncio.Future[None]", Callable[[], None]]
_ENDING: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[float, list[Waiter]]]
_ENDING = weakref.WeakKeyDictionary()


def job_spec(job: dict[str, Any]) -> tuple[float, float, int, bool]:
    """(seconds to sleep, CPU milliseconds to burn, result payload bytes, whether to fail)
    from a job's input."""
    raw = job.get("input")
    if not isinstance(raw, dict):
        return 0.0, 0.0, 0, False
    seconds = float(raw.get("seconds", 0.0) or 0.0)
    cpu_ms = float(raw.get("cpu_ms", 0.0) or 0.0)
    payload = int(raw.get("payload_bytes", 0) or 0)
    return max(seconds, 0.0), max(cpu_ms, 0.0), max(payload, 0), bool(raw.get("fail"))


def burn_cpu(milliseconds: float) -> None:
    deadline = time.perf_counter() + milliseconds / 1000
    while time.perf_counter() < deadline:
        pass


def begin(
    loop: asyncio.AbstractEventLoop, spec: tuple[float, float, int, bool], started: float | None
) -> float | None:
    """A bench job's start: burn its CPU; the loop time its sleep ends (None: it does not
    sleep). `started` (loop time): the job began then, not now, so it ends `cpu_ms + seconds`
    after it, however long the worker took to start it."""
    seconds, cpu_ms, _, _ = spec
    if not (cpu_ms or seconds):
        return None
    begun = loop.time() if started is None else started
    if cpu_ms:
        burn_cpu(cpu_ms)
    return begun + cpu_ms / 1000 + seconds if seconds else None


def output(spec: tuple[float, float, int, bool]) -> dict[str, Any]:
    """A bench job's end: its output, or the error it asked for (`fail: true`)."""
    _, _, payload, fail = spec
    if fail:
        raise RuntimeError("bench job asked to fail")
    result: dict[str, Any] = {"ok": True}
    if payload:
        result["payload"] = "x" * payload
    return result


def _ending(loop: asyncio.AbstractEventLoop, when: float) -> list[Waiter]:
    """The waiters of instant `when`, its timer set by the first of them."""
    ending = _ENDING.get(loop)
    if ending is None:
        ending = _ENDING[loop] = {}
    group = ending.get(when)
    if group is None:
        group = ending[when] = []
        loop.call_at(when, _wake, loop, ending, when)
    return group


def sleep_until(loop: asyncio.AbstractEventLoop, when: float) -> asyncio.Future[None]:
    """A future done at loop time `when`: asyncio.sleep's, but the sleeps ending at one instant
    (a batch's jobs, started together) share one timer. 32 timers due together cost the worker
    ~0.1 ms more than one before the last job returns (benchmarks/NOTES.md, harness overhead).
    Each sleeper has its own future, so cancelling one job leaves the others asleep."""
    future: asyncio.Future[None] = loop.create_future()
    _ending(loop, when).append(future)
    return future


def call_when(loop: asyncio.AbstractEventLoop, when: float, callback: Callable[[], None]) -> None:
    """`callback()` at loop time `when`, on the timer the sleeps ending then share, in the
    loop turn a sleeping task would wake in and in its place among them (the order they were
    set in). A job run without a task ends this way: no future, no task step."""
    _ending(loop, when).append(callback)


def _wake(loop: asyncio.AbstractEventLoop, ending: dict[float, list[Waiter]], when: float) -> None:
    # A future's sleeper wakes in the next loop turn (its task's step is scheduled as its
    # result is set); callbacks in a row run there too, in one handle, in their place.
    calls: list[Callable[[], None]] = []
    for waiter in ending.pop(when, ()):
        if isinstance(waiter, asyncio.Future):
            if calls:
                loop.call_soon(_call_each, loop, calls)
                calls = []
            if not waiter.done():
                waiter.set_result(None)
        else:
            calls.append(waiter)
    if calls:
        loop.call_soon(_call_each, loop, calls)


def _call_each(loop: asyncio.AbstractEventLoop, calls: list[Callable[[], None]]) -> None:
    """Each callback, as if each were a handle of its own: one's error spares the others."""
    for call in calls:
        try:
            call()
        except Exception as exc:
            loop.call_exception_handler({"message": "a job's end failed", "exception": exc})


async def bench_handler(job: dict[str, Any], started: float | None = None) -> dict[str, Any]:
    """Burn `cpu_ms`, sleep the job's `seconds` (async: slots run concurrently), return
    `payload_bytes` of output. `fail: true` in the input raises, to exercise FAILED jobs.
    `started` (event loop time): the job began then, not when this coroutine first ran, so it
    ends `cpu_ms + seconds` after it, however long the worker took to start it."""
    spec = job_spec(job)
    if spec[0] or spec[1]:
        loop = asyncio.get_running_loop()
        if (when := begin(loop, spec, started)) is not None:
            await sleep_until(loop, when)
    return output(spec)
