"""The watchdog and faults end to end (core/real_workers/watchdog.py,
core/real_workers/rep_drive.py): the real CLI, the embedded queue and real worker processes. A
worker paused by hand is flagged and its rep set aside; one that never comes back fails the run in
seconds, naming it, its partial rep kept; faults asked for are measured; jobs lost without them fail
the run, naming them."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil

from tests.e2e.helpers import anomalies_of_the_run, run_jobbench, start_jobbench

FAST = ["--take-latency", "0.05", "--wake-latency", "0.005", "--hold", "2", "--stall-after", "1"]
MODEL = ["--worker", "model", "--policy", "drain", "--workers", "2", "--slots", "8"]
STUBBORN = Path(__file__).with_name("stubborn_worker.py")
PLANTED = Path(__file__).with_name("planted_worker.py")


def worker_process(run: subprocess.Popen[str], suffix: str) -> psutil.Process:
    for child in psutil.Process(run.pid).children(recursive=True):
        try:
            if child.environ().get("RUNPOD_POD_ID", "").endswith(suffix):
                return child
        except psutil.Error:
            continue
    raise AssertionError(f"no worker {suffix} under the run")


def wait_for(run: subprocess.Popen[str], text: str) -> None:
    assert run.stderr is not None
    for line in run.stderr:
        if text in line:
            return
    raise AssertionError(f"the run ended before printing {text!r}")


def saved_events(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / "reports" / "run.events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def stalls(rep: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for a in rep.get("anomalies", []) if a["kind"] == "stall"]


def saved(folder: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((folder / "reports" / "run.json").read_text())
    return doc


def test_a_paused_worker_counts_and_a_hung_one_fails_the_run_fast(tmp_path: Path) -> None:
    run = start_jobbench(
        "run", *MODEL, "--burst", "64", "--job-seconds", "0.2", "--reps", "3", *FAST, cwd=tmp_path
    )
    wait_for(run, "rep 1/3")
    victim = worker_process(run, "-w0")
    victim.suspend()
    time.sleep(2.5)  # past the stall bound (1 s), short of giving up (4 s)
    victim.resume()
    wait_for(run, "rep 3/3")
    victim.suspend()  # and never again resumed
    stopped_at = time.monotonic()
    _, stderr = run.communicate(timeout=60)
    took = time.monotonic() - stopped_at
    assert run.returncode == 4
    assert "-w0 made no take and no job-done for 4 s" in stderr and "logs" in stderr
    assert took < 15  # 4 s to give up, the SIGSTOPped worker's SIGKILL after the grace
    doc = saved(tmp_path)
    rep1, rep2, rep3 = doc["scenarios"][0]["reps"]
    (stall,) = stalls(rep1)
    assert stall["worker"].endswith("-w0") and stall["resumed"] is True
    assert 1.0 <= stall["for_s"] <= 4.0 and stall["held"] > 0
    assert not anomalies_of_the_run(rep2) and "partial" not in rep2
    assert rep3["partial"] == "stalled" and stalls(rep3)[0]["resumed"] is False
    assert rep3["jobs"]["unfinished"] > 0  # figures of the jobs that did finish are kept
    # The stalled rep is the worker's own doing: it counts; the partial one stays out. A rep
    # that the tests beside this one filled the machine in is set aside for that, as it should.
    summary = doc["scenarios"][0]["summary"]["time_to_p99_s"]
    if not any(a["kind"] == "saturated" for rep in (rep1, rep2) for a in rep.get("anomalies", [])):
        assert summary["min"] == rep2["time_to_p99_s"] and summary["max"] == rep1["time_to_p99_s"]
    assert {row["rep"] for row in saved_events(tmp_path)} == {1, 2, 3}  # the partial one too
    assert doc["complete"] is False and "-w0 made no take" in doc["error"]


def test_faults_asked_for_are_measured_not_failed(tmp_path: Path) -> None:
    result = run_jobbench(
        "run", *MODEL, "--burst", "64", "--job-seconds", "0.1", "--reps", "2", *FAST,
        "--seed", "3", "--fault", "job-done:drop:0.1", "--worker-fault", "kill:0.3:w1",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "faults and losses" in result.stdout
    doc = saved(tmp_path)
    entry = doc["scenarios"][0]
    assert entry["params"]["faults"] == ["job-done:drop:0.1"]
    assert entry["params"]["worker_faults"] == ["kill:0.3:w1"]
    for rep in entry["reps"]:  # the killed worker was replaced for rep 2
        assert rep["faults"]["worker:kill"] == 1 and rep["faults"]["job-done:drop"] >= 1
        assert rep["jobs"]["lost"] == len(rep["lost_jobs"]) == rep["jobs"]["unfinished"] > 0
    faults = [row for row in saved_events(tmp_path) if row["ev"] == "fault"]
    assert {e["route"] for e in faults} == {"job-done"} and all("job" in e for e in faults)


def test_jobs_lost_without_faults_fail_the_run_naming_them(tmp_path: Path) -> None:
    worker = f"{sys.executable} {STUBBORN}"  # takes jobs, never reports one
    result = run_jobbench(
        "run", "--worker", worker, "--workers", "1", "--slots", "1", "--burst", "3",
        "--job-seconds", "0.1", "--reps", "2", *FAST, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 4
    assert "3 jobs lost by the workers" in result.stderr and "job-1" in result.stderr
    doc = saved(tmp_path)
    (rep,) = doc["scenarios"][0]["reps"]
    assert sorted(rep["lost_jobs"]) == ["job-1", "job-2", "job-3"]
    assert doc["complete"] is False
    kept = Path(result.stderr.rsplit("logs in ", 1)[1].split()[0].rstrip(";"))
    assert kept.is_dir() and any(kept.rglob("*.log"))  # a failure keeps and names its logs


def test_a_worker_that_hangs_between_reps_fails_the_next_rep_naming_it(tmp_path: Path) -> None:
    """Silent past the give-up bound before a rep: the rep starts and its watchdog ends it at
    its first look, partial and saved, as for a hang during a rep (a gate judges a candidate's
    on it, tests/e2e/test_planted_failures.py), not a run ended before anything was measured."""
    worker = f"{sys.executable} {PLANTED} --defect hang-when-idle"
    started = time.monotonic()
    result = run_jobbench(
        "run", "--worker", worker, "--workers", "1", "--slots", "4", "--burst", "4",
        "--job-seconds", "0.05", "--reps", "3", *FAST, "--stall-after", "0.5", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 4, result.stderr
    assert "did not poll the queue within 2 s" in result.stderr
    assert (
        "made no take and no job-done for" in result.stderr
        and "hung or was stopped" in result.stderr
    )
    doc = saved(tmp_path)
    first, second = doc["scenarios"][0]["reps"]  # the third never ran
    assert first["jobs"]["completed"] == 4 and "partial" not in first
    assert second["partial"] == "stalled" and second["anomalies"][0]["resumed"] is False
    assert doc["complete"] is False
    assert time.monotonic() - started < 30  # named within the give-up, not the start-up's 90 s
