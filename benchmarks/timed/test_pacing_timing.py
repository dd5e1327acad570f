"""An arrival profile through the fake queue and real model-worker processes: every wave goes
out at its intended time from the pacer's thread and the queue's submits follow the profile. The
times it bounds are the machine's to keep, so it runs here with the machine to itself
(benchmarks/timed_checks.py); tests/e2e/test_load_profile.py runs profiles through every worker
kind, checking what arrived, not when."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

from tests.e2e.helpers import run_jobbench
from tests.e2e.test_load_profile import FAST


def test_a_rate_profile_runs_open_loop_through_real_workers(tmp_path: Path) -> None:
    proc = run_jobbench(
        "run", "--worker", "model", "--policy", "drain", "-w", "2", "--slots", "4",
        "--job-seconds", "0.05", "--load", "rate:50/s:for:1s", "--reps", "1", *FAST,
        "--label", "rate", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "reports" / "rate.json").read_text())
    (entry,) = doc["scenarios"]
    assert entry["params"]["load"] == "rate:50/s:for:1s" and entry["ideal_s"] is None
    (rep,) = entry["reps"]
    assert rep["jobs"]["completed"] == 50
    pacing = rep["arrivals"]
    assert pacing["spec"] == "rate:50/s:for:1s"
    assert pacing["submissions"] == 50 and pacing["jobs"] == 50 and pacing["not_sent"] == 0
    assert 0 <= pacing["lateness_p50_s"] <= pacing["lateness_p99_s"] <= pacing["lateness_max_s"]
    steady = rep["steady"]  # 50 jobs/s for a fleet of 8 slots and 50 ms jobs: it keeps up
    assert steady["saturated"] is False and sum(w["arrivals"] for w in steady["windows"]) == 50
    rows = [json.loads(line) for line in (tmp_path / "reports" / "rate.events.jsonl").open()]
    submits = sorted(row["t"] for row in rows if row["ev"] == "submit")  # us from the first
    assert len(submits) == 50
    # spread over the profile's second, not sent at once: the last about 0.98 s after the first
    assert 0.9e6 < submits[-1] < 1.5e6
    gaps = [b - a for a, b in pairwise(submits)]
    assert (
        sum(1 for gap in gaps if gap > 10_000) > 25
    )  # most ~20 ms apart (a late one joins the next)
