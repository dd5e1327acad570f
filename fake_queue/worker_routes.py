"""Worker-facing routes, exactly as the runpod SDK 1.12.0 worker calls them (protocol doc 1-2)."""

from __future__ import annotations

import asyncio
import json

from aiohttp import web

from fake_queue.http_util import (
    QUEUE_KEY,
    BadRequest,
    arrival_ns,
    client_gone,
    error,
    int_query,
    json_body,
    sleep_until,
)
from fake_queue.queue import Job, JobError
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
    take = queue.take(worker, asked, in_progress, arrived_ns=arrival_ns(request))
    delivered: list[Job] = []  # handed out but not yet fully written
    try:
        if not take.claimed.done():
            try:
                await asyncio.wait_for(asyncio.shield(take.claimed), queue.sampler.hold())
            except asyncio.TimeoutError:
                if not take.claimed.done():
                    queue.give_up_waiting(take)
                    return web.Response(status=204)
        # Render while the answer waits, so at its time it only has to be written.
        rendered, body = list(take.jobs), answer_body(take.jobs, batch)
        await sleep_until(take.answer_at_ns)
        if client_gone(request):
            queue.abandon(take)
            return web.Response(status=204)
        delivered = list(take.jobs)
        if not delivered:  # every claimed job was cancelled before the answer went out
            queue.deliver(take)
            return web.Response(status=204)
        if delivered != rendered:  # some were cancelled meanwhile
            body = answer_body(delivered, batch)
        queue.deliver(take)
        response = web.Response(body=body, content_type="application/json")
        await response.prepare(request)
        await response.write_eof()
        delivered = []
        return response
    except (asyncio.CancelledError, ConnectionError, RuntimeError):
        # The client went away: before the answer, its take keeps nothing; during the write,
        # the jobs it could not receive go back to the front of the queue.
        queue.abandon(take)
        if delivered:
            queue.undeliver(take, delivered)
        raise


def answer_body(jobs: list[Job], batch: bool) -> bytes:
    """job-take answers one job object, job-take-batch a list (protocol doc 1.3)."""
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
        raise BadRequest(400, 'body must be a JSON object like {"output": ...}')
    try:
        if stream:
            outcome = queue.add_stream(worker, job_id, body.get("output"))
        else:
            outcome = queue.finish(worker, job_id, body, arrival_ns(request))
    except JobError as exc:
        return error(exc.status, exc.message)
    await asyncio.sleep(queue.sampler.done())
    return web.json_response({"ok": True, "recorded": outcome})


async def job_stop(request: web.Request) -> web.Response:
    queue = request.app[QUEUE_KEY]
    stops = await queue.next_stops(request.match_info["worker"], queue.sampler.hold())
    if not stops:
        return web.Response(status=204)
    return web.json_response({"jobsToStop": stops})


async def ping(request: web.Request) -> web.Response:
    request.app[QUEUE_KEY].seen(request.match_info["worker"])
    return web.json_response({"ok": True})


def add_worker_routes(app: web.Application, prefix: str) -> None:
    app.router.add_get(prefix + "/job-take/{worker}", job_take, name="job-take")
    app.router.add_get(prefix + "/job-take-batch/{worker}", job_take_batch, name="job-take-batch")
    app.router.add_post(prefix + "/job-done/{worker}/{job_id}", job_done, name="job-done")
    app.router.add_post(prefix + "/job-stream/{worker}/{job_id}", job_stream, name="job-stream")
    app.router.add_get(prefix + "/job-stop/{worker}", job_stop, name="job-stop")
    app.router.add_get(prefix + "/ping/{worker}", ping, name="ping")
