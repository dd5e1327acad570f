"""What the simulator adds for a real SDK worker (core/sim/sdk_costs.py): its loop's timing,
drawn per worker from the rep's seed, and its job ends queued on the one core the workers
share. In virtual time: no processes, no wall clock."""

from __future__ import annotations

import asyncio
import itertools
import random

import pytest

from fake_queue.queue import virtual_clock
from jobbench.core.scenario.build import build_scenario
from jobbench.core.sim.engine import simulate_rep
from jobbench.core.sim.sdk_costs import (
    JOB_END_CPU_S,
    LOOP_LATE_MAX_S,
    DrawnTiming,
    SdkCosts,
    SharedCore,
)
from jobbench.workers.policy_sdk112 import PICKUP_S
from jobbench.workers.spec import WorkerSpec


def test_the_shared_core_runs_job_ends_first_come_first_served() -> None:
    async def ends() -> list[float]:
        core, loop, ended = SharedCore(), asyncio.get_running_loop(), []

        async def end(seconds: float) -> None:
            await core.run(seconds)
            ended.append(loop.time())

        begun = loop.time()
        await asyncio.gather(end(0.002), end(0.001), end(0.003))
        await asyncio.sleep(1.0)  # idle: the next end starts when it comes
        await end(0.001)
        return [t - begun for t in ended]

    assert virtual_clock.run(ends()) == pytest.approx([0.002, 0.003, 0.006, 1.007])


def test_a_workers_loop_timing_is_drawn_within_its_bounds_and_repeats_for_a_seed() -> None:
    first, again, other = (SdkCosts(seed).timing("w0") for seed in (7, 7, 8))
    draws = [[t.late_s() for _ in range(50)] + [t.first_tick_s()] for t in (first, again, other)]
    assert draws[0] == draws[1] != draws[2]
    assert all(0 <= late <= LOOP_LATE_MAX_S for late in draws[0][:-1])
    assert 0 <= draws[0][-1] < PICKUP_S
    assert SdkCosts(7).timing("w1").late_s() != draws[0][0]  # each worker its own draws
    tick = DrawnTiming(random.Random(1)).first_tick_s()
    assert tick != DrawnTiming(random.Random(2)).first_tick_s()


def _events(
    policy: str, workers: int, burst: int, seed: int, rep: int, take_ahead: int = 0
) -> list[dict[str, object]]:
    scenario = build_scenario(
        workers=workers, burst=burst, job_seconds=0.5, slots=32,
        worker=WorkerSpec(kind="model", policy=policy, take_ahead=take_ahead),
    )  # fmt: skip
    return simulate_rep(scenario, seed=seed, rep=rep, keep_events=True).events


def test_four_workers_job_ends_queue_for_the_one_core_they_share() -> None:
    """Take-ahead on four workers, two batches each: a batch's job-done posts reach the queue
    together, but each job's end then costs the one core the workers share before its slot
    frees and a held job starts in it, so the second batches' 128 jobs end one job's CPU apart,
    whichever worker each is on."""
    events = _events("sdk-take-ahead", workers=4, burst=256, seed=3, rep=1, take_ahead=32)
    done = sorted(float(e["t"]) for e in events if e["ev"] == "done")  # type: ignore[arg-type]
    by_worker: dict[object, list[float]] = {}
    for e in events:
        if e["ev"] == "done":
            by_worker.setdefault(e["worker"], []).append(float(e["t"]))  # type: ignore[arg-type]
    assert len(done) == 256
    for ends in by_worker.values():  # each worker's first batch: its posts at one instant
        assert sorted(ends)[31] == sorted(ends)[0]
    second = done[128:]
    gaps = [b - a for a, b in itertools.pairwise(second)]
    assert min(gaps) == pytest.approx(JOB_END_CPU_S * 1e9, abs=1)  # these count nanoseconds
    assert second[-1] - second[0] >= 127 * JOB_END_CPU_S * 1e9 - 1


def test_the_job_cache_takes_more_than_one_path_as_a_real_worker_does() -> None:
    """#429's take sizes follow who comes first to a 0.1 s tick: with the SDK's loop timing
    drawn, reps of one seeded run take different paths (docs/fixes.md, "Real branches"), and
    the same seed gives the same ones again."""

    def path(rep: int) -> tuple[object, ...]:
        events = _events("job-cache", workers=1, burst=256, seed=11, rep=rep)
        return tuple(e["asked"] for e in events if e["ev"] == "take")

    paths = [path(rep) for rep in range(1, 7)]
    assert len(set(paths)) > 1
    assert path(2) == paths[1]
