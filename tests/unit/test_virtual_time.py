"""The clock seam: the unmodified JobQueue and the model-worker policies, in one process on a
virtual-time loop (fake_queue.queue.virtual_clock), joined by the in-process link
(jobbench.workers.queue_link) as the simulation engine (jobbench.core.sim.engine) runs them,
reproduce the reference table's model cells exactly (docs/latency-model.md).

With the reference latency model (take 0.5 s, wake 0.05 s, 32 slots, take_ahead 32) the time
until 99 % of the burst is done follows from the model: drain is take + job per batch, take-ahead
one job length per batch. Here nothing else costs time, so the figures are exact to the
microsecond the metrics keep, and minutes of queue time take milliseconds.
"""

from __future__ import annotations

import asyncio

import pytest

from fake_queue.queue import virtual_clock
from fake_queue.queue.latency import Distribution, LatencyModel
from fake_queue.queue.virtual_clock import VirtualTimeDeadlock, VirtualTimeLoop
from jobbench.core.scenario.config import Scenario
from jobbench.core.scenario.worker import worker_spec
from jobbench.core.sim.engine import simulate_rep

SLOTS, TAKE_AHEAD = 32, 32
REFERENCE = LatencyModel(
    take=Distribution("fixed", 0.5),
    wake=Distribution("fixed", 0.05),
    hold=Distribution("fixed", 20.0),
    done=Distribution("fixed", 0.0),
)


# ---- the loop ---------------------------------------------------------------------------------


def test_timers_jump_and_fire_in_order() -> None:
    async def main() -> list[tuple[str, float]]:
        loop = asyncio.get_running_loop()
        fired: list[tuple[str, float]] = []
        loop.call_later(3600.0, lambda: fired.append(("hour", loop.time())))
        loop.call_later(0.25, lambda: fired.append(("quarter", loop.time())))
        await asyncio.sleep(7200.0)
        return fired

    # two hours of timers, fired at once (in real time this would outlast the test timeout)
    assert virtual_clock.run(main()) == [("quarter", 0.25), ("hour", 3600.0)]


def test_the_loop_is_a_clock_in_nanoseconds() -> None:
    async def main() -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, VirtualTimeLoop)
        before = loop.now_ns()
        await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        return before, loop.now_ns()

    assert virtual_clock.run(main(), start_s=10.0) == (10_000_000_000, 10_550_000_000)


def test_waiting_for_what_can_never_happen_raises_instead_of_hanging() -> None:
    async def main() -> None:
        await asyncio.get_running_loop().create_future()

    with pytest.raises(VirtualTimeDeadlock):
        virtual_clock.run(main())


# ---- the reference cells ----------------------------------------------------------------------


def reference_cell(policy: str, workers: int, burst: int, job_s: float) -> Scenario:
    take_ahead = TAKE_AHEAD if policy == "take-ahead" else 0
    return Scenario(
        name=f"{policy}-{workers}w-{burst}j",
        workers=workers,
        slots=SLOTS,
        burst=burst,
        job_seconds=job_s,
        worker=worker_spec("model", policy, take_ahead, None, None),
        latency=REFERENCE,
    )


@pytest.mark.parametrize(
    ("policy", "workers", "burst", "job_s", "p99_s"),
    [
        ("drain", 1, 512, 0.5, 15.55),  # 0.05 + 0.5 + 15 * (0.5 + 0.5)
        ("take-ahead", 1, 512, 0.5, 8.05),  # 0.05 + 16 * 0.5
        ("drain", 1, 256, 2.0, 19.55),  # 0.05 + 2 + 7 * (0.5 + 2)
        ("take-ahead", 1, 256, 2.0, 16.05),  # 0.05 + 8 * 2
        ("drain", 4, 1024, 0.5, 7.55),  # 256 a worker: 0.05 + 0.5 + 7 * 1.0
        ("take-ahead", 4, 1024, 0.5, 4.05),  # 0.05 + 8 * 0.5
        ("drain", 4, 64, 0.5, 0.55),  # shallow: two workers woken, one batch each
        ("take-ahead", 4, 64, 0.5, 0.55),
    ],
)
def test_reference_cells_are_reproduced_exactly(
    policy: str, workers: int, burst: int, job_s: float, p99_s: float
) -> None:
    # One rep as jobbench runs it (core/sim/engine.py): workers polling, a burst enqueued
    # atomically, metrics from the queue's event log.
    metrics = simulate_rep(reference_cell(policy, workers, burst, job_s), seed=1).measure.figures
    assert metrics["time_to_p99_s"] == pytest.approx(p99_s, abs=1e-6)
    assert metrics["jobs"]["completed"] == burst
    if burst >= workers * SLOTS:  # deep queue: the split is even
        assert set(metrics["split"]["jobs_per_worker"].values()) == {burst // workers}
