"""jobbench's bench handler: what every bench job does. Standalone (stdlib only), so worker
processes in any environment can load it without importing jobbench's CLI stack."""

from __future__ import annotations

import asyncio
import time
import weakref
from typing import Any

# Per loop: the futures of the sleeps ending at each instant, all woken by one timer.
_ENDING: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[float, list[asyncio.Future[None]]]
]
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


def sleep_until(loop: asyncio.AbstractEventLoop, when: float) -> asyncio.Future[None]:
    """A future done at loop time `when`: asyncio.sleep's, but the sleeps ending at one instant
    (a batch's jobs, started together) share one timer. 32 timers due together cost the worker
    ~0.1 ms more than one before the last job returns (docs/performance.md, harness overhead).
    Each sleeper has its own future, so cancelling one job leaves the others asleep."""
    ending = _ENDING.get(loop)
    if ending is None:
        ending = _ENDING[loop] = {}
    future: asyncio.Future[None] = loop.create_future()
    group = ending.get(when)
    if group is None:
        group = ending[when] = []
        loop.call_at(when, _wake, ending, when)
    group.append(future)
    return future


def _wake(ending: dict[float, list[asyncio.Future[None]]], when: float) -> None:
    for future in ending.pop(when, ()):
        if not future.done():
            future.set_result(None)


async def bench_handler(job: dict[str, Any], started: float | None = None) -> dict[str, Any]:
    """Burn `cpu_ms`, sleep the job's `seconds` (async: slots run concurrently), return
    `payload_bytes` of output. `fail: true` in the input raises, to exercise FAILED jobs.
    `started` (event loop time): the job began then, not when this coroutine first ran, so it
    ends `cpu_ms + seconds` after it, however long the worker took to start it."""
    seconds, cpu_ms, payload, fail = job_spec(job)
    if cpu_ms or seconds:
        loop = asyncio.get_running_loop()
        begun = loop.time() if started is None else started
        if cpu_ms:
            burn_cpu(cpu_ms)
        if seconds:
            await sleep_until(loop, begun + cpu_ms / 1000 + seconds)
    if fail:
        raise RuntimeError("bench job asked to fail")
    result: dict[str, Any] = {"ok": True}
    if payload:
        result["payload"] = "x" * payload
    return result
