"""Client-facing routes: RunPod's endpoint API (docs/protocol.md section 4)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from fake_queue.http.http_util import QUEUE_KEY, int_query, json_body
from fake_queue.protocol import TERMINAL
from fake_queue.queue.job_queue import Job, JobError

RUN_LIMIT_BYTES = 10_000_000
RUNSYNC_LIMIT_BYTES = 20_000_000
MS_PER_7_DAYS = 7 * 24 * 3600 * 1000
PASS_THROUGH_KEYS = ("webhook", "s3Config")


def job_status(job: Job) -> dict[str, Any]:
    """The `/status` object: times in ms, from submission to delivery and delivery to done."""
    body: dict[str, Any] = {"id": job.id, "status": job.status}
    if job.delivered_ns is not None:
        body["delayTime"] = round((job.delivered_ns - job.submitted_ns) / 1e6)
        if job.done_ns is not None:
            body["executionTime"] = round((job.done_ns - job.delivered_ns) / 1e6)
    if job.worker is not None:
        body["workerId"] = job.worker
    if job.output is not None:
        body["output"] = job.output
    if job.error is not None:
        body["error"] = job.error
    return body


def _policy(body: dict[str, Any]) -> tuple[float | None, float | None]:
    policy = body.get("policy") or {}
    if not isinstance(policy, dict):
        raise JobError(400, 'policy must be an object like {"executionTimeout": 600000}')
    timeout_ms = policy.get("executionTimeout")
    ttl_ms = policy.get("ttl")
    if timeout_ms is not None and not _in_range(timeout_ms, 5_000, MS_PER_7_DAYS):
        raise JobError(400, f"policy.executionTimeout={timeout_ms!r}: use 5000..{MS_PER_7_DAYS} ms")
    if ttl_ms is not None and not _in_range(ttl_ms, 10_000, MS_PER_7_DAYS):
        raise JobError(400, f"policy.ttl={ttl_ms!r}: use 10000..{MS_PER_7_DAYS} ms")
    return (
        timeout_ms / 1000 if timeout_ms is not None else None,
        ttl_ms / 1000 if ttl_ms is not None else None,
    )


def _in_range(value: Any, low: int, high: int) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and low <= value <= high


async def _submit(request: web.Request, limit: int) -> Job:
    body = await json_body(request, limit)
    if not isinstance(body, dict) or "input" not in body:
        raise JobError(400, 'body must be a JSON object with an "input" key')
    timeout_s, ttl_s = _policy(body)
    extra = {key: body[key] for key in PASS_THROUGH_KEYS if key in body}
    return request.app[QUEUE_KEY].submit(
        body["input"], extra=extra, execution_timeout_s=timeout_s, ttl_s=ttl_s
    )


async def run(request: web.Request) -> web.Response:
    job = await _submit(request, RUN_LIMIT_BYTES)
    return web.json_response({"id": job.id, "status": job.status})


async def runsync(request: web.Request) -> web.Response:
    wait_ms = int_query(request, "wait", 90_000, 1_000, 300_000)
    job = await _submit(request, RUNSYNC_LIMIT_BYTES)
    await request.app[QUEUE_KEY].wait_terminal(job, wait_ms / 1000)
    if job.status in TERMINAL:
        return web.json_response(job_status(job))
    return web.json_response({"id": job.id, "status": job.status})


async def status(request: web.Request) -> web.Response:
    job = _job(request)
    if "ttl" in request.query:
        job.ttl_s = int_query(request, "ttl", 0, 10_000, MS_PER_7_DAYS) / 1000
    return web.json_response(job_status(job))


async def stream(request: web.Request) -> web.Response:
    job = _job(request)
    chunks, job.stream = job.stream, []
    return web.json_response({"status": job.status, "stream": [{"output": c} for c in chunks]})


async def cancel(request: web.Request) -> web.Response:
    job = request.app[QUEUE_KEY].cancel(request.match_info["job_id"])
    return web.json_response({"id": job.id, "status": job.status})


async def retry(request: web.Request) -> web.Response:
    job = request.app[QUEUE_KEY].retry(request.match_info["job_id"])
    return web.json_response({"id": job.id, "status": job.status})


async def purge_queue(request: web.Request) -> web.Response:
    removed = request.app[QUEUE_KEY].purge()
    return web.json_response({"removed": removed, "status": "completed"})


async def health(request: web.Request) -> web.Response:
    queue = request.app[QUEUE_KEY]
    return web.json_response(queue.health(queue.sampler.model.hold.mean))


def _job(request: web.Request) -> Job:
    return request.app[QUEUE_KEY].get(request.match_info["job_id"])


def add_client_routes(app: web.Application, prefix: str) -> None:
    app.router.add_post(prefix + "/run", run, name="run")
    app.router.add_post(prefix + "/runsync", runsync, name="runsync")
    app.router.add_get(prefix + "/status/{job_id}", status, name="status")
    app.router.add_post(prefix + "/status/{job_id}", status, name="status-post")
    app.router.add_get(prefix + "/stream/{job_id}", stream, name="stream")
    app.router.add_post(prefix + "/cancel/{job_id}", cancel, name="cancel")
    app.router.add_post(prefix + "/retry/{job_id}", retry, name="retry")
    app.router.add_post(prefix + "/purge-queue", purge_queue, name="purge-queue")
    app.router.add_get(prefix + "/health", health, name="health")
