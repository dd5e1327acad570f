"""Locust users for a RunPod-style endpoint (jobbench's fake queue or a live one).

`jobbench locust` runs this file in a Locust subprocess; it also works on its own:

    locust -f jobbench/clients/locustfile.py -H https://api.runpod.ai/v2/ENDPOINT_ID

Every job is reported to Locust as a request of type JOB with its end-to-end time (submit to
the client seeing it terminal); FAILED, TIMED_OUT and CANCELLED jobs (and jobs the endpoint lost)
are JOB failures. The plain /run, /runsync and /status calls appear beside them. Stdlib and
locust only, so the file can be copied to a load machine without jobbench.

Environment: JOBBENCH_API_KEY (or RUNPOD_API_KEY), sent as `Authorization: Bearer KEY`;
JOBBENCH_JOB_SECONDS (0.5) and JOBBENCH_PAYLOAD_BYTES (0: the bench handler's result size),
or JOBBENCH_INPUT (one JSON input) or JOBBENCH_INPUTS (a JSONL file, cycled);
JOBBENCH_POLL_S (0.25, /status interval), JOBBENCH_JOB_TIMEOUT_S (600), JOBBENCH_ENDPOINT
(host, when -H is not given).
"""

from __future__ import annotations

import itertools
import json
import os
import time
from collections.abc import Iterator
from typing import Any

from locust import HttpUser, constant, task

TERMINAL = frozenset({"COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT"})
RETRYABLE = frozenset({0, 429, 500, 502, 503, 504})  # 0: no answer (connection error)


def _env(name: str, default: str) -> str:
    return os.environ.get(name, "").strip() or default


def job_inputs() -> list[Any]:
    """The job inputs from the environment (see the module docstring)."""
    path = os.environ.get("JOBBENCH_INPUTS")
    if path:
        with open(path) as handle:
            values = [json.loads(line) for line in handle if line.strip()]
        if not values:
            raise ValueError(f"JOBBENCH_INPUTS={path}: no inputs; write one JSON value a line")
        return values
    if os.environ.get("JOBBENCH_INPUT"):
        return [json.loads(os.environ["JOBBENCH_INPUT"])]
    value: dict[str, Any] = {"seconds": float(_env("JOBBENCH_JOB_SECONDS", "0.5"))}
    payload = int(_env("JOBBENCH_PAYLOAD_BYTES", "0"))
    if payload:
        value["payload_bytes"] = payload
    return [value]


INPUTS: Iterator[Any] = itertools.cycle(job_inputs())
POLL_S = float(_env("JOBBENCH_POLL_S", "0.25"))
JOB_TIMEOUT_S = float(_env("JOBBENCH_JOB_TIMEOUT_S", "600"))


class JobFailed(Exception):
    """A job that ended in another status than COMPLETED (the status is the message)."""


class EndpointUser(HttpUser):
    abstract = True
    host = os.environ.get("JOBBENCH_ENDPOINT") or None
    wait_time = constant(0)

    def on_start(self) -> None:
        self.client.base_url = self.client.base_url.rstrip("/")
        key = os.environ.get("JOBBENCH_API_KEY") or os.environ.get("RUNPOD_API_KEY")
        if key:
            self.client.headers["Authorization"] = f"Bearer {key}"

    def report_job(self, name: str, started: float, status: str) -> None:
        failed = None if status == "COMPLETED" else JobFailed(status)
        self.environment.events.request.fire(
            request_type="JOB",
            name=name,
            response_time=(time.perf_counter() - started) * 1000,
            response_length=0,
            exception=failed,
            context={},
        )

    def follow(self, job_id: str, name: str, started: float) -> None:
        """Poll /status until the job ends (transient errors are retried) and report it."""
        deadline = started + JOB_TIMEOUT_S
        while time.perf_counter() < deadline:
            time.sleep(POLL_S)  # cooperative: Locust has monkey-patched time
            response = self.client.get(f"/status/{job_id}", name="/status/[id]")
            code = response.status_code or 0
            if code in RETRYABLE:
                continue
            if code == 404:  # the endpoint no longer knows it (ttl expired)
                self.report_job(name, started, "LOST")
                return
            status = _status(response) if code == 200 else f"HTTP {code}"
            if status not in ("IN_QUEUE", "IN_PROGRESS", "RUNNING"):
                self.report_job(name, started, status)
                return
        self.report_job(name, started, "CLIENT_TIMEOUT")


def _status(response: Any) -> str:
    try:
        return str(response.json().get("status") or "NO_STATUS")
    except (ValueError, AttributeError):
        return "BAD_JSON"


def _job_id(response: Any) -> str | None:
    try:
        value = response.json().get("id")
    except (ValueError, AttributeError):
        return None
    return str(value) if value else None


class RunUser(EndpointUser):
    """Submit via /run, then follow via /status: the way queue clients use an endpoint."""

    weight = 3

    @task
    def run_job(self) -> None:
        started = time.perf_counter()
        response = self.client.post("/run", json={"input": next(INPUTS)}, name="/run")
        job_id = _job_id(response) if response.status_code == 200 else None
        if job_id is not None:  # a refused /run is a /run failure, not a job
            self.follow(job_id, "run + status", started)


class RunSyncUser(EndpointUser):
    """Submit via /runsync (waits up to 90 s), falling back to /status if it is still running."""

    weight = 1

    @task
    def runsync_job(self) -> None:
        started = time.perf_counter()
        response = self.client.post("/runsync", json={"input": next(INPUTS)}, name="/runsync")
        if response.status_code != 200:
            return
        status = _status(response)
        if status in TERMINAL:
            self.report_job("runsync", started, status)
            return
        job_id = _job_id(response)
        if job_id is not None:
            self.follow(job_id, "runsync", started)
