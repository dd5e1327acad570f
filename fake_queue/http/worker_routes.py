"""Worker-facing routes, exactly as the runpod SDK 1.12.0 worker calls them (docs/protocol.md
sections 1-2)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from functools import partial
from typing import Any

from aiohttp import web

from fake_queue.http.http_util import (
    QUEUE_KEY,
    arrival_ns,
    client_gone,
    error_payload,
    int_query,
    json_body,
)
from fake_queue.queue.job_queue import Job, JobError, JobQueue, Take
from fake_queue.settings import MAX_BATCH_SIZE


async def job_take(request: web.Request) -> web.StreamResponse:
    return await _take(request, batch=False)


async def job_take_batch(request: web.Request) -> web.StreamResponse:
    return await _take(request, batch=True)


async def _take(request: web.Request, *, batch: bool) -> web.StreamResponse:
    queue = request.app[QUEUE_KEY]
    worker = request.match_info["worker"]
    asked = int_query(request, "batch_size", 1, 1, MAX_BATCH_SIZE) if batch else 1
    in_progress = request.query.get("job_in_progress") == "1"
    gone = partial(client_gone, request)
    take, jobs, body = await run_take(
        queue, worker, asked, in_progress, arrival_ns(request), gone, batch=batch
    )
    if not jobs:
        return web.Response(status=204)
    response = web.Response(body=body, content_type="application/json")
    try:
        await response.prepare(request)
        await response.write_eof()
    except (asyncio.CancelledError, ConnectionError, RuntimeError):
        # The client went away during the write: the jobs it could not receive go back to the
        # front of the queue.
        queue.undeliver(take, jobs)
        raise
    return response


async def run_take(
    queue: JobQueue,
    worker: str,
    asked: int,
    in_progress: bool,
    arrived_ns: int,
    gone: Callable[[], bool],
    *,
    batch: bool,
    send: Callable[[bytes], None] | None = None,
) -> tuple[Take, list[Job] | None, bytes]:
    """A take to its answer, as every route serves one (job-take-batch's when `batch`): the
    take, the jobs delivered (none: a 204) and their answer body, rendered while it waited.
    `send(body)`, if given, writes the answer at its answer time (JobQueue.await_answer)."""
    take = queue.take(worker, asked, in_progress, arrived_ns=arrived_ns)
    answer = _TakeAnswerBody(batch)
    sender = None if send is None else lambda jobs: send(answer.body_for(jobs))
    jobs = await queue.await_answer(take, gone, answer.render, sender)
    return take, jobs, answer.body_for(jobs) if jobs else b""


class _TakeAnswerBody:
    """The answer body, rendered while the take waits for its answer time, so that at that
    time it only has to be written; rendered again if jobs were cancelled meanwhile."""

    __slots__ = ("batch", "body", "jobs")

    def __init__(self, batch: bool) -> None:
        self.batch = batch
        self.jobs: list[Job] = []
        self.body = b""

    def render(self, jobs: list[Job]) -> None:
        self.jobs, self.body = list(jobs), answer_body(jobs, self.batch)

    def body_for(self, jobs: list[Job]) -> bytes:
        return self.body if jobs == self.jobs else answer_body(jobs, self.batch)


def answer_body(jobs: list[Job], batch: bool) -> bytes:
    """job-take answers one job object, job-take-batch a list (docs/protocol.md 1.3)."""
    payloads = [job.payload() for job in jobs]
    return json.dumps(payloads if batch else payloads[0] if payloads else None).encode()


async def job_done(request: web.Request) -> web.Response:
    return await _post_result(request, stream=False)


async def job_stream(request: web.Request) -> web.Response:
    return await _post_result(request, stream=True)


async def _post_result(request: web.Request, *, stream: bool) -> web.Response:
    queue = request.app[QUEUE_KEY]
    worker, job_id = request.match_info["worker"], request.match_info["job_id"]
    body = await json_body(request)
    if not isinstance(body, dict):
        raise JobError(400, 'body must be a JSON object like {"output": ...}')
    if stream:
        try:
            outcome: str | JobError = await queue.job_stream(worker, job_id, body.get("output"))
        except JobError as exc:
            outcome = exc
    else:
        (outcome,) = await queue.job_done_many(worker, [(job_id, body)], arrival_ns(request))
    status, payload = result_answer(outcome)
    return web.json_response(payload, status=status)


def result_answer(outcome: str | JobError) -> tuple[int, dict[str, Any]]:
    """A job-done or job-stream POST's answer: its status and JSON body."""
    if isinstance(outcome, JobError):
        return outcome.status, error_payload(outcome.status, outcome.message)
    return 200, {"ok": True, "recorded": outcome}


async def job_stop(request: web.Request) -> web.Response:
    queue = request.app[QUEUE_KEY]
    stops = await queue.next_stops(request.match_info["worker"])
    if not stops:
        return web.Response(status=204)
    return web.json_response({"jobsToStop": stops})


async def ping(request: web.Request) -> web.Response:
    """The heartbeat; `job_id` lists the jobs in progress, comma-joined (omitted when none)."""
    listed = request.query.get("job_id", "")
    ids = {job_id for job_id in listed.split(",") if job_id}
    request.app[QUEUE_KEY].heartbeat(request.match_info["worker"], ids)
    return web.json_response({"ok": True})


def add_worker_routes(app: web.Application, prefix: str) -> None:
    app.router.add_get(prefix + "/job-take/{worker}", job_take, name="job-take")
    app.router.add_get(prefix + "/job-take-batch/{worker}", job_take_batch, name="job-take-batch")
    app.router.add_post(prefix + "/job-done/{worker}/{job_id}", job_done, name="job-done")
    app.router.add_post(prefix + "/job-stream/{worker}/{job_id}", job_stream, name="job-stream")
    app.router.add_get(prefix + "/job-stop/{worker}", job_stop, name="job-stop")
    app.router.add_get(prefix + "/ping/{worker}", ping, name="ping")
