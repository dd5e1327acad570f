"""Every command on Ctrl-C and SIGTERM, and a second one while it cleans up: exit 130, what it
saved marked interrupted, and nothing left running, by process group and by any process whose
command line, working directory or environment names the test's folder (each command runs with
TMPDIR there, so its log folders and its workers' own folders are in it). The real CLI as a
subprocess, signalled from Python (a shell's background job ignores SIGINT); model workers, and
a worker that survives SIGTERM where a stop must take its whole grace; loopback only. `run` is
in test_cli_failures.py and below."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import IO

import psutil
import pytest

from fake_queue.http.server import RunningServer
from tests.e2e.helpers import start_jobbench

HERE = Path(__file__).parent
FAST = ["--take-latency", "0.05", "--wake-latency", "0.005", "--hold", "2"]
STOP_S = 20  # a hang, not a speed: a stop takes about a second, a stubborn worker's grace 3 s
BOTH = pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])


def stubborn(marker: Path, *how: str) -> str:
    return " ".join([sys.executable, str(HERE / "stubborn_worker.py"), str(marker), *how])


def wait_for(ready: Callable[[], bool], what: Callable[[], str], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready():
        assert time.monotonic() < deadline, what()
        time.sleep(0.02)


class Lines:
    """A pipe's lines as they come, read by a thread so the child never blocks on it."""

    def __init__(self, pipe: IO[str] | None) -> None:
        assert pipe is not None
        self.lines: list[str] = []
        self._thread = threading.Thread(target=lambda: self.lines.extend(pipe), daemon=True)
        self._thread.start()

    def has(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def wait_for(self, text: str) -> None:
        """Until a line has `text`; an end of output without it fails at once."""

        def seen() -> bool:
            found = self.has(text)
            assert found or self._thread.is_alive(), f"no {text!r}: {self}"
            return found

        wait_for(seen, lambda: f"no {text!r} yet: {self}")

    def __str__(self) -> str:
        self._thread.join(0.5)
        return "".join(self.lines)[-3000:]


@contextlib.contextmanager
def jobbench(*args: str, cwd: Path) -> Iterator[tuple[subprocess.Popen[str], Lines, Lines]]:
    """The CLI with its TMPDIR in `cwd`; killed, with all it left, if the test fails."""
    (cwd / "tmp").mkdir(exist_ok=True)
    proc = start_jobbench(*args, cwd=cwd, env={"TMPDIR": str(cwd / "tmp")})
    try:
        yield proc, Lines(proc.stdout), Lines(proc.stderr)
    finally:
        if proc.poll() is None:
            proc.kill()
        for process in strays(cwd):
            process.kill()


def groups_of(proc: subprocess.Popen[str]) -> set[int]:
    """The process groups of what the command started (each worker, queue and Locust leads
    one: the SDK's heartbeat child is in its worker's; the orphan guard leads its own)."""
    own = os.getpgid(proc.pid)
    groups = set()
    for child in psutil.Process(proc.pid).children(recursive=True):
        with contextlib.suppress(ProcessLookupError):
            groups.add(os.getpgid(child.pid))
    return groups - {own}


def strays(folder: Path, groups: Collection[int] = ()) -> list[psutil.Process]:
    """Live processes (zombies aside) in one of `groups`, or naming `folder` in their command
    line, working directory or environment."""
    where = str(folder)
    found = []
    for process in psutil.process_iter(["cmdline", "cwd", "environ", "status"]):
        info = process.info
        if info["status"] == psutil.STATUS_ZOMBIE or process.pid == os.getpid():
            continue
        texts = [*(info["cmdline"] or ()), info["cwd"] or "", *(info["environ"] or {}).values()]
        named = any(t == where or where + os.sep in t for t in texts)
        with contextlib.suppress(psutil.Error):
            if named or os.getpgid(process.pid) in groups:
                found.append(process)
    return found


def assert_nothing_left(folder: Path, groups: set[int], timeout_s: float = 5) -> None:
    deadline = time.monotonic() + timeout_s  # a reparented child takes a moment to see its group go
    while (left := strays(folder, groups)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, [(p.pid, p.info["cmdline"]) for p in left]


def stop(proc: subprocess.Popen[str], sig: int, again: Callable[[], bool] | None = None) -> float:
    """Signal `proc`, again once `again()` holds (its cleanup is under way), and return the
    seconds it took to exit."""
    began = time.monotonic()
    proc.send_signal(sig)
    if again is not None:
        wait_for(again, lambda: "the cleanup never began")
        proc.send_signal(sig)
    proc.wait(STOP_S)
    return time.monotonic() - began


def saved(path: Path) -> tuple[dict[str, object], set[int]]:
    """A saved result, and the reps its events file holds (each line whole JSON)."""
    doc = json.loads(path.read_text())
    lines = path.with_suffix(".events.jsonl").read_text().splitlines()
    return doc, {json.loads(line)["rep"] for line in lines}


def reps_of(doc: dict[str, object]) -> int:
    scenarios = doc["scenarios"]
    assert isinstance(scenarios, list)
    return len(scenarios[0]["reps"]) if scenarios else 0


SUITE = """
[variants.stuck]
worker = "STUCK"

[suites.tiny]
reps = 5
latency = {take = 0.05, wake = 0.005, hold = 2}
scenarios = [{name = "deep", workers = 1, slots = 8, burst = 64, job_seconds = 0.05}]
"""


@pytest.mark.parametrize(
    ("command", "sig", "sides", "under_way", "reps"),
    [
        # Ctrl-C in A's second rep: one whole rep a side, interleaved A, B
        ("compare", signal.SIGINT, ("main", "pr"), "main deep: rep 2/", (1, 1)),
        # SIGTERM in B's first rep, then again while B's worker takes its whole grace to stop
        ("gate", signal.SIGTERM, ("main", "stuck"), "stuck deep: rep 1/", (1, 0)),
    ],
    ids=["compare-ctrl-c", "gate-sigterm-twice"],
)
def test_compare_and_gate_save_both_sides_interrupted_with_events_matching_their_reps(
    tmp_path: Path,
    command: str,
    sig: int,
    sides: tuple[str, str],
    under_way: str,
    reps: tuple[int, int],
) -> None:
    marker = tmp_path / "sigterm"
    # It holds the jobs it takes: its rep lasts until they are overdue, and the signal lands
    # in it however slow this busy machine is to send it (a worker that polls on lost them at
    # once, and the rep ended before the signal came).
    (tmp_path / "jobbench.toml").write_text(SUITE.replace("STUCK", stubborn(marker, "hold")))
    args = [command, *sides, "--suite", "tiny"]
    with jobbench(*args, cwd=tmp_path) as (proc, _, stderr):
        stderr.wait_for(under_way)
        groups = groups_of(proc)
        assert len(groups) == 5  # a queue and a worker a side, the orphan guard
        stop(proc, sig, again=marker.exists if "stuck" in sides else None)
        assert proc.returncode == 130, stderr
        assert_nothing_left(tmp_path, groups)
    for side, count in zip(sides, reps):
        doc, events = saved(tmp_path / "reports" / f"{side}.json")
        assert doc["complete"] is False and doc["interrupted"] is True, side
        assert reps_of(doc) == count and events == set(range(1, count + 1)), side


@pytest.mark.parametrize("sig", [signal.SIGTERM], ids=["sigterm"])  # Ctrl-C: test_locust.py
def test_locust_passes_the_signal_on_reports_its_jobs_and_a_second_stops_everything(
    tmp_path: Path, sig: int
) -> None:
    args = ["locust", "--headless", "--users", "4", "--spawn-rate", "20", "--worker", "model"]
    args += ["--workers", "2", "--slots", "4", "--job-seconds", "0.05", *FAST]
    with jobbench(*args, cwd=tmp_path) as (proc, _, stderr):
        stderr.wait_for("All users spawned")
        time.sleep(0.5)  # jobs under way
        groups = groups_of(proc)
        assert len(groups) == 5  # the queue, two workers, Locust, the orphan guard
        # The second once Locust was told to write its reports: cut short. (Sent at once, the
        # two may reach jobbench as one signal: the kernel keeps one pending SIGTERM.)
        twice = sig == signal.SIGTERM
        stop(
            proc,
            sig,
            again=(lambda: stderr.has("Locust is writing its reports")) if twice else None,
        )
        assert proc.returncode == 130, stderr
        assert twice or "JOB: " in str(stderr)  # what Locust saw, from the stats it wrote
        assert_nothing_left(tmp_path, groups)


def test_workers_ctrl_c_stops_every_model_worker_and_exits_130(
    server: RunningServer, tmp_path: Path
) -> None:
    args = ["workers", "--server", server.base_url, "--worker", "model", "--workers", "2"]
    with jobbench(*args, "--slots", "2", cwd=tmp_path) as (proc, stdout, stderr):
        stdout.wait_for("polling")
        groups = groups_of(proc)
        assert len(groups) == 3  # two workers, the orphan guard
        stop(proc, signal.SIGINT)
        assert proc.returncode == 130, stderr
        assert_nothing_left(tmp_path, groups)


def test_workers_second_sigterm_while_stopping_still_kills_every_worker(
    server: RunningServer, tmp_path: Path
) -> None:
    marker = tmp_path / "sigterm"
    args = ["workers", "--server", server.base_url, "--worker", stubborn(marker), "--workers", "2"]
    with jobbench(*args, "--slots", "1", cwd=tmp_path) as (proc, stdout, stderr):
        stdout.wait_for("polling")
        groups = groups_of(proc)
        assert len(groups) == 3  # two workers, the orphan guard
        stop(proc, signal.SIGTERM, again=marker.exists)
        assert proc.returncode == 130, stderr  # interrupted, as every command
        assert_nothing_left(tmp_path, groups)


def test_run_killed_with_sigkill_leaves_its_guard_to_stop_everything(tmp_path: Path) -> None:
    """No stop runs in a SIGKILLed jobbench (kill -9, the OOM killer, a CI runner's hard
    timeout): its orphan guard stops the queue and the workers, then ends; the reps saved before
    stay readable, the result not marked complete. (A member of a group that ignores SIGTERM,
    as the SDK's heartbeat child may: tests/integration/test_process_cleanup.py.)"""
    args = ["run", "--worker", "model", "--workers", "2", "--slots", "4", "--burst", "64"]
    args += ["--job-seconds", "0.05", "--reps", "3"]
    with jobbench(*args, *FAST, cwd=tmp_path) as (proc, _, stderr):
        stderr.wait_for("rep 2/3")  # rep 1 is saved
        groups = groups_of(proc)
        assert len(groups) == 4  # the queue, two workers, the orphan guard
        proc.kill()
        proc.wait(STOP_S)
        assert_nothing_left(tmp_path, groups, timeout_s=STOP_S)
    doc, reps = saved(tmp_path / "reports" / "run.json")
    assert doc["complete"] is False and reps_of(doc) == 1 and reps == {1}


def test_run_second_ctrl_c_while_stopping_still_stops_the_queue(tmp_path: Path) -> None:
    marker = tmp_path / "sigterm"
    args = ["run", "--worker", stubborn(marker), "--workers", "1", "--slots", "1", "--burst", "4"]
    args += ["--reps", "1"]
    with jobbench(*args, "--no-pin-queue", *FAST, cwd=tmp_path) as (proc, _, stderr):
        stderr.wait_for("rep 1/1")  # a rep under way: the queue and the worker are up
        groups = groups_of(proc)
        assert len(groups) == 3  # the queue runs in its own session: only we and the guard stop it
        stop(proc, signal.SIGINT, again=marker.exists)
        assert proc.returncode == 130, stderr
        assert_nothing_left(tmp_path, groups)


@BOTH
def test_serve_stops_on_either_signal_and_again_exits_130(tmp_path: Path, sig: int) -> None:
    with jobbench("serve", "--port", "0", cwd=tmp_path) as (proc, stdout, stderr):
        stdout.wait_for("listening on")
        stop(proc, sig, again=lambda: True)  # the second while it closes its connections
        assert proc.returncode == 130, stderr
        assert_nothing_left(tmp_path, set())


@BOTH
def test_report_interrupted_while_reading_exits_130_writing_nothing(
    tmp_path: Path, sig: int
) -> None:
    """The result is a FIFO that nobody writes: the report waits reading it until the signal."""
    fifo = tmp_path / "reports" / "slow.json"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    with jobbench("report", "slow", "--html", "page.html", cwd=tmp_path) as (proc, _, stderr):
        writer = -1

        def opened_by_report() -> bool:  # a writer's open succeeds once a reader has it open
            nonlocal writer
            with contextlib.suppress(OSError):
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            return writer >= 0

        wait_for(opened_by_report, lambda: "the report never opened its result")
        # Its open() has returned: give it time to block in read(). A signal that lands in the
        # microseconds between the two is CPython's own race (the handler runs only after the
        # read returns), which a user would meet as needing a second Ctrl-C.
        time.sleep(0.5)
        try:
            stop(proc, sig)
        finally:
            os.close(writer)
        assert proc.returncode == 130, stderr
        assert str(stderr).strip() == "error: interrupted (Ctrl-C or SIGTERM)"
        assert not (tmp_path / "page.html").exists()


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
