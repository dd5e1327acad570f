"""What the latency model predicts for each scheduling policy (docs/latency-model.md).

Deep-queue bursts split evenly: every worker runs `batches` full batches of `slots` jobs, all
workers in step. These are the numbers an implementation is checked against. The job cache
(runpod-python #429) has no such figure: which take sizes a rep gets follows which comes first,
a batch's ends or its 0.1 s re-check (docs/fixes.md, "Real branches"), so only the simulator
predicts it. Nor does a server that hands a take more than it asked (`take_extra`): every
figure here assumes a take claims at most what it asked.
"""

from __future__ import annotations

import math

from jobbench.workers.policies import DRAIN, JOB_CACHE, SDK_112, SDK_TAKE_AHEAD, TAKE_AHEAD


def batches_until(fraction: float, burst: int, workers: int, slots: int) -> int:
    """How many rounds of full batches it takes until `fraction` of the burst is done."""
    jobs = math.ceil(fraction * burst - 1e-9)
    return max(1, math.ceil(jobs / (workers * slots)))


NO_CLOSED_FORM = (JOB_CACHE,)  # the policies only the simulator predicts

SDK_PICKUP_S = 0.1  # 1.12.0 run_jobs: a finished slot is noticed within this tick


def sdk_recheck_s(job_seconds: float) -> float:
    """SDK 1.12.0 re-checks a full worker every 1 s, so a batch waits whole seconds."""
    return max(1.0, float(math.ceil(job_seconds + SDK_PICKUP_S)))


def expected_time_s(
    policy: str,
    *,
    burst: int,
    workers: int,
    slots: int,
    job_seconds: float,
    take_s: float,
    wake_s: float,
    fraction: float = 0.99,
) -> float:
    """Time from burst start until `fraction` of the jobs are done, by the model."""
    rounds = batches_until(fraction, burst, workers, slots)
    first = wake_s + job_seconds  # the first batch was long-polling: woken, then run
    if policy == DRAIN:
        return first + (rounds - 1) * (take_s + job_seconds)
    if policy in (TAKE_AHEAD, SDK_TAKE_AHEAD):
        # The SDK's take-ahead buffers the next batch as the ideal does; its 0.1 s pickup tick
        # is left out, as sdk-1.12's first one is (docs/latency-model.md, "Fine points").
        return first + (rounds - 1) * max(take_s, job_seconds)
    if policy == SDK_112:
        return first + (rounds - 1) * (take_s + sdk_recheck_s(job_seconds))
    raise ValueError(f"no analytic model for policy {policy!r}")
