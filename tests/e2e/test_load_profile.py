"""An arrival profile through the fake queue and real model-worker processes
(core/fake/rep_drive.py, core/fake/submit_pacer.py): every wave goes out at its intended time from
the pacer's thread, the result says how late the driver was, and the queue's submits follow the
profile; the real SDK worker and a user's command run under a profile as the model worker does."""

from __future__ import annotations

import json
import sys
from itertools import pairwise
from pathlib import Path

import pytest

from jobbench.core.scenario.load_profiles import parse_load
from tests.e2e.helpers import run_jobbench

FAST = ["--take-latency", "0.02", "--wake-latency", "0.005", "--hold", "2"]


@pytest.mark.quiet  # a busy machine may set the pacing back or fill the fleet
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


HANDLER = """\
import asyncio, runpod
async def handler(job):
    await asyncio.sleep(job['input'].get('seconds', 0.02))
    return {'ok': True}
if __name__ == '__main__':
    runpod.serverless.start({'handler': handler, 'concurrency_modifier': lambda _: 32})
"""


def test_the_real_sdk_and_a_user_command_run_under_a_poisson_profile(tmp_path: Path) -> None:
    # The runpod SDK 1.12.0 worker and a user's handler, each under the same seeded Poisson
    # arrivals: every job served, every submission's intended time recorded, and the steady
    # part measured from the intended times (end-to-end at least the job's own 20 ms). 32 slots
    # keep up with 30 jobs/s (the SDK re-checks every 1 s only while full): the rep lasts about
    # the profile, not a backlog's drain at 4 jobs a second.
    handler = tmp_path / "handler.py"
    handler.write_text(HANDLER)
    load = "poisson:30/s:for:1.5s:seed:4"
    for label, worker in (("sdk", "runpod"), ("user", f"{sys.executable} {handler}")):
        proc = run_jobbench(
            "run", "--worker", worker, "-w", "1", "--slots", "32", "--job-seconds", "0.02",
            "--load", load, "--reps", "1", *FAST, "--label", label, cwd=tmp_path,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        (entry,) = json.loads((tmp_path / "reports" / f"{label}.json").read_text())["scenarios"]
        (rep,) = entry["reps"]
        expected = len(parse_load(load).waves())
        assert rep["arrivals"]["submissions"] == expected and rep["arrivals"]["not_sent"] == 0
        assert rep["jobs"]["completed"] == rep["arrivals"]["jobs"] == entry["params"]["burst"]
        assert rep["steady"]["e2e_p50_s"] >= 0.02
        rows = [
            json.loads(line) for line in (tmp_path / "reports" / f"{label}.events.jsonl").open()
        ]
        submits = [row for row in rows if row["ev"] == "submit"]
        assert len(submits) == rep["jobs"]["completed"]
        assert all(row.get("intended", row["t"]) <= row["t"] for row in submits)
