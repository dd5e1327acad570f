"""`jobbench run` failure paths with real processes: exit codes, partial results, no orphans."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.e2e.helpers import run_jobbench, start_jobbench

HERE = Path(__file__).parent
FAST = ["--take-latency", "0.05", "--wake-latency", "0.005", "--hold", "2"]


def jobbench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_jobbench(*args, cwd=cwd, timeout_s=120)


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--workers", "0"], "--workers"),
        (["--burst", "-5"], "--burst"),
        (["--job-seconds", "-1"], "--job-seconds"),
        (["--worker", "model", "--policy", "fastest"], "--policy"),
        (["--worker", "model", "--policy", "drain", "--take-ahead", "8"], "--take-ahead"),
        (["--take-latency", "soon"], "--take-latency"),
        (["--reps", "0"], "--reps"),
        (["--input", "{not json"], "--input"),
        (["--take-ahead", "8"], "--take-ahead"),  # SDK 1.12.0 has none: say so, don't measure
        (["--worker", "runpod", "--sdk", "/no/such/checkout"], "--sdk"),
        (["--python", "/no/such/python"], "--python"),
        (["--server", "localhost:8000"], "--server"),  # no scheme: not a URL
    ],
)
def test_bad_input_exits_2_with_one_line_naming_the_flag(
    args: list[str], flag: str, tmp_path: Path
) -> None:
    result = jobbench("run", *args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and flag in lines[0], result.stderr
    assert not (tmp_path / "reports").exists()


def test_worker_command_that_cannot_start_exits_4_naming_it(tmp_path: Path) -> None:
    (tmp_path / "broken_handler.py").write_text("import no_such_module_xyz\n")
    result = jobbench(
        "run",
        "--worker",
        f"{sys.executable} broken_handler.py",
        "--workers",
        "1",
        "--slots",
        "1",
        "--burst",
        "4",
        "--reps",
        "1",
        *FAST,
        cwd=tmp_path,
    )
    assert result.returncode == 4, result.stderr
    assert "worker 1w-4j-0.5s-w0" in result.stderr
    assert "no_such_module_xyz" in result.stderr  # the tail of its stderr
    doc = json.loads((tmp_path / "reports" / "run.json").read_text())
    assert doc["complete"] is False and "exited before it started polling" in doc["error"]


def test_worker_dying_mid_run_exits_4_keeps_partial_result_and_leaves_no_process(
    tmp_path: Path,
) -> None:
    inputs = tmp_path / "inputs.jsonl"
    inputs.write_text("\n".join([json.dumps({"seconds": 0.05})] * 15 + [json.dumps({"crash": 1})]))
    proc = start_jobbench(
        "run",
        "--worker",
        f"{sys.executable} {HERE / 'crash_handler.py'}",
        "--workers",
        "2",
        "--slots",
        "4",
        "--burst",
        "64",
        "--inputs",
        str(inputs),
        "--reps",
        "2",
        *FAST,
        cwd=tmp_path,
    )
    descendants = _descendants_while_running(proc)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 4, stderr
    assert "died (exit code 3)" in stderr and "dying on purpose" in stderr
    doc = json.loads((tmp_path / "reports" / "run.json").read_text())
    assert doc["complete"] is False and doc["interrupted"] is False
    _assert_all_gone(descendants)


def test_failed_jobs_are_printed_with_their_share_and_exit_4_past_max_fail_ratio(
    tmp_path: Path,
) -> None:
    """A flaky handler: one job in ten raises. The table says so, and by default
    (--max-fail-ratio 0) the run exits 4 (the limit itself: tests/unit/test_fail_ratio.py)."""
    inputs = tmp_path / "inputs.jsonl"
    jobs = [{"seconds": 0.05, **({"fail": 1} if i % 10 == 9 else {})} for i in range(20)]
    inputs.write_text("\n".join(json.dumps(job) for job in jobs))
    worker = f"{sys.executable} {HERE / 'flaky_handler.py'}"
    sizes = ["--workers", "1", "--slots", "20", "--burst", "20", "--inputs", str(inputs)]
    strict = jobbench("run", "--worker", worker, *sizes, "--reps", "1", *FAST, cwd=tmp_path)
    assert strict.returncode == 4, strict.stderr
    assert "jobs: 2 of 20 jobs failed (10.0%) over 1 rep" in strict.stdout
    assert "jobs completed" in strict.stdout and "90.0%" in strict.stdout
    said = [line for line in strict.stderr.splitlines() if "--max-fail-ratio" in line]
    assert said == ["jobbench: 1w-20j-0.5s: 2 of 20 jobs failed (10.0%), over --max-fail-ratio 0"]
    doc = json.loads((tmp_path / "reports" / "run.json").read_text())
    assert doc["time_to_counts"] == "completed" and doc["complete"] is True
    (rep,) = doc["scenarios"][0]["reps"]
    assert rep["jobs"]["failed"] == 2 and rep["jobs"]["completed"] == 18
    assert rep["time_to_p99_s"] is None  # 99 % of 20 is 20 completed jobs: only 18 did


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_stops_promptly_saves_partial_result_marked_interrupted(
    tmp_path: Path, sig: signal.Signals
) -> None:
    """SIGTERM is what CI's timeout and a cancelled job send: the same as Ctrl-C."""
    proc = start_jobbench(
        "run",
        "--workers",
        "2",
        "--slots",
        "4",
        "--burst",
        "400",
        "--job-seconds",
        "0.05",
        "--reps",
        "3",
        *FAST,
        cwd=tmp_path,
    )
    assert proc.stderr is not None
    for line in proc.stderr:  # wait until a rep is under way
        if "rep 1/3" in line:
            break
    descendants = psutil.Process(proc.pid).children(recursive=True)
    assert len(descendants) >= 3  # queue + 2 workers (+ SDK heartbeat children)
    proc.send_signal(sig)
    proc.wait(timeout=30)
    assert proc.returncode == 130
    doc = json.loads((tmp_path / "reports" / "run.json").read_text())
    assert doc["complete"] is False and doc["interrupted"] is True
    assert "Ctrl-C or SIGTERM" in doc["error"]
    assert len(doc["scenarios"][0]["reps"]) < 3  # stopped mid-run, not after the last rep
    _assert_all_gone(descendants)


def _descendants_while_running(proc: subprocess.Popen[str]) -> list[psutil.Process]:
    seen: dict[int, psutil.Process] = {}
    while proc.poll() is None:
        try:
            for child in psutil.Process(proc.pid).children(recursive=True):
                seen.setdefault(child.pid, child)
        except psutil.NoSuchProcess:
            break
        time.sleep(0.1)
    return list(seen.values())


def _assert_all_gone(processes: list[psutil.Process]) -> None:
    deadline = time.monotonic() + 5
    alive = processes
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        time.sleep(0.1)
    assert not alive, [p.cmdline() for p in alive]
