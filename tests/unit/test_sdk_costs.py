"""What the simulator adds for a real SDK worker (core/sim/sdk_costs.py): its loop's timing,
drawn per worker from the rep's seed, and its CPU (a take's answer read, each job's start and
end) queued on the one core the workers share. In virtual time: no processes, no wall clock."""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import Awaitable, Callable

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
from jobbench.workers.policy_sdk112 import PICKUP_S, Sdk112Policy
from jobbench.workers.spec import WorkerSpec


def test_the_shared_core_books_work_first_come_first_served() -> None:
    core = SharedCore()
    assert [core.book(0.0, s) for s in (0.002, 0.001, 0.003)] == pytest.approx(
        [0.002, 0.003, 0.006]
    )
    assert core.book(1.0, 0.001) == pytest.approx(1.001)  # idle: the next work starts when it comes


def test_a_workers_loop_timing_is_drawn_within_its_bounds_and_repeats_for_a_seed() -> None:
    first, again, other = (SdkCosts(seed).worker("w0") for seed in (7, 7, 8))
    draws = [[t.late_s() for _ in range(50)] + [t.first_tick_s()] for t in (first, again, other)]
    assert draws[0] == draws[1] != draws[2]
    assert all(0 <= late <= LOOP_LATE_MAX_S for late in draws[0][:-1])
    assert 0 <= draws[0][-1] < PICKUP_S
    assert SdkCosts(7).worker("w1").late_s() != draws[0][0]  # each worker its own draws
    tick = DrawnTiming(random.Random(1)).first_tick_s()
    assert tick != DrawnTiming(random.Random(2)).first_tick_s()


def test_a_workers_turn_waits_for_its_own_work_and_a_reply_for_a_tick_due_with_it() -> None:
    """Two workers on the core: a tick due while its worker's core work is queued goes on when
    that work is done, a job-done's reply read then goes on after it, and neither waits for
    work the other worker queued after its own."""

    async def order() -> list[tuple[str, float]]:
        costs, loop, seen = SdkCosts(1), asyncio.get_running_loop(), []
        w0, w1 = costs.worker("w0"), costs.worker("w1")

        async def step(name: str, wait: Callable[[], Awaitable[None]]) -> None:
            await wait()
            seen.append((name, loop.time()))

        begun = loop.time()
        ends = asyncio.gather(w0.jobs_ended(10), w1.jobs_ended(10))  # w0's work first
        await asyncio.sleep(0)
        await asyncio.gather(ends, step("reply", w0.reply_read), step("tick", w0.turn),
                             step("w1 tick", w1.turn))  # fmt: skip
        return [(name, t - begun) for name, t in seen]

    w0_done, w1_done = 10 * JOB_END_CPU_S, 20 * JOB_END_CPU_S
    assert virtual_clock.run(order()) == [
        ("tick", pytest.approx(w0_done)),
        ("reply", pytest.approx(w0_done)),
        ("w1 tick", pytest.approx(w1_done)),
    ]


def test_a_simulated_sdk_worker_has_its_takes_jobs_once_its_queued_work_is_done() -> None:
    """1.12.0's wait_for in virtual time: an answer reaches the taker a loop turn late, after
    the core work its worker had queued (a batch's job ends), not in the step that reads it."""

    class AtOnce:
        """A link whose take is answered at once with one job."""

        async def take(
            self, count: int, in_progress: bool, on_sent: Callable[[], None] | None = None
        ) -> list[dict[str, object]]:
            return [{"id": "a0", "input": {}}]

    async def accepted_after() -> tuple[float, list[str]]:
        loop = asyncio.get_running_loop()
        worker = SdkCosts(1).worker("w0")
        policy = Sdk112Policy(AtOnce(), 1, worker)  # type: ignore[arg-type]
        begun = loop.time()
        ends = asyncio.ensure_future(worker.jobs_ended(10))
        await asyncio.sleep(0)  # the ends are queued on the core first
        await policy.try_fetch(1, False)
        accepted = (loop.time() - begun, policy.job_ids())
        await ends
        return accepted

    assert virtual_clock.run(accepted_after()) == (pytest.approx(10 * JOB_END_CPU_S), ["a0"])


def _events(
    policy: str,
    workers: int,
    burst: int,
    seed: int,
    rep: int,
    take_ahead: int = 0,
    job_seconds: float = 0.5,
) -> list[dict[str, object]]:
    scenario = build_scenario(
        workers=workers, burst=burst, job_seconds=job_seconds, slots=32,
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
    take's answer is read, one job's start apart, and post their job-dones one job's end apart
    (an end costs more than a start, so the ends queue for the core). The held batch begins
    only once the first one's ends are done: its slots free as the loop reads the job-dones'
    replies, after the ends it had queued."""
    events = _events("sdk-take-ahead", workers=1, burst=64, seed=3, rep=1, take_ahead=32)
    (answered, first), (_, second) = _batches(events)
    assert len(first) == len(second) == 32
    ns = 1e9  # the events count nanoseconds
    cpu = 32 * ANSWER_CPU_PER_JOB_S + JOB_START_CPU_S + JOB_END_CPU_S
    assert first[0] >= answered + (0.5 + cpu) * ns - 1
    for a, b in itertools.pairwise(first):
        assert b - a == pytest.approx(JOB_END_CPU_S * ns, abs=1)
    assert second[0] >= first[-1] + (0.5 + JOB_START_CPU_S + JOB_END_CPU_S) * ns - 1


def test_four_workers_queue_their_job_ends_for_the_one_core_they_share() -> None:
    """Four workers' first batches run on the one core the workers share: no two of their 128
    jobs post their job-done less than a job's end apart, whichever worker each is on."""
    events = _events("sdk-take-ahead", workers=4, burst=256, seed=3, rep=1, take_ahead=32)
    batches = _batches(events)
    assert len({answered for answered, _ in batches[:4]}) == 1  # the burst's four answers
    together = sorted(t for _, done in batches[:4] for t in done)
    assert len(together) == 128
    gaps = [b - a for a, b in itertools.pairwise(together)]
    assert min(gaps) >= JOB_END_CPU_S * 1e9 - 1


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


def test_the_job_cache_asks_again_once_its_whole_first_batch_has_ended_as_the_branch_does() -> None:
    """A tick that comes due while the worker ends its first 32 jobs goes on once they are
    ended, before their job-dones' replies free the slots: it finds none free, and a later
    tick finds all 32 (18 served from the cache, 3 x 14 asked for). The real branch's second
    take asks for 42 in 11 of 12 reps of 2 s jobs, never before the batch's last job-done
    (docs/fixes.md, "Real branches"); a tick that saw the slots free as each job-done went
    out asked for 3 x the few free beyond the cache's 18 in most reps."""
    for rep in range(1, 7):
        events = _events("job-cache", workers=1, burst=256, seed=11, rep=rep, job_seconds=2.0)
        takes = sorted(
            (e for e in events if e["ev"] == "take" and e["got"]),
            key=lambda e: float(e["arrived"]),  # type: ignore[arg-type]
        )
        (_, first), *_ = _batches(events)
        assert (takes[1]["asked"], len(first)) == (42, 50), rep
        assert float(takes[1]["arrived"]) > first[31], rep  # type: ignore[arg-type]
