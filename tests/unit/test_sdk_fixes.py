"""The two fixes on runpod 1.12.0's loops, rule by rule (workers/policy_sdk_take_ahead.py, the
take-ahead pull request; workers/policy_job_cache.py, runpod-python #429): what each take asks
for, when, what is held and where, and what happens at a stop signal and at shutdown.

A scripted link on a virtual-time loop: each take is answered by the next scripted batch after
TAKE_S, or held for HOLD_S and answered empty once the script is spent; a job runs its
`seconds`, its job-done POST takes DONE_S. Times are exact, so the rules are checked by when."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import pytest

from fake_queue import precise_loop
from fake_queue.queue import virtual_clock
from jobbench.core.scenario.worker import worker_spec
from jobbench.errors import UsageError
from jobbench.workers.policies import POLICIES, SDK_BASED, TAKES_AHEAD
from jobbench.workers.policy_base import Job, OnEnd, Policy, Run
from jobbench.workers.policy_choice import make_policy
from jobbench.workers.policy_job_cache import (
    JobCachePolicy,
    empty_backoff_s,
    fetch_count,
)
from jobbench.workers.policy_sdk112 import FULL_RECHECK_S
from jobbench.workers.policy_sdk_take_ahead import SdkTakeAheadPolicy
from jobbench.workers.policy_worker import run_loop
from jobbench.workers.policy_worker_config import ConfigError, load_config

TAKE_S, HOLD_S, DONE_S = 0.5, 20.0, 0.01


class ScriptLink:
    """policy_base.Link answering takes from a script, on the running (virtual) loop's clock."""

    stop_enabled = True
    answer_arrived: float | None = None

    def __init__(self, answers: list[list[Job]]) -> None:
        self.answers = list(answers)
        self.takes: list[tuple[float, int, bool]] = []  # (sent at, asked, job_in_progress)
        self.started: dict[str, float] = {}
        self.done: dict[str, float] = {}

    @staticmethod
    def now() -> float:
        return asyncio.get_running_loop().time()

    async def take(
        self, count: int, in_progress: bool, on_sent: Callable[[], None] | None = None
    ) -> list[Job]:
        self.takes.append((self.now(), count, in_progress))
        if not self.answers:
            await asyncio.sleep(HOLD_S)
            return []
        await asyncio.sleep(TAKE_S)
        return self.answers.pop(0)

    async def stops(self) -> list[str]:
        await asyncio.sleep(HOLD_S)
        return []

    async def process(self, job: Job) -> None:
        await self.post_done(str(job["id"]), await self.handle(job))

    async def handle(self, job: Job, started: float | None = None) -> dict[str, Any]:
        self.started[job["id"]] = self.now()
        await asyncio.sleep(job["input"]["seconds"])
        return {"output": None}

    def start_jobs(self, batch: list[tuple[Job, float]], on_end: OnEnd) -> list[Run]:
        raise NotImplementedError  # the policies on 1.12.0's loops run jobs by process()

    async def post_done(self, job_id: str, result: dict[str, Any]) -> None:
        await asyncio.sleep(DONE_S)
        self.done[job_id] = self.now()

    async def post_done_many(self, results: list[tuple[str, dict[str, Any]]]) -> None:
        for job_id, result in results:
            await self.post_done(job_id, result)

    def asked(self) -> list[int]:
        return [count for _, count, _ in self.takes]


def batch(prefix: str, count: int, seconds: float = 1.0) -> list[Job]:
    return [{"id": f"{prefix}{i}", "input": {"seconds": seconds}} for i in range(count)]


def run_for(
    policy: Policy, seconds: float, during: Callable[[Policy], None] | None = None
) -> Policy:
    """Run `policy` for `seconds` of virtual time (calling `during` then), then shut it down
    and let it finish."""

    async def main() -> None:
        running = asyncio.create_task(policy.run())
        await asyncio.sleep(seconds)
        if during is not None:
            during(policy)
        policy.shutdown()
        await asyncio.wait_for(running, 600)

    virtual_clock.run(main())
    return policy


