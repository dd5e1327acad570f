"""`jobbench locust`: a short headless run through the embedded fake queue with model workers,
and the web UI answering and stopping cleanly. Locust runs as a subprocess; loopback only."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil

FAST = ["--take-latency", "0.05", "--wake-latency", "0.005", "--hold", "2"]
MODEL = ["--worker", "model", "--workers", "1", "--slots", "8", "--job-seconds", "0.05", *FAST]


def ci_env() -> dict[str, str]:
    """Read at each start, not import: TMPDIR is set for the session after import."""
    return {**os.environ, "CI": "true"}


def jobbench(*args: str) -> list[str]:
    return [sys.executable, "-m", "jobbench", "locust", *args]


def test_headless_run_reports_jobs_and_fails_over_the_max_fail_ratio(tmp_path: Path) -> None:
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text('{"seconds": 0.05}\n' * 3 + '{"seconds": 0.05, "fail": true}\n')
    stats = tmp_path / "out" / "stats.json"
    args = ["--headless", "--users", "5", "--spawn-rate", "5", "--run-time", "5s"]
    args += [*MODEL, "--inputs", str(inputs), "--json-file", str(stats)]
    result = subprocess.run(
        jobbench(*args), capture_output=True, text=True, timeout=60, env=ci_env(), cwd=tmp_path
    )
    assert result.returncode == 4, result.stderr[-2000:]  # ~25 % of jobs fail, limit 1 %
    assert "--max-fail-ratio" in result.stderr
    rows = json.loads(stats.read_text())
    jobs = {row["name"]: row for row in rows if row["method"] == "JOB"}
    assert set(jobs) == {"run + status", "runsync"}
    total = sum(row["num_requests"] for row in jobs.values())
    failed = sum(row["num_failures"] for row in jobs.values())
    assert total >= 20 and 0.1 < failed / total < 0.45
    plain = {(row["method"], row["name"]) for row in rows}
    assert {("POST", "/run"), ("POST", "/runsync"), ("GET", "/status/[id]")} <= plain


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_web_ui_answers_and_ctrl_c_leaves_no_process(tmp_path: Path) -> None:
    port = free_port()
    process = subprocess.Popen(
        jobbench(*MODEL, "--web-port", str(port)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=ci_env(),
        cwd=tmp_path,
    )
    try:
        page, stats = None, None
        deadline = time.monotonic() + 40
        while page is None and time.monotonic() < deadline and process.poll() is None:
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/", timeout=2)
            except httpx.HTTPError:
                time.sleep(0.2)
        assert page is not None and page.status_code == 200
        stats = httpx.get(f"http://127.0.0.1:{port}/stats/requests", timeout=5)
        assert stats.status_code == 200 and "stats" in stats.json()
        children = psutil.Process(process.pid).children(recursive=True)
        assert len(children) >= 3  # the queue, the worker, Locust
        process.send_signal(signal.SIGINT)
        assert process.wait(30) == 130  # interrupted, as every command
    finally:
        if process.poll() is None:
            process.kill()
    assert not [c for c in children if c.is_running() and c.status() != "zombie"]
