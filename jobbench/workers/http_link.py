"""The model worker's link to the queue over HTTP: `HttpLink` (policy_choice.Link) makes
runpod 1.12.0's worker calls (same URLs, parameters and bodies; docs/protocol.md 1.2-1.3) with
aiohttp, or with the lean client (raw_http) for takes and results; and `heartbeat`, the SDK's
ping."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any
from urllib.parse import urlencode

import aiohttp

from fake_queue import precise_loop
from jobbench.workers.policy_base import Job, OnEnd, RateLimited, Run, log, post_each
from jobbench.workers.policy_worker_config import Config
from jobbench.workers.raw_http import RawClient, RawHttpError
from jobbench.workers.run_job import RUNPOD_VERSION, run_handler, start_bench_runs
from jobbench.workers.worker_cpu import WorkerCpu

DONE_RETRY_PAUSES_S = (2.0, 3.0)  # aiohttp_retry FibonacciRetry(attempts=3): on status >= 500
FORM_HEADERS = {"charset": "utf-8", "Content-Type": "application/x-www-form-urlencoded"}
# 1.12.0 derives the job-take-batch and job-stop URLs from the job-take one by these segments.
TAKE_SEGMENT = "/job-take/"
TAKE_BATCH_SEGMENT = "/job-take-batch/"
STOP_SEGMENT = "/job-stop/"


class TakeFailed(Exception):
    """job-take answered an error status."""


def jobs_from_answer(status: int, content_type: str, body: bytes) -> list[Job]:
    """A job-take answer, judged as 1.12.0's get_job judges it."""
    if status in (204, 400):  # no jobs (400: FlashBoot, per the SDK)
        return []
    if status == 429:
        raise RateLimited()
    if status >= 400:
        raise TakeFailed(f"job-take answered {status}")
    if content_type != "application/json" or not body:
        return []
    try:
        payload = json.loads(body)
    except ValueError:  # includes UnicodeDecodeError
        return []
    if isinstance(payload, dict):
        if "id" not in payload or "input" not in payload:
            raise ValueError("Job has missing field(s): id or input.")
        return [payload]
    if not isinstance(payload, list):
        return []
    jobs = [job for job in payload if isinstance(job, dict) and "id" in job]
    if len(jobs) != len(payload):
        log(f"job-take-batch: dropped {len(payload) - len(jobs)} entries without an id")
    return jobs


class AnswerClock:
    """When a slow take's answer is due, from the last take of the same size: the loop stays
    awake around then (precise_loop.awake_around) instead of sleeping through the answer's
    arrival. Only takes of at least AWAKE_FROM_S are predicted, so the polling (~0.7 ms) is at
    most 1.4 % of a take's wait; a long-poll that waits longer than the last costs that once."""

    AWAKE_FROM_S = 0.05

    def __init__(self) -> None:
        self.round_trip_s: dict[int, float] = {}  # by take size: a K-take is not a full one

    @contextlib.contextmanager
    def awake(self, count: int) -> Iterator[None]:
        loop = asyncio.get_running_loop()
        sent = loop.time()
        last = self.round_trip_s.get(count, 0.0)
        stop = precise_loop.awake_around(loop, sent + last) if last >= self.AWAKE_FROM_S else None
        try:
            yield
        finally:
            if stop is not None:
                stop()
        self.round_trip_s[count] = loop.time() - sent


