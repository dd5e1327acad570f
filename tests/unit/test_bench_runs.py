"""Bench jobs run without a task (run_job.BenchRun, bench_handler.call_when): the same loop
turns as a task per job, so a rep's whole event log is the same either way, ties included; a
stopped run posts nothing and frees its slot; failing, CPU-burning and zero-second jobs end as
the coroutine handler ends them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest

from fake_queue.queue import virtual_clock
from fake_queue.queue.latency import Distribution, LatencyModel
from jobbench.core.scenario.config import Scenario
from jobbench.core.scenario.worker import worker_spec
from jobbench.core.sim import engine as sim
from jobbench.workers import bench_handler as bench
from jobbench.workers.policy_base import Job, OnEnd, Run
from jobbench.workers.queue_link import QueueLink
from jobbench.workers.run_job import BenchRun, run_handler, start_bench_runs
from tests.task_runs import HandlerTasks


class TaskQueueLink(QueueLink):
    """The in-process link with a task per job (the coroutine handler), as before BenchRun."""

    def start_jobs(self, batch: list[tuple[Job, float]], on_end: OnEnd) -> Sequence[Run]:
        return HandlerTasks.start_jobs(self, batch, on_end)  # type: ignore[arg-type]


def cell(workers: int, slots: int, take_ahead: int, job_s: float, take_s: float) -> Scenario:
    return Scenario(
        name="cell",
        workers=workers,
        slots=slots,
        burst=200,
        job_seconds=job_s,
        worker=worker_spec(
            "model", "take-ahead" if take_ahead else "drain", take_ahead, None, None
        ),
        latency=LatencyModel(
            take=Distribution("fixed", take_s),
            wake=Distribution("fixed", 0.05),
            hold=Distribution("fixed", 20.0),
            done=Distribution("fixed", 0.0),
        ),
    )


@pytest.mark.parametrize(
    "scenario",
    [
        cell(1, 8, 0, 0.5, 0.5),
        cell(4, 32, 0, 0.5, 0.5),
        cell(2, 16, 32, 0.5, 0.5),
        # take-ahead's answer and the batch's end fall on one virtual instant: the tie that
        # a job ending one loop turn early breaks the other way (benchmarks/NOTES.md)
        cell(1, 32, 8, 0.5, 0.5),
        cell(1, 64, 8, 0.1, 0.1),
    ],
    ids=["drain-1x8", "drain-4x32", "ahead-2x16", "ahead-tie-1x32", "ahead-tie-1x64"],
)
def test_a_rep_logs_the_same_events_with_a_task_per_job(
    scenario: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = sim.simulate_rep(scenario, seed=1)
    monkeypatch.setattr(sim, "QueueLink", TaskQueueLink)
    tasks = sim.simulate_rep(scenario, seed=1)
    assert runs.events == tasks.events and len(runs.events) > 4 * 200
    assert runs.measure.figures == tasks.measure.figures


def ended_runs(jobs: list[Job], stop: str | None = None) -> list[tuple[str, float, Any]]:
    """Each job's (id, loop time it ended, body) when run as BenchRuns from time 0 on
    virtual time; `stop`: the id stopped halfway through its sleep."""
    ended: list[tuple[str, float, Any]] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()

        def on_end(run: Run, body: dict[str, Any] | None) -> None:
            ended.append((run.job["id"], loop.time(), body))

        runs = start_bench_runs([(job, 0.0) for job in jobs], "w1", on_end)
        if stop is not None:
            await asyncio.sleep(0.05)
            next(run for run in runs if run.job["id"] == stop).stop()
        await asyncio.sleep(5)

    virtual_clock.run(main())
    return ended


def test_a_stopped_run_ends_without_a_body_and_the_others_sleep_on() -> None:
    jobs = [{"id": f"j{i}", "input": {"seconds": 0.1}} for i in range(3)]
    ended = ended_runs(jobs, stop="j1")
    assert [(job, when) for job, when, _ in ended] == [("j0", 0.1), ("j2", 0.1)]


def test_bench_runs_end_with_the_bodies_the_coroutine_handler_gives() -> None:
    jobs: list[Job] = [
        {"id": "sleep", "input": {"seconds": 0.2, "payload_bytes": 3}},
        {"id": "now", "input": {}},
        {"id": "cpu", "input": {"cpu_ms": 1}},
        {"id": "fail", "input": {"seconds": 0.1, "fail": True}},
        {"id": "raw", "input": "not a dict"},
    ]
    ended = {job: (when, body) for job, when, body in ended_runs(jobs)}
    assert ended["sleep"] == (0.2, {"output": {"ok": True, "payload": "xxx"}})
    assert ended["now"] == (0.0, {"output": {"ok": True}})
    assert ended["cpu"] == (0.0, {"output": {"ok": True}})  # burnt at once: no virtual time
    assert ended["raw"] == (0.0, {"output": {"ok": True}})
    when, body = ended["fail"]
    error = json.loads(body["error"])
    assert when == 0.1 and error["error_message"] == "bench job asked to fail"
    assert error["worker_id"] == "w1" and "RuntimeError" in error["error_traceback"]
    # the coroutine handler's bodies are the same, but for the traceback's frames
    for job in jobs:
        coroutine_body = virtual_clock.run(run_handler(job, "w1", 0.0))
        if "error" in coroutine_body:
            assert json.loads(coroutine_body["error"])["error_message"] == error["error_message"]
        else:
            assert coroutine_body == ended[job["id"]][1]


def test_ends_and_sleeps_of_one_instant_wake_in_the_order_they_were_set() -> None:
    order: list[str] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        when = loop.time() + 1

        async def sleeper(name: str) -> None:
            await bench.sleep_until(loop, when)
            order.append(name)

        first = loop.create_task(sleeper("task-1"))
        await asyncio.sleep(0)  # its sleep is set first
        bench.call_when(loop, when, lambda: order.append("call-1"))
        bench.call_when(loop, when, lambda: order.append("call-2"))
        second = loop.create_task(sleeper("task-2"))
        await asyncio.sleep(0)
        bench.call_when(loop, when, lambda: 1 / 0)  # one end failing spares the next
        bench.call_when(loop, when, lambda: order.append("call-3"))
        await asyncio.gather(first, second)
        await asyncio.sleep(0)

    errors: list[dict[str, Any]] = []

    async def guarded() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _, ctx: errors.append(ctx))
        await main()

    virtual_clock.run(guarded())
    assert order == ["task-1", "call-1", "call-2", "task-2", "call-3"]
    assert len(errors) == 1 and isinstance(errors[0]["exception"], ZeroDivisionError)


def test_a_run_stopped_before_it_began_never_burns_or_ends() -> None:
    ended: list[str] = []

    async def main() -> None:
        runs = start_bench_runs(
            [({"id": "a", "input": {"cpu_ms": 50, "seconds": 0.1}}, 0.0)],
            "w1",
            lambda run, body: ended.append(run.job["id"]),
        )
        runs[0].stop()  # in the same step: its begin is still to come
        assert isinstance(runs[0], BenchRun)
        await asyncio.sleep(1)

    virtual_clock.run(main())
    assert ended == []