# ---- sdk-take-ahead -----------------------------------------------------------------------------


def test_a_full_take_with_every_slot_busy_takes_k_ahead_at_once() -> None:
    link = ScriptLink([batch("a", 4), batch("b", 2)])
    run_for(SdkTakeAheadPolicy(link, 4, 2), 0.6)
    # the first take filled all 4 slots: the take-ahead of K = 2 leaves as its answer arrives,
    # saying the worker has jobs in progress
    (t0, asked0, busy0), (t1, asked1, busy1) = link.takes[:2]
    assert (asked0, busy0, asked1, busy1) == (4, False, 2, True)
    assert t1 == pytest.approx(t0 + TAKE_S)


def test_one_buffer_at_a_time_and_held_jobs_start_as_slots_free() -> None:
    link = ScriptLink([batch("a", 2), batch("b", 2), batch("c", 2)])
    policy = run_for(SdkTakeAheadPolicy(link, 2, 2), 2.2)
    (_, _, _), (t1, _, _), (t2, asked2, _) = link.takes[:3]
    # b, held from 1.0 s, starts as a's slots free (as a's job-done returns, 10 ms after a
    # ends; the runner's wait on its tasks wakes at once); only then is the buffer empty and
    # the next take-ahead leaves
    b_start = min(link.started[f"b{i}"] for i in range(2))
    a_ended = min(link.started[f"a{i}"] for i in range(2)) + 1.0
    assert b_start == pytest.approx(a_ended + DONE_S)
    assert t2 == pytest.approx(b_start) and asked2 == 2
    assert t1 < b_start
    assert isinstance(policy, SdkTakeAheadPolicy)


def test_held_jobs_are_the_workers_but_count_against_the_slots_once() -> None:
    held: list[list[str]] = []
    link = ScriptLink([batch("a", 2), batch("b", 2)])

    def look(policy: Policy) -> None:
        assert isinstance(policy, SdkTakeAheadPolicy)
        held.append([str(job["id"]) for job in policy.held])
        held.append(policy.job_ids())
        held.append([str(policy.occupancy())])

    run_for(SdkTakeAheadPolicy(link, 2, 2), 1.2, look)
    assert held == [["b0", "b1"], ["a0", "a1", "b0", "b1"], ["4"]]


def test_a_short_take_ends_take_ahead_until_a_full_one_the_1_s_recheck_instead() -> None:
    link = ScriptLink([batch("a", 2), batch("b", 1)])
    run_for(SdkTakeAheadPolicy(link, 2, 2), 2.2)
    # the take-ahead brought 1 of 2: the worker is full (2 running, 1 held) and the last take
    # was short, so no take-ahead waits on the buffer: 1.12.0's 1 s re-check, which finds the
    # one slot b0 left free and asks for it alone
    assert [(t, asked) for t, asked, _ in link.takes] == [
        (0.0, 2),
        (TAKE_S, 2),
        (2 * TAKE_S + FULL_RECHECK_S, 1),
    ]


def test_refresh_worker_turns_take_ahead_off() -> None:
    link = ScriptLink([batch("a", 2)])
    policy = SdkTakeAheadPolicy(link, 2, 2, refresh_worker=True)
    run_for(policy, 1.2)
    assert policy.take_ahead == 0
    assert link.asked() == [2]  # full, but nothing taken ahead: 1.12.0's re-check


def test_a_stop_signal_drops_a_held_job_shutdown_runs_the_rest() -> None:
    link = ScriptLink([batch("a", 2), batch("b", 2)])

    def stop_b0(policy: Policy) -> None:
        policy.stop_job("b0")

    run_for(SdkTakeAheadPolicy(link, 2, 2), 1.2, stop_b0)
    # b0, stopped while held, never ran nor posted; b1, held at shutdown, ran and posted
    assert "b0" not in link.started and "b0" not in link.done
    assert set(link.done) == {"a0", "a1", "b1"}


