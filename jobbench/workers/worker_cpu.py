"""What a worker's own code costs at each step of a job, beyond the steps a link makes:
`WorkerCpu`, the hooks both links call (queue_link.QueueLink in virtual time, http_link.HttpLink
in a model worker process), and `SdkCodeCpu`, the hooks a model worker process of an SDK-based
policy runs: the CPU the real SDK's code spends at those steps and the model's does not.

The SDK-based models (sdk-1.12 and the two fixes on its loops) run the SDK's loops on its loop
and its HTTP client, but not the rest of its code a job goes through: runpod 1.12.0's
`handle_job`, `run_job` and `send_result` (its log calls, its debugger hook, its retrying
client, JobsProgress). That code is CPU on the worker's one loop, so it sets how far apart a
batch's ends fall, and the job cache's take sizes follow a race between its 0.1 s tick and those
ends (docs/fixes.md, "Real branches"). Timestamps inside a copy of the job-cache branch and of
its model (1 x 512 jobs of 0.5 s, 6 reps a side, 2026-12-06) put the SDK's extra code at these
steps, as the median gap between two of a batch's consecutive steps of one kind:

| step | real branch | model | SDK's code beyond the model's |
|---|---|---|---|
| a job started | 45 us | 39 us | 6 us |
| a handler's return to its job-done POST sent | 196 us | 129 us | 67 us |
| a job-done's reply to its slot free | 60 us | 33 us | 27 us |

and a take's answer of 50 jobs (the first take of a burst) reaches the taker's next step 300-440
us after its arrival on the branch and 65-150 us on the model, 5-7 us a job beyond the model's
(its jobs queued one by one, each made a `Job` for JobsProgress and passed to a log call). The
sum, 0.1 ms a job, is what the harness measured the workers' CPU per job to differ by on
both branches' seed rows (0.07-0.11 ms, `worker_cpu_ms_per_job`).
"""

from __future__ import annotations

import time
from typing import Protocol

SDK_ANSWER_CPU_PER_JOB_S = 0.000006
SDK_JOB_START_CPU_S = 0.000006
SDK_JOB_END_CPU_S = 0.000067
SDK_REPLY_CPU_S = 0.000027


class WorkerCpu(Protocol):
    """What a worker's own CPU adds to its steps: each returns once that work is done."""

    async def answer_read(self, jobs: int) -> None:
        """A take's answer of `jobs` jobs read, before the worker has them."""

    async def job_started(self) -> None:
        """A job started, before its handler runs."""

    async def jobs_ended(self, jobs: int) -> None:
        """The ends of `jobs` jobs: their handlers' returns and their job-done POSTs sent."""

    async def reply_read(self) -> None:
        """A job-done's answer read, on a turn of the worker's loop: its slot frees then."""


def spend_cpu(seconds: float) -> None:
    """Run this thread on the CPU for `seconds` of its own CPU time, as code would: a
    preempted spin goes on once the thread runs again."""
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass


class SdkCodeCpu:
    """WorkerCpu of an SDK-based model in a worker process: the SDK's code beyond the model's,
    spent where the SDK spends it, in the loop's thread (it holds the loop, as that code does)."""

    async def answer_read(self, jobs: int) -> None:
        spend_cpu(jobs * SDK_ANSWER_CPU_PER_JOB_S)

    async def job_started(self) -> None:
        spend_cpu(SDK_JOB_START_CPU_S)

    async def jobs_ended(self, jobs: int) -> None:
        spend_cpu(jobs * SDK_JOB_END_CPU_S)

    async def reply_read(self) -> None:
        spend_cpu(SDK_REPLY_CPU_S)