class HttpLink:
    """The worker-facing calls, with 1.12.0's URLs: policy_choice.Link over aiohttp, or over
    the lean client (raw_http) for takes and results when given one. `cpu`: what the worker's
    own code adds to a job's steps (worker_cpu.SdkCodeCpu for the SDK-based models)."""

    def __init__(
        self,
        config: Config,
        session: aiohttp.ClientSession,
        lean: tuple[RawClient, RawClient] | None = None,
        cpu: WorkerCpu | None = None,
    ) -> None:
        self.config = config
        self.session = session
        self.lean = lean  # (takes, results)
        self.cpu = cpu
        self.stop_enabled = TAKE_SEGMENT in config.take_url
        self.answer_clock = AnswerClock()
        self.answer_arrived: float | None = None  # aiohttp's client cannot tell
        self.stop_url = config.take_url.replace(TAKE_SEGMENT, STOP_SEGMENT)

    async def take(
        self, count: int, in_progress: bool, on_sent: Callable[[], None] | None = None
    ) -> list[Job]:
        url = self.config.take_url
        if count > 1:
            url = url.replace(TAKE_SEGMENT, TAKE_BATCH_SEGMENT) + f"&batch_size={count}"
        url += f"&job_in_progress={int(in_progress)}"
        jobs = await self._take_answer(url, count, on_sent)
        if jobs and self.cpu is not None:
            await self.cpu.answer_read(len(jobs))
        return jobs

    async def _take_answer(
        self, url: str, count: int, on_sent: Callable[[], None] | None
    ) -> list[Job]:
        if self.lean is not None:
            with self.answer_clock.awake(count):
                answer = await self.lean[0].request("GET", url, on_sent=on_sent)
            self.answer_arrived = answer.arrived
            return jobs_from_answer(answer.status, answer.content_type, answer.body)
        if on_sent is not None:
            on_sent()  # aiohttp does not say when the request is out; close enough
        async with self.session.get(url) as response:
            body = await response.read()
            return jobs_from_answer(response.status, response.content_type, body)

    async def stops(self) -> list[str]:
        async with self.session.get(self.stop_url) as response:
            if response.status == 204:
                return []
            if response.status == 429:
                raise RateLimited()
            response.raise_for_status()
            if response.content_type != "application/json":
                return []
            try:
                payload = await response.json()
            except ValueError:
                return []
        ids = payload.get("jobsToStop", []) if isinstance(payload, dict) else []
        if not isinstance(ids, list):
            return []
        return [job_id for job_id in ids if isinstance(job_id, str)]

    async def process(self, job: Job) -> None:
        if self.cpu is None:
            await self.post_done(str(job["id"]), await self.handle(job))
            return
        await self.cpu.job_started()
        result = await self.handle(job)
        await self.cpu.jobs_ended(1)
        await self.post_done(str(job["id"]), result)
        await self.cpu.reply_read()

    async def handle(self, job: Job, started: float | None = None) -> dict[str, Any]:
        return await run_handler(job, self.config.worker_id, started)

    def start_jobs(self, batch: list[tuple[Job, float]], on_end: OnEnd) -> Sequence[Run]:
        return start_bench_runs(batch, self.config.worker_id, on_end)

    async def post_done(
        self, job_id: str, result: dict[str, Any], status: int | None = None
    ) -> None:
        """JSON text sent as a form, like the SDK; retried on >= 500 only; failures are logged.
        `status`: the answer to a first attempt already made (a pipelined one)."""
        url, body = self._done_request(job_id, result)
        pauses = iter(DONE_RETRY_PAUSES_S)
        while True:
            if status is None:
                try:
                    status = await self._post(url, body)
                except (aiohttp.ClientError, RawHttpError) as exc:
                    log(f"job-done for {job_id} failed: {type(exc).__name__}: {exc}")
                    return
            if status < 500:
                if status >= 400:
                    log(f"job-done for {job_id} answered {status}; result lost")
                return
            pause = next(pauses, None)
            if pause is None:
                log(f"job-done for {job_id} answered {status} 3 times; result lost")
                return
            await asyncio.sleep(pause)
            status = None

    def _done_request(self, job_id: str, result: dict[str, Any]) -> tuple[str, bytes]:
        url = self.config.done_url.replace("$ID", job_id) + "&isStream=false"
        return url, json.dumps(result, ensure_ascii=False).encode()

    async def post_done_many(self, results: list[tuple[str, dict[str, Any]]]) -> None:
        """Over the lean client, the batch's POSTs go pipelined on one connection (the queue
        sees the same POSTs, one a job, in one read): each answer judged as post_done judges
        it. A POST the connection lost failed as post_done's would; the ones after it were
        never read by the queue and go again, each on its own."""
        if self.lean is None or len(results) < 2:
            await post_each(self, results)
            return
        requests = [self._done_request(job_id, result) for job_id, result in results]
        answers = await self.lean[1].pipeline("POST", requests)
        followups = []  # post_done for each answer to judge again, or POST to send again
        lost = False
        for (job_id, result), answer in zip(results, answers):
            if isinstance(answer, RawHttpError):
                if lost:
                    followups.append(self.post_done(job_id, result))
                else:
                    lost = True
                    log(f"job-done for {job_id} failed: {type(answer).__name__}: {answer}")
            elif answer.status >= 400:
                followups.append(self.post_done(job_id, result, answer.status))
        await asyncio.gather(*followups)  # post_done logs its failures

    async def _post(self, url: str, body: bytes) -> int:
        if self.lean is not None:
            return (await self.lean[1].request("POST", url, body)).status
        async with self.session.post(url, data=body, headers=FORM_HEADERS) as response:
            await response.read()
            return response.status


async def heartbeat(
    session: aiohttp.ClientSession, url: str, interval_s: float, job_ids: Callable[[], list[str]]
) -> None:
    """GET the ping URL now and every interval, with the SDK's query parameters."""
    timeout = aiohttp.ClientTimeout(total=2 * interval_s)
    while True:
        params: dict[str, str] = {}
        ids = job_ids()
        if ids:
            params["job_id"] = ",".join(ids)
        params["runpod_version"] = RUNPOD_VERSION
        full = url + ("&" if "?" in url else "?") + urlencode(params)
        try:
            async with session.get(full, timeout=timeout) as response:
                await response.read()
        except (TimeoutError, aiohttp.ClientError) as exc:
            log(f"ping failed: {type(exc).__name__}: {exc}")
        await asyncio.sleep(interval_s)
