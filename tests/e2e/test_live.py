"""`jobbench run --endpoint` and `jobbench workers` as real processes against a fake queue's client
API: the code path a real RunPod endpoint takes. Traffic goes to loopback only."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

KEY = "jb-test-key-5f0c9a7e1d"
FAST = ["--take-latency", "0.05", "--wake-latency", "0.005", "--hold", "2"]


def ci_env() -> dict[str, str]:
    """Read at each start, not import: TMPDIR is set for the session after import."""
    return {**os.environ, "CI": "true"}


@dataclass
class Queue:
    url: str
    endpoint: str
    process: subprocess.Popen[str]

    def state(self) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {KEY}"}
        result: dict[str, Any] = httpx.get(self.url + "/_bench/state", headers=headers).json()
        return result

    def reset(self) -> None:
        httpx.post(self.url + "/_bench/reset", headers={"Authorization": f"Bearer {KEY}"})


def read_line(stream: Any, timeout_s: float) -> str:
    selector = selectors.DefaultSelector()
    selector.register(stream, selectors.EVENT_READ)
    try:
        return str(stream.readline()) if selector.select(timeout_s) else ""
    finally:
        selector.close()


def stop(process: subprocess.Popen[str], sig: int = signal.SIGTERM) -> int:
    process.send_signal(sig)
    try:
        return process.wait(15)
    finally:
        if process.poll() is None:
            process.kill()


def start_workers(server: str, *extra: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "jobbench", "workers", "--server", server, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ci_env(),
    )
    line = read_line(process.stdout, 60)
    assert "polling" in line, process.stderr.read() if process.poll() is not None else line
    return process


@pytest.fixture(scope="module")
def queue() -> Iterator[Queue]:
    """A throttling, faulty fake queue with a key, and `jobbench workers` attached to it."""
    argv = [sys.executable, "-m", "fake_queue", "--port", "0", "--ready-json", "--seed", "1"]
    argv += ["--api-key", KEY, "--rate-limits", "runpod", *FAST]
    argv += ["--fault", "run:429:0.2", "--fault", "status:503:0.2"]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, start_new_session=True)
    ready = json.loads(read_line(process.stdout, 20))
    q = Queue(ready["url"], ready["endpoint_url"], process)
    workers = start_workers(q.url, "--api-key", KEY, "--worker", "model")
    children = psutil.Process(workers.pid).children(recursive=True)
    try:
        yield q
    finally:
        code = stop(workers)
        stop(process)  # first: a failed check below must not leave the queue running
        assert code == 130  # Ctrl-C / SIGTERM ends `jobbench workers`, as any command
        assert not [c for c in children if c.is_running() and c.status() != "zombie"]


def live_run(
    *args: str, key: str = KEY, cwd: Path, timeout_s: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jobbench", "run", "--api-key", key, "--out", str(cwd), *args],
        cwd=cwd,
        text=True,
        capture_output=True,
        timeout=timeout_s,
        env=ci_env(),
        stdin=subprocess.DEVNULL,
    )


def assert_no_key(key: str, result: subprocess.CompletedProcess[str], folder: Path) -> None:
    texts = [result.stdout, result.stderr] + [p.read_text() for p in folder.glob("*.json*")]
    assert all(key not in text for text in texts)


def test_a_throttled_faulty_endpoint_gets_each_job_exactly_once(
    queue: Queue, tmp_path: Path
) -> None:
    queue.reset()
    args = ["--endpoint", queue.endpoint, "--burst", "50", "--reps", "1", "--job-seconds", "0.05"]
    page = tmp_path / "live.html"
    result = live_run(*args, "--label", "live", "--json", "--html", str(page), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "live endpoint; 50 jobs" in page.read_text() and KEY not in page.read_text()
    doc = json.loads(result.stdout)
    assert doc["target"] == {"kind": "live", "endpoint": queue.endpoint}
    assert doc["complete"] is True and doc["schema"] == "jobbench.result/1"
    (rep,) = doc["scenarios"][0]["reps"]
    assert rep["jobs"]["submitted"] == rep["jobs"]["completed"] == 50
    assert rep["jobs"]["unknown"] == rep["jobs"]["rejected"] == 0
    assert rep["submission"]["throttled"] > 0 and rep["follow"]["status_errors"] > 0
    assert rep["submission"]["span_s"] is not None and rep["time_to_p99_s"] > 0
    assert set(rep["phases"]["queue_wait"]) == {"p50", "p90", "p99", "max", "mean"}
    assert rep["health"]["samples"] and sum(rep["split"]["jobs_per_worker"].values()) == 50
    assert queue.state()["counts"]["submitted"] == 50  # 429s retried, nothing twice
    assert_no_key(KEY, result, tmp_path)


def test_a_wrong_key_fails_fast_with_exit_4_and_never_shows_the_key(
    queue: Queue, tmp_path: Path
) -> None:
    wrong = "wrong-key-9c8b7a6d5e"
    submitted = queue.state()["counts"]["submitted"]
    # fails fast: no retries for a 401 (the run's timeout would end a retry loop)
    result = live_run(
        "--endpoint", queue.endpoint, "--burst", "10", key=wrong, cwd=tmp_path, timeout_s=30
    )
    assert result.returncode == 4
    assert queue.state()["counts"]["submitted"] == submitted  # not one job got in
    assert "401" in result.stderr and "key" in result.stderr
    assert_no_key(wrong, result, tmp_path)


def test_an_unreachable_endpoint_fails_fast_with_exit_4(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = live_run("--endpoint", f"http://127.0.0.1:{port}/v2/x", cwd=tmp_path, timeout_s=30)
    assert result.returncode == 4  # fails fast: the run's timeout would end a retry loop
    assert "cannot reach" in result.stderr and "--endpoint" in result.stderr


def test_bad_job_seconds_are_refused_with_exit_2_before_any_request(tmp_path: Path) -> None:
    result = live_run("--endpoint", "http://127.0.0.1:9/v2/x", "--job-seconds", "-1", cwd=tmp_path)
    assert result.returncode == 2 and "--job-seconds -1" in result.stderr, result.stderr
    assert not list(tmp_path.iterdir())


# SIGTERM is how a CI job's timeout stops a run: it must not leave paid jobs queued either.
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_cancels_queued_jobs_and_saves_a_partial_result(
    queue: Queue, tmp_path: Path, sig: signal.Signals
) -> None:
    queue.reset()
    argv = [sys.executable, "-m", "jobbench", "run", "--endpoint", queue.endpoint]
    argv += ["--api-key", KEY, "--burst", "50", "--reps", "2", "--job-seconds", "5"]
    argv += ["--label", "cut", "--out", str(tmp_path)]
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=ci_env())
    deadline = time.monotonic() + 30
    while queue.state()["counts"]["in_progress"] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    code = stop(process, sig)
    assert code == 130  # README: interrupted, partial result saved
    counts = queue.state()["counts"]
    assert counts["in_queue"] == counts["in_progress"] == 0 and counts["completed"] == 0
    assert counts["cancelled"] == counts["submitted"] > 0
    doc = json.loads((tmp_path / "cut.json").read_text())
    assert doc["complete"] is False and doc["interrupted"] is True
    (rep,) = doc["scenarios"][0]["reps"]
    assert rep["partial"] == "interrupted"
    assert rep["jobs"]["cancelled_by_jobbench"] == counts["cancelled"]


def test_workers_reports_a_dead_worker_by_name_and_exits_4(queue: Queue) -> None:
    args = ("--api-key", KEY, "--worker", "model", "--workers", "2", "--name", "doomed")
    workers = start_workers(queue.url, *args)
    children = psutil.Process(workers.pid).children()
    victim = children[-1].environ()["RUNPOD_POD_ID"]
    children[-1].kill()
    try:
        code = workers.wait(15)
    finally:
        stop(workers)
    stderr = workers.stderr.read() if workers.stderr else ""
    assert code == 4 and victim.startswith("doomed-w") and f"worker {victim}" in stderr
    assert "exit code -9" in stderr and "logs kept in" in stderr  # the failure keeps its logs
    assert not [c for c in children if c.is_running() and c.status() != "zombie"]


def test_workers_refuses_a_wrong_key_or_no_queue_before_starting_any(
    queue: Queue, tmp_path: Path
) -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cases = [
        ([queue.url, "--api-key", "wrong-key-1a2b3c"], 4, "401"),
        ([f"http://127.0.0.1:{port}"], 4, "unreachable"),
        (["localhost:8000"], 2, "--server"),
    ]
    for args, code, said in cases:
        argv = [sys.executable, "-m", "jobbench", "workers", "--server", *args, "--worker", "model"]
        result = subprocess.run(
            argv, capture_output=True, text=True, timeout=60, env=ci_env(), cwd=tmp_path
        )
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert result.returncode == code and len(lines) == 1 and said in lines[0], result.stderr
        assert "wrong-key-1a2b3c" not in result.stderr


def test_an_arrival_profile_at_a_throttled_endpoint_keeps_every_job_and_its_intended_time(
    queue: Queue, tmp_path: Path
) -> None:
    queue.reset()
    args = ["--endpoint", queue.endpoint, "--load", "rate:20/s:for:1s", "--reps", "1"]
    result = live_run(*args, "--job-seconds", "0.05", "--label", "prof", "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    (entry,) = json.loads(result.stdout)["scenarios"]
    assert entry["name"] == "live-rate-20-for-1s-0.05s"
    assert entry["params"]["load"] == "rate:20/s:for:1s"
    (rep,) = entry["reps"]
    assert rep["jobs"]["submitted"] == rep["jobs"]["completed"] == 20  # 429s retried
    assert queue.state()["counts"]["submitted"] == 20
    pacing = rep["arrivals"]
    assert pacing["jobs"] == pacing["submissions"] == 20 and pacing["not_sent"] == 0
    assert pacing["requests"] == rep["submission"]["requests"] >= 20  # retries are requests
    assert rep["steady"]["e2e_p99_s"] is not None and rep["efficiency"] is None
    assert "20 jobs in 20 submissions, each late by" in result.stderr
    assert "rate:20/s:for:1s (20 jobs over 0.95 s) x 1 reps" in result.stderr
    assert_no_key(KEY, result, tmp_path)
