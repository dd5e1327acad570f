"""A task per job, for the tests' scripted links: `start_jobs` over a link's own `handle`
coroutine, as the drain policy ran every job before the model worker's task-free runs
(jobbench/workers/run_job.BenchRun); tests/unit/test_bench_runs.py holds the two to the same
event log."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from typing import Any

from jobbench.workers.policy_base import Job, OnEnd, Run, log


class TaskRun:
    """A job whose handler is a coroutine: a task of its own."""

    __slots__ = ("job", "task")

    def __init__(self, job: Job, body: Coroutine[Any, Any, dict[str, Any]], on_end: OnEnd) -> None:
        self.job = job
        self.task = asyncio.get_running_loop().create_task(self._run(body, on_end))

    async def _run(self, body: Coroutine[Any, Any, dict[str, Any]], on_end: OnEnd) -> None:
        try:
            result = await body
        except Exception as exc:
            log(f"job {self.job.get('id')!r} failed outside its handler: {exc!r}")
            on_end(self, None)  # its slot frees; nothing to post
            return
        on_end(self, result)

    def stop(self) -> None:
        self.task.cancel()


class HandlerTasks:
    """`start_jobs` for a link whose `handle` coroutine runs a job: a task each."""

    def handle(self, job: Job, started: float | None = None) -> Coroutine[Any, Any, Any]:
        raise NotImplementedError

    def start_jobs(self, batch: list[tuple[Job, float]], on_end: OnEnd) -> Sequence[Run]:
        return [TaskRun(job, self.handle(job, started), on_end) for job, started in batch]
