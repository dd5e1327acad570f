"""What the simulator adds for a real SDK worker (core/sim/sdk_costs.py): its loop's timing,
drawn per worker from the rep's seed, and its CPU (a take's answer read, each job's start and
end) queued on the one core the workers share. In virtual time: no processes, no wall clock."""

from __future__ import annotations

import asyncio
import itertools
import random

import pytest

from fake_queue.queue import virtual_clock
from jobbench.core.scenario.build import build_scenario
from jobbench.core.sim.engine import simulate_rep
from jobbench.core.sim.sdk_costs import (
    ANSWER_CPU_PER_JOB_S,
    JOB_END_CPU_S,
    JOB_START_CPU_S,
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


def _batches(events: list[dict[str, object]]) -> list[tuple[float, list[float]]]:
    """Each take that brought jobs: its answer's time and its jobs' job-done times, sorted (ns)."""
    delivered: dict[object, tuple[object, object]] = {}
    for e in events:
        if e["ev"] == "deliver":
            delivered[e["job"]] = (e["worker"], e["take"])
    answers = {
        (e["worker"], e["take"]): float(e["t"])  # type: ignore[arg-type]
        for e in events
        if e["ev"] == "take"
    }
    ends: dict[tuple[object, object], list[float]] = {}
    for e in events:
        if e["ev"] == "done":
            ends.setdefault(delivered[e["job"]], []).append(float(e["t"]))  # type: ignore[arg-type]
    return sorted((answers[take], sorted(done)) for take, done in ends.items())


def test_a_workers_answer_and_each_jobs_start_and_end_cost_its_core_in_turn() -> None:
    """Take-ahead on one worker, two batches of 32: the first batch's jobs begin once the
    take's answer is read, one job's start apart (their job-dones too, the job's length
    later); the second, held, batch starts as slots free, each slot after its job's end and
    the next job's start, on the same core, so it spreads over more than 30 of both (the
    first held job waits for two ends and its start)."""
    events = _events("sdk-take-ahead", workers=1, burst=64, seed=3, rep=1, take_ahead=32)
    (answered, first), (_, second) = _batches(events)
    assert len(first) == len(second) == 32
    ns = 1e9  # the events count nanoseconds
    assert first[0] >= answered + (0.5 + 32 * ANSWER_CPU_PER_JOB_S + JOB_START_CPU_S) * ns - 1
    for a, b in itertools.pairwise(first):
        assert b - a == pytest.approx(JOB_START_CPU_S * ns, abs=1)
    assert second[-1] - second[0] >= 30 * (JOB_END_CPU_S + JOB_START_CPU_S) * ns - 1


def test_four_workers_queue_their_starts_for_the_one_core_they_share() -> None:
    """Four workers' first batches begin on the one core the workers share: no two of their
    128 jobs start (or post their job-done) less than a job's start apart, whichever worker
    each is on."""
    events = _events("sdk-take-ahead", workers=4, burst=256, seed=3, rep=1, take_ahead=32)
    batches = _batches(events)
    assert len({answered for answered, _ in batches[:4]}) == 1  # the burst's four answers
    together = sorted(t for _, done in batches[:4] for t in done)
    assert len(together) == 128
    gaps = [b - a for a, b in itertools.pairwise(together)]
    assert min(gaps) >= JOB_START_CPU_S * 1e9 - 1


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
