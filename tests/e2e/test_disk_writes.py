"""The workers' own disk writes in a real run (docs/metrics.md, "The workers' disk writes"): a
real SDK worker that rewrites and fsyncs a file on every job carries the figure above the
threshold and the `disk_writes` behaviour; the same worker without the writes, its log lines
alone, stays below it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from jobbench.measure.disk_writes import DISK_KIND, THRESHOLD_KIB
from tests.e2e.helpers import run_jobbench

HERE = Path(__file__).parent
FAST = ["--take-latency", "0.05", "--wake-latency", "0.005", "--hold", "2"]
WORKER = f"{sys.executable} {HERE / 'disk_handler.py'}"


def run_rep(job_input: dict[str, Any], label: str, cwd: Path) -> tuple[dict[str, Any], str]:
    result = run_jobbench(
        "run", "--json", "--worker", WORKER, "--workers", "1", "--slots", "32", "--burst", "32",
        "--input", json.dumps(job_input), "--reps", "1", "--label", label, *FAST,
        cwd=cwd, timeout_s=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (scenario,) = json.loads(result.stdout)["scenarios"]
    (rep,) = scenario["reps"]
    assert rep["jobs"]["completed"] == 32
    return rep, result.stderr


def kib_per_job(rep: dict[str, Any]) -> float:
    return float(sum(rep["worker_write_bytes"].values())) / 1024 / rep["jobs"]["completed"]


def test_a_worker_that_fsyncs_a_file_every_job_shows_the_behaviour(tmp_path: Path) -> None:
    rep, said = run_rep({"seconds": 0.02, "write": 1}, "writes", tmp_path)
    assert len(rep["worker_write_bytes"]) == 1, rep["worker_write_bytes"]  # its one worker
    assert kib_per_job(rep) > THRESHOLD_KIB  # a page rewritten a job: 4 KiB a job or more
    (found,) = [a for a in rep["anomalies"] if a["kind"] == DISK_KIND]
    assert found["what"] in said  # the rep's progress line says it
    quiet, _ = run_rep({"seconds": 0.02}, "quiet", tmp_path)
    assert kib_per_job(quiet) < THRESHOLD_KIB, quiet["worker_write_bytes"]  # its log lines
    assert not [a for a in quiet.get("anomalies") or [] if a["kind"] == DISK_KIND]
