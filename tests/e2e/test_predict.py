"""Predicted beside measured: a real fake-queue run of the model worker (embedded queue, worker
processes over HTTP) saves the simulated figures of the same scenario in its result and prints
them under the table; each measured rep sits above the prediction (the simulation has no
harness, so it is the lower bound) by no more than the harness's overhead (docs/simulation.md,
"Predicted beside measured")."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.helpers import run_jobbench

FAST = ("--take-latency", "0.05", "--wake-latency", "0.01", "--hold", "2")
SCENARIO = ("--worker", "model", "-w", "1", "-b", "64", "--job-seconds", "0.1", "--reps", "2")
OVERHEAD_MAX_S = 0.1  # HTTP round trips and timer wake-ups over 2 drain cycles, a busy VM
EARLY_TIMER_S = 0.002  # a real timer may fire a little early, a virtual one never


def test_a_model_worker_run_saves_and_shows_its_prediction(tmp_path: Path) -> None:
    ran = run_jobbench(
        "run", *SCENARIO, *FAST, "--seed", "5", "--label", "p", cwd=tmp_path, timeout_s=120
    )
    assert ran.returncode == 0, ran.stderr
    (entry,) = json.loads((tmp_path / "reports" / "p.json").read_text())["scenarios"]
    predicted = entry["predicted"]
    assert predicted["policy"] == "drain" and predicted["draws"] == 1
    # one worker x 32 slots drains 64 jobs in 2 rounds: wake + job, then take + job
    assert abs(predicted["time_to_p99_s"] - (0.01 + 0.1 + 0.05 + 0.1)) < 1e-6
    assert predicted["takes_count"] == 2
    for rep in entry["reps"]:
        overhead = rep["time_to_p99_s"] - predicted["time_to_p99_s"]
        assert -EARLY_TIMER_S <= overhead <= OVERHEAD_MAX_S, (rep["time_to_p99_s"], predicted)
        assert rep["takes"]["count"] == predicted["takes_count"]
    median = entry["summary"]["time_to_p99_s"]["median"]
    gap_ms = (median - predicted["time_to_p99_s"]) * 1000
    shown = " ".join(ran.stdout.split())  # the line may wrap at the console's width
    assert (
        f"predicted (simulated drain model): time to 99 % 0.260 s; measured {median:.3f} s "
        f"(median): harness {gap_ms:+.0f} ms"
    ) in shown
