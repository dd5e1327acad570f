"""jobbench's bench handler: what every bench job does. Standalone (stdlib only), so worker
processes in any environment can load it without importing jobbench's CLI stack."""

from __future__ import annotations

import asyncio
import time
from typing import Any


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
            await asyncio.sleep(max(begun + cpu_ms / 1000 + seconds - loop.time(), 0.0))
    if fail:
        raise RuntimeError("bench job asked to fail")
    result: dict[str, Any] = {"ok": True}
    if payload:
        result["payload"] = "x" * payload
    return result
