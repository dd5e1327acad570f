"""Running one job as runpod 1.12.0's run_job does: the bench handler, and the job-done body
it makes of the handler's return or error. Stdlib only (no aiohttp): both links use it, the
HTTP one (http_link.HttpLink) and the in-process one (queue_link.QueueLink).

Two forms of one run: `run_handler`, a coroutine (a policy that gives each job a task, as sdk-1.12
does), and `start_bench_runs`, jobs run without a task of their own (drain and take-ahead): a bench
job is a CPU burn and a sleep to a known instant, so its end is a callback on the timer its batch
shares, in the loop turn its task would have woken in. The body and the turns are the same; a task,
its two steps and its future a job were about a quarter of a simulated job's cost
(benchmarks/NOTES.md, "No task a job")."""

from __future__ import annotations

import asyncio
import json
import os
import traceback
from collections.abc import Sequence
from typing import Any

from jobbench.workers import bench_handler as bench
from jobbench.workers.policy_base import Job, OnEnd, Run

RUNPOD_VERSION = "1.12.0"  # the SDK whose protocol the model worker speaks


async def run_handler(job: Job, worker_id: str, started: float | None = None) -> dict[str, Any]:
    """The job-done body, shaped as 1.12.0's run_job shapes it. `started`: when the job got
    its slot (event loop time), if before now."""
    try:
        output: Any = await bench.bench_handler(job, started)
    except Exception as exc:
        return error_body(exc, worker_id)
    return done_body(output)


def done_body(output: Any) -> dict[str, Any]:
    """The job-done body of a handler's return."""
    result: dict[str, Any] = {"output": output}
    if isinstance(output, dict):
        error, refresh = output.pop("error", None), output.pop("refresh_worker", None)
        if error:
            result["error"] = error
        if refresh:
            result["stopPod"] = True
    if result.get("output") == {}:
        del result["output"]
    return result


def error_body(exc: Exception, worker_id: str) -> dict[str, Any]:
    """The job-done body of a handler's error (call it where the error is being handled)."""
    info = {
        "error_type": str(type(exc)),
        "error_message": str(exc),
        "error_traceback": traceback.format_exc(),
        "hostname": os.environ.get("RUNPOD_POD_HOSTNAME", "unknown"),
        "worker_id": worker_id,
        "runpod_version": RUNPOD_VERSION,
    }
    return {"error": json.dumps(info)}


class BenchRun:
    """A bench job run without a task: `begin` burns its CPU and sets its end on the timer of
    the sleeps ending at that instant (bench_handler.call_when); its end makes the body and
    calls `on_end`. A stopped run does neither."""

    __slots__ = ("job", "on_end", "spec", "started", "stopped", "worker_id")

    def __init__(
        self,
        job: Job,
        started: float,
        worker_id: str,
        on_end: OnEnd,
        spec: tuple[float, float, int, bool],
    ) -> None:
        self.job = job
        self.started = started
        self.worker_id = worker_id
        self.on_end = on_end
        self.stopped = False
        self.spec = spec

    def stop(self) -> None:
        self.stopped = True

    def begin(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            when = bench.begin(loop, self.spec, self.started)
        except Exception as exc:
            self.on_end(self, error_body(exc, self.worker_id))
            return
        if when is None:
            self.end()
        else:
            bench.call_when(loop, when, self.end)

    def end(self) -> None:
        if self.stopped:
            return
        try:
            output = bench.output(self.spec)
        except Exception as exc:
            body = error_body(exc, self.worker_id)
        else:
            body = done_body(output)
        self.on_end(self, body)


def start_bench_runs(
    batch: list[tuple[Job, float]], worker_id: str, on_end: OnEnd
) -> Sequence[Run]:
    """Bench jobs given slots together, (job, when it got its slot): they begin in the next
    loop turn, in order, as their tasks' first steps would (a take this made due goes out
    first), all in one handle."""
    runs = []
    last_input, spec = None, (0.0, 0.0, 0, False)
    for job, started in batch:
        # One spec per input: a burst's jobs often share one input object (the simulator's do)
        if (given := job.get("input")) is not last_input or given is None:
            last_input, spec = given, bench.job_spec(job)
        runs.append(BenchRun(job, started, worker_id, on_end, spec))
    loop = asyncio.get_running_loop()
    loop.call_soon(_begin_each, loop, runs)
    return runs


def _begin_each(loop: asyncio.AbstractEventLoop, runs: list[BenchRun]) -> None:
    for run in runs:
        if not run.stopped:  # stopped before it began: it never runs
            run.begin(loop)
