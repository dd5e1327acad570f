"""A second Ctrl-C or SIGTERM while `jobbench run` / `jobbench workers` stop their processes must
not cut the cleanup short: every process of theirs is gone when they exit. Real processes, with
a worker that survives SIGTERM so the stop takes its whole grace; loopback only."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil

from fake_queue.server import RunningServer
from tests.e2e.helpers import start_jobbench

HERE = Path(__file__).parent
FAST = ["--take-latency", "0.05", "--wake-latency", "0.005", "--hold", "2"]


def stubborn(marker: Path) -> str:
    return f"{sys.executable} {HERE / 'stubborn_worker.py'} {marker}"


def wait_for(ready: Callable[[], bool], what: str, timeout_s: float = 20) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def left_behind(processes: list[psutil.Process]) -> list[psutil.Process]:
    """Those still running (not zombies) 5 s on; they are killed, so a failure leaves none."""
    deadline = time.monotonic() + 5
    alive = processes
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        time.sleep(0.05)
    for process in alive:
        process.kill()
    return alive


def interrupt_twice(proc: subprocess.Popen[str], sig: int, marker: Path) -> list[psutil.Process]:
    """Signal once, again once the workers got their SIGTERM (the stop is under way), and
    return what the command had started."""
    children = psutil.Process(proc.pid).children(recursive=True)
    proc.send_signal(sig)
    wait_for(marker.exists, "the workers never got SIGTERM")
    proc.send_signal(sig)
    proc.wait(30)
    return children


def test_run_second_ctrl_c_while_stopping_still_stops_the_queue(tmp_path: Path) -> None:
    marker = tmp_path / "sigterm"
    args = ["--worker", stubborn(marker), "--workers", "1", "--burst", "4", "--reps", "1"]
    proc = start_jobbench("run", *args, "--no-pin-queue", *FAST, cwd=tmp_path)
    assert proc.stderr is not None
    for line in proc.stderr:  # a rep under way: the queue and the worker are up
        if "rep 1/1" in line:
            break
    queue = [c for c in psutil.Process(proc.pid).children() if "fake_queue" in c.cmdline()]
    children = interrupt_twice(proc, signal.SIGINT, marker)
    assert len(queue) == 1 and queue[0] in children
    assert not left_behind(children)  # the queue runs in its own session: only we can stop it
    assert proc.returncode == 130


def test_workers_second_sigterm_while_stopping_still_kills_every_worker(
    server: RunningServer, tmp_path: Path
) -> None:
    marker = tmp_path / "sigterm"
    args = ["--server", server.base_url, "--worker", stubborn(marker), "--workers", "2"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "jobbench", "workers", *args, "--slots", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    assert proc.stdout is not None
    assert "polling" in proc.stdout.readline()
    children = interrupt_twice(proc, signal.SIGTERM, marker)
    assert len(children) == 2
    assert not left_behind(children)
    assert proc.returncode == 0  # SIGTERM is how `jobbench workers` ends


def test_locust_bad_input_is_a_usage_error_before_anything_starts(tmp_path: Path) -> None:
    bad_lines = tmp_path / "inputs.jsonl"
    bad_lines.write_text('{"seconds": 0.05}\n{not json\n')
    base = ["locust", "--headless", "--run-time", "1s", "--worker", "model", "--workers", "1"]
    for args, flag in [
        (["--input", "{not json"], "--input"),
        (["--inputs", str(bad_lines)], "--inputs"),
    ]:
        result = subprocess.run(
            [sys.executable, "-m", "jobbench", *base, *args],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert result.returncode == 2 and len(lines) == 1 and flag in lines[0], result.stderr
