"""An arrival profile through the fake queue and real worker processes
(core/real_workers/rep_drive.py, core/real_workers/submit_pacer.py): the real SDK worker and a
user's command run under a profile as the model worker does, every job arrives and is done. When
each wave went out is bounded with the machine to itself: benchmarks/timed/test_pacing_timing.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from jobbench.core.scenario.load_profiles import parse_load
from tests.e2e.helpers import run_jobbench

FAST = ["--take-latency", "0.02", "--wake-latency", "0.005", "--hold", "2"]


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
