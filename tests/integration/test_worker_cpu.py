"""The SDK's own code in a model worker process (workers/worker_cpu.py): where the SDK-based
models spend it, against the real fake queue on loopback."""

from __future__ import annotations

import asyncio
import time

import aiohttp
import httpx

from fake_queue.http.server import RunningServer
from jobbench.workers import policies
from jobbench.workers.http_link import HttpLink
from jobbench.workers.policy_worker import own_code_cpu
from jobbench.workers.policy_worker_config import Config
from jobbench.workers.worker_cpu import (
    SDK_ANSWER_CPU_PER_JOB_S,
    SDK_JOB_END_CPU_S,
    SDK_JOB_START_CPU_S,
    SDK_REPLY_CPU_S,
    SdkCodeCpu,
    spend_cpu,
)


class Recorder:
    """A WorkerCpu that notes each step and what the queue says of the job at that moment."""

    def __init__(self, server: RunningServer) -> None:
        self.server = server
        self.job_id = ""
        self.steps: list[tuple[str, str]] = []

    def status(self) -> str:
        if not self.job_id:
            return "-"
        url = f"{self.server.endpoint_url}/status/{self.job_id}"
        return str(httpx.get(url, timeout=5).json()["status"])

    async def answer_read(self, jobs: int) -> None:
        self.steps.append((f"answer of {jobs}", self.status()))

    async def job_started(self) -> None:
        self.steps.append(("started", self.status()))

    async def jobs_ended(self, jobs: int) -> None:
        self.steps.append((f"{jobs} ended", self.status()))

    async def reply_read(self) -> None:
        self.steps.append(("reply read", self.status()))


def test_a_link_with_a_cpu_spends_it_at_each_step_of_a_job(server: RunningServer) -> None:
    httpx.post(f"{server.base_url}/_bench/burst", json={"count": 1, "input": {}})
    recorder = Recorder(server)
    config = Config(
        policies.JOB_CACHE, 4, 0, "w1", f"{server.endpoint_url}/job-take/w1?gpu=cpu",
        f"{server.endpoint_url}/job-done/w1/$ID?gpu=cpu", None, 10.0, None,
    )  # fmt: skip

    async def one_job() -> None:
        async with aiohttp.ClientSession() as session:
            link = HttpLink(config, session, None, recorder)
            jobs = await link.take(1, False)
            assert len(jobs) == 1
            recorder.job_id = str(jobs[0]["id"])
            await link.process(jobs[0])

    asyncio.run(one_job())
    # The job's end is spent before its job-done goes out, the reply's once it came back.
    assert recorder.steps == [
        ("answer of 1", "-"),
        ("started", "IN_PROGRESS"),
        ("1 ended", "IN_PROGRESS"),
        ("reply read", "COMPLETED"),
    ]


def test_the_sdk_based_models_and_only_they_spend_the_sdks_own_code() -> None:
    for policy in policies.POLICIES:
        cpu = own_code_cpu(policy)
        if policy in policies.SDK_BASED:
            assert isinstance(cpu, SdkCodeCpu), policy
        else:
            assert cpu is None, policy


def test_spending_cpu_holds_the_thread_for_that_much_of_its_cpu_time() -> None:
    # Thread CPU time, not the wall clock: a preempted spin goes on, so load cannot shorten it.
    before = time.thread_time()
    spend_cpu(0.004)
    assert 0.004 <= time.thread_time() - before < 0.05


def test_the_sdks_code_spends_its_cpu_at_an_answer_and_a_jobs_start_end_and_reply() -> None:
    cpu = SdkCodeCpu()

    async def steps() -> float:
        before = time.thread_time()
        await cpu.answer_read(50)
        await cpu.job_started()
        for _ in range(20):
            await cpu.jobs_ended(1)
            await cpu.reply_read()
        return time.thread_time() - before

    spent = asyncio.run(steps())
    answer = 50 * SDK_ANSWER_CPU_PER_JOB_S
    assert spent >= answer + SDK_JOB_START_CPU_S + 20 * (SDK_JOB_END_CPU_S + SDK_REPLY_CPU_S)
