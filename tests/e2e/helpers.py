"""Helpers for tests that run real worker processes against a real loopback server."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from fake_queue.http.server import RunningServer
from jobbench.clients.bench_client import BenchClient
from jobbench.core.real_workers.fake_target import wait_until_polling
from jobbench.procs.spawn import WorkerProcess
from jobbench.workers.kinds import worker_folder, worker_process_spec
from jobbench.workers.spec import WorkerSpec


def spawn_worker(
    server: RunningServer, spec: WorkerSpec, worker_id: str, slots: int, tmp_path: Path
) -> WorkerProcess:
    folder = worker_folder(tmp_path, worker_id)
    argv, env = worker_process_spec(spec, worker_id, server.endpoint_url, slots, None, folder)
    worker = WorkerProcess(worker_id, argv, env, tmp_path / f"{worker_id}.log", cwd=folder)
    worker.start()
    return worker


def wait_polling(server: RunningServer, workers: list[WorkerProcess], logs: Path) -> None:
    """Until every worker has a take waiting, as a run waits before each rep."""
    client = BenchClient(server.base_url)
    try:
        wait_until_polling(client, workers, logs, timeout_s=60)
    finally:
        client.close()


def run_burst(
    server: RunningServer, count: int, job_input: dict[str, Any], timeout_s: float = 60
) -> list[dict[str, Any]]:
    """Enqueue atomically, wait until every job is terminal, return the rep's events."""
    cursor = httpx.post(server.base_url + "/_bench/reset").json()["cursor"]
    httpx.post(server.base_url + "/_bench/burst", json={"count": count, "input": job_input})
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        counts = httpx.get(server.base_url + "/_bench/state").json()["counts"]
        if counts["in_queue"] == 0 and counts["in_progress"] == 0:
            events: list[dict[str, Any]] = httpx.get(
                server.base_url + "/_bench/events", params={"cursor": cursor}
            ).json()["events"]
            return events
        time.sleep(0.05)
    raise AssertionError(f"burst of {count} did not finish in {timeout_s} s")


def run_jobbench(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout_s: float = 240
) -> subprocess.CompletedProcess[str]:
    """`python -m jobbench ARGS` as CI runs it (CI=true: plain progress lines on stderr)."""
    return subprocess.run(
        [sys.executable, "-m", "jobbench", *args],
        cwd=cwd,
        text=True,
        capture_output=True,
        timeout=timeout_s,
        env={**os.environ, "CI": "true", **(env or {})},
    )


def start_jobbench(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """`python -m jobbench ARGS` in the background, pipes open, as CI runs it."""
    return subprocess.Popen(
        [sys.executable, "-m", "jobbench", *args],
        cwd=cwd,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "CI": "true", **(env or {})},
    )


def anomalies_of_the_run(rep: dict[str, Any]) -> list[dict[str, Any]]:
    """A rep's anomalies, but for a machine filled by processes outside the run: tests run
    beside each other (tests/machine_share.py) and a real SDK's import takes a core for a
    second or two, which says nothing about what a test checks. A queue or driver that used a
    core itself still shows."""
    return [
        a
        for a in rep.get("anomalies", [])
        if a["kind"] != "saturated"
        or not all("outside the run" in part for part in a["what"].split("; "))
    ]
