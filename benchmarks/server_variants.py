"""Benchmark-only launcher: `python -m fake_queue` with optional monkeypatched changes.

It takes every `python -m fake_queue` flag plus `--variant NAME` (repeatable, or comma-separated)
and patches the server in this process only, so the benchmarks can measure a proposed change before
anyone edits fake_queue/. Nothing here is used by the product.

Variants:
  uvloop       run the server on uvloop instead of the asyncio default loop
  orjson       serialize JSON responses and parse request bodies with orjson
  gc-freeze    raise the gen-0 threshold and move survivors to the permanent generation after
               each burst (gc.freeze), so full collections never walk the job table
  gc-no-full   keep gen-0/1 collections, never an automatic full one (threshold2 = 2**31-1);
               gc.collect() at /_bench/reset instead
  gc-off       disable the cyclic GC entirely (upper bound for the gc-* variants)
  precise      asyncio loop whose selector rounds timeouts down to whole ms (not up), then
               polls the last < 1 ms: timers fire on time instead of 0-1 ms late
  gc-log       write every GC pause (generation, ms) to $FQ_GC_LOG at exit
  no-lane      no fast lane: aiohttp's routes answer every request (fake_queue before the lane)
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import gc
import os
import sys
import time
from typing import Any


def _uvloop() -> None:
    import uvloop

    import fake_queue.precise_loop as precise_loop

    # The server runs on precise_loop.run, which makes its own loop and ignores the event loop
    # policy: the loop it makes is what must change.
    precise_loop.new_event_loop = uvloop.new_event_loop  # type: ignore[assignment]


def _orjson() -> None:
    import functools

    import orjson
    from aiohttp import web

    import fake_queue.http.http_util as http_util

    def dumps(obj: Any) -> str:
        return orjson.dumps(obj).decode()

    fast = functools.partial(web.json_response, dumps=dumps)
    for mod_name in (
        "fake_queue.http.app",
        "fake_queue.http.worker_routes",
        "fake_queue.http.client_routes",
        "fake_queue.http.http_util",
    ):
        mod = sys.modules[mod_name]
        mod.web = _WebProxy(web, fast)  # type: ignore[attr-defined]

    class _Json:
        @staticmethod
        def loads(raw: Any) -> Any:
            return orjson.loads(raw)

        @staticmethod
        def dumps(obj: Any) -> str:
            return dumps(obj)

    for module in (http_util, sys.modules["fake_queue.http.worker_routes"]):
        setattr(module, "json", _Json)  # noqa: B010 (a module attribute mypy cannot see replaced)


class _WebProxy:
    """`aiohttp.web` with json_response swapped; everything else passes through."""

    def __init__(self, web: Any, json_response: Any) -> None:
        self._web = web
        self.json_response = json_response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._web, name)


def _gc_freeze() -> None:
    import fake_queue.queue.job_queue as q

    gc.set_threshold(50_000, 20, 100)
    original = q.JobQueue.submit_many

    def submit_many(self: Any, payloads: Any, **kw: Any) -> Any:
        jobs = original(self, payloads, **kw)
        gc.freeze()  # long-lived jobs move out of the collector's way
        return jobs

    q.JobQueue.submit_many = submit_many  # type: ignore[method-assign]


def _gc_no_full() -> None:
    """Young generations as usual; no automatic full (gen-2) collection. Long-lived jobs are
    never walked again; a full collection runs at /_bench/reset, between reps."""
    import fake_queue.queue.job_queue as q

    gc.set_threshold(700, 10, 2**31 - 1)
    original = q.JobQueue.reset

    def reset(self: Any) -> None:
        original(self)
        gc.collect()

    q.JobQueue.reset = reset  # type: ignore[method-assign]


def _precise() -> None:
    """asyncio's loop with a selector that rounds its timeout down, not up, to whole ms.

    EpollSelector.select rounds a timeout up to the next millisecond (epoll_wait counts whole
    ms), so every timer fires 0-1 ms late (0.5 ms on average). Rounding down instead wakes the
    loop up to 1 ms early; the loop then finds no timer due, asks for the remaining < 1 ms,
    which rounds to 0, and polls until the timer is due: exact timers for < 1 ms of polling."""
    import math
    import selectors

    class FloorEpollSelector(selectors.EpollSelector):
        def select(self, timeout: float | None = None) -> Any:
            if timeout is not None and timeout > 0:
                # the parent computes ceil(timeout_ms); floor(ms) - 0.5 makes that floor(ms)
                timeout = max(0.0, (math.floor(timeout * 1e3) - 0.5) * 1e-3)
            return super().select(timeout)

    class Policy(asyncio.DefaultEventLoopPolicy):
        def new_event_loop(self) -> asyncio.AbstractEventLoop:
            return asyncio.SelectorEventLoop(FloorEpollSelector())

    asyncio.set_event_loop_policy(Policy())


def _gc_log() -> None:
    path = os.environ.get("FQ_GC_LOG", "/tmp/fq_gc.log")
    pauses: list[tuple[int, float, int]] = []
    started: list[float] = [0.0]

    def callback(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            pauses.append(
                (info["generation"], (time.perf_counter() - started[0]) * 1e3, info["collected"])
            )

    gc.callbacks.append(callback)

    @atexit.register
    def dump() -> None:
        with open(path, "w") as fh:
            for gen, ms, collected in pauses:
                fh.write(f"{gen} {ms:.3f} {collected}\n")


def _no_lane() -> None:
    import fake_queue.http.server as server

    server.FastLane.serving = classmethod(lambda cls, *_: None)  # type: ignore[method-assign,assignment,arg-type]


VARIANTS = {
    "no-lane": _no_lane,
    "gc-log": _gc_log,
    "gc-freeze": _gc_freeze,
    "gc-no-full": _gc_no_full,
    "gc-off": gc.disable,
    "uvloop": _uvloop,
    "orjson": _orjson,
    "precise": _precise,
}


def main() -> int:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--variant", action="append", default=[])
    p.add_argument("--help-variants", action="store_true")
    ours, rest = p.parse_known_args()
    if ours.help_variants:
        print(__doc__)
        return 0
    names = [n for v in ours.variant for n in v.split(",") if n]
    from fake_queue.__main__ import main as fq_main

    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        print(f"unknown --variant {unknown}; use {', '.join(VARIANTS)}", file=sys.stderr)
        return 2
    for name in VARIANTS:  # a fixed order, so variants compose
        if name in names:
            VARIANTS[name]()
    return fq_main(rest)


if __name__ == "__main__":
    sys.exit(main())