# ---- job-cache ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("need", "asked"), [(1, 3), (4, 12), (16, 48), (17, 50), (32, 50)])
def test_a_take_asks_three_times_what_it_needs_at_most_50(need: int, asked: int) -> None:
    assert fetch_count(need) == asked


def test_an_empty_take_backs_off_doubling_from_0_2_s_to_5_s() -> None:
    assert [empty_backoff_s(n) for n in (1, 2, 3, 5, 6, 9)] == [0.2, 0.4, 0.8, 3.2, 5.0, 5.0]


def test_the_cache_serves_the_next_slots_before_any_take() -> None:
    link = ScriptLink([batch("a", 6, 1.0), batch("b", 6, 1.0)])
    policy = JobCachePolicy(link, 2)
    cached: list[list[str]] = []

    def look(p: Policy) -> None:
        assert isinstance(p, JobCachePolicy)
        cached.append([str(job["id"]) for job in p.cache])
        cached.append(p.job_ids())

    run_for(policy, 0.6, look)
    # a take for 2 free slots asked 6: 2 to the slots, 4 to the cache, which the heartbeat's
    # job ids (JobsProgress) do not count
    assert link.asked()[0] == 6
    assert cached == [["a2", "a3", "a4", "a5"], ["a0", "a1"]]


def test_full_it_rechecks_every_0_1_s_and_the_cache_fills_freed_slots() -> None:
    link = ScriptLink([batch("a", 6, 1.0)])
    run_for(JobCachePolicy(link, 2), 4.0)
    # a0, a1 end at 1.5 s (+ their job-done); the 0.1 s re-check hands a2, a3 from the cache
    # and the runner starts them within its own 0.1 s waits: never 1.12.0's whole second
    freed = max(link.done["a0"], link.done["a1"])
    assert 0 < min(link.started["a2"], link.started["a3"]) - freed <= 0.2 + 1e-9
    assert link.asked()[0] == 6 and len(link.takes) == 2  # the second: long-polls the empty queue
    assert set(link.done) == {f"a{i}" for i in range(6)}


def test_empty_takes_back_off_and_a_job_found_resets_it() -> None:
    link = ScriptLink([[], [], [], batch("a", 1, 0.1), []])
    run_for(JobCachePolicy(link, 1), 5.0)
    times = [t for t, _, _ in link.takes]
    gaps = [round(b - a - TAKE_S, 6) for a, b in pairwise(times)]
    assert gaps[:3] == [0.2, 0.4, 0.8]  # after the first, second and third empty take
    assert gaps[4] == 0.2  # the fifth came back empty after one that found a job


def wait_for_yields_a_turn_a_get() -> bool:
    """Whether this Python's asyncio.wait_for runs a get from a non-empty queue as a task of
    its own (3.11), so a task created after one get runs before the next; or inline (3.12+)."""

    async def probe() -> bool:
        queue: asyncio.Queue[int] = asyncio.Queue()
        for item in (1, 2):
            queue.put_nowait(item)
        seen: list[int] = []
        await asyncio.wait_for(queue.get(), 1)

        async def started() -> None:
            seen.append(queue.qsize())

        task = asyncio.create_task(started())
        await asyncio.wait_for(queue.get(), 1)
        await task
        return seen == [1]

    return asyncio.run(probe())


def test_the_runner_gets_jobs_as_429s_wait_for_does() -> None:
    # #429 gets each job with asyncio.wait_for. On Python 3.11 that runs the get as a task: a
    # job started is already running its first step while the next is still queued, so a
    # batch's jobs begin over several loop turns (on the real branch, its 32 over 14 ms). On
    # 3.12 and later it gets inline, in the branch as in the model.
    class Watching(ScriptLink):
        policy: JobCachePolicy

        async def handle(self, job: Job, started: float | None = None) -> dict[str, Any]:
            still_queued[job["id"]] = self.policy.queue.qsize()
            return await super().handle(job, started)

    still_queued: dict[str, int] = {}
    link = Watching([batch("a", 4, 1.0)])
    link.policy = JobCachePolicy(link, 4)
    run_for(link.policy, 2.0)
    assert set(link.done) == {"a0", "a1", "a2", "a3"}
    assert still_queued["a3"] == 0
    assert (still_queued["a0"] >= 1) == wait_for_yields_a_turn_a_get()


def wait_for_yields_a_turn_a_take() -> bool:
    """Whether this Python's asyncio.wait_for runs a take as a task of its own (3.11), so work
    made ready as its answer arrives runs before the one waiting on it goes on; or inline."""

    async def probe() -> list[str]:
        seen: list[str] = []

        async def take() -> None:
            await asyncio.sleep(0.01)
            asyncio.get_running_loop().call_soon(seen.append, "ready work")

        await asyncio.wait_for(take(), 1)
        seen.append("taker")
        await asyncio.sleep(0)
        return seen

    return asyncio.run(probe()) == ["ready work", "taker"]


@pytest.mark.parametrize("policy", SDK_BASED)
def test_an_sdk_based_taker_goes_on_from_its_answer_as_1_12_0s_wait_for_does(policy: str) -> None:
    # 1.12.0 (and #429) take through asyncio.wait_for: on Python 3.11 the taker has its
    # answer's jobs only after the work made ready as the answer came (a batch's job ends, on
    # the real branch), which moves its ticks against that batch's (docs/fixes.md).
    class Racing(ScriptLink):
        taker: Policy

        async def take(
            self, count: int, in_progress: bool, on_sent: Callable[[], None] | None = None
        ) -> list[Job]:
            jobs = await super().take(count, in_progress, on_sent)
            asyncio.get_running_loop().call_soon(lambda: had.append(self.taker.job_ids()))
            return jobs

    had: list[list[str]] = []
    link = Racing([batch("a", 2, 1.0)])
    link.taker = make_policy(policy, link, 2, 2 if policy in TAKES_AHEAD else 0)
    run_for(link.taker, 0.6)
    assert had[0] == ([] if wait_for_yields_a_turn_a_take() else ["a0", "a1"])


def test_shutdown_runs_queued_jobs_and_drops_the_cache() -> None:
    link = ScriptLink([batch("a", 3, 1.0)])
    run_for(JobCachePolicy(link, 1), 0.6)
    # #429 stops its fetcher and runs what is queued: a0 ran; a1 and a2 were cached, never run
    assert set(link.done) == {"a0"}


# ---- the flags and the environment that choose them ---------------------------------------------


@pytest.mark.parametrize(
    ("policy", "k", "problem"),
    [
        ("sdk-take-ahead", 0, "--policy sdk-take-ahead needs --take-ahead K"),
        ("job-cache", 8, "--take-ahead 8: policy job-cache has no take-ahead"),
        ("sdk-take-ahead", 8, None),
        ("job-cache", 0, None),
    ],
)
def test_only_sdk_take_ahead_of_the_fixes_reads_k(policy: str, k: int, problem: str | None) -> None:
    env = {
        "JOBBENCH_POLICY": policy,
        "JOBBENCH_TAKE_AHEAD": str(k),
        "RUNPOD_WEBHOOK_GET_JOB": "http://q/job-take/$ID",
        "RUNPOD_WEBHOOK_POST_OUTPUT": "http://q/job-done/$RUNPOD_POD_ID?job=$ID",
    }
    if problem is None:
        assert worker_spec("model", policy, k, None, None).policy == policy
        assert load_config(env).policy == policy
        return
    with pytest.raises(UsageError, match=problem):
        worker_spec("model", policy, k, None, None)
    with pytest.raises(ConfigError, match="JOBBENCH_TAKE_AHEAD"):
        load_config(env)


def test_the_sdk_based_models_run_on_the_sdks_own_stock_loop() -> None:
    """runpod's JobScaler runs on asyncio.run's loop, whose timed waits end 0-1 ms late; the
    ideal policies keep the precise loop, whose timers fire on time."""
    assert all(run_loop(policy) is asyncio.run for policy in SDK_BASED)
    ideal = [policy for policy in POLICIES if policy not in SDK_BASED]
    assert ideal and all(run_loop(policy) is precise_loop.run for policy in ideal)
