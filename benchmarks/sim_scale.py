"""Simulator scale: wall time and peak RSS of one `simulate_rep` (jobbench/core/sim/engine.py)
against jobs and workers (target: 1,000,000 jobs and 1,000 workers in under a minute and 2 GB).

Each point is one rep in a fresh process of its own, so its peak RSS (getrusage ru_maxrss) is
that rep's alone: W model workers x 32 slots drain a burst of J 0.5 s jobs at the reference
latencies (take 0.5 s, wake 0.05 s, hold 20 s, done 0). Figures are wall time, microseconds a
job, peak RSS and bytes a job, and the rep's time to 99 % (a check the point ran the model).

    .venv/bin/python benchmarks/sim_scale.py                        # the whole curve, minutes
    .venv/bin/python benchmarks/sim_scale.py --jobs 10000,100000 --workers 16,200 --json
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from common import print_machine, table

ROOT = Path(__file__).resolve().parent.parent
JOBS = (10_000, 100_000, 1_000_000)
WORKERS = (16, 200, 1_000)
SLOTS, JOB_SECONDS = 32, 0.5


def one_point(workers: int, jobs: int, policy: str) -> dict[str, Any]:
    """Run in the point's own process: one simulated rep, measured."""
    sys.path.insert(0, str(ROOT))
    from fake_queue.api import Distribution, LatencyModel
    from jobbench.core.scenario.config import Scenario
    from jobbench.core.scenario.worker import worker_spec
    from jobbench.core.sim.engine import simulate_rep

    scenario = Scenario(
        name=f"scale-{workers}w-{jobs}j",
        workers=workers,
        slots=SLOTS,
        burst=jobs,
        job_seconds=JOB_SECONDS,
        worker=worker_spec("model", policy, SLOTS if policy == "take-ahead" else 0, None, None),
        latency=LatencyModel(
            take=Distribution("fixed", 0.5),
            wake=Distribution("fixed", 0.05),
            hold=Distribution("fixed", 20.0),
            done=Distribution("fixed", 0.0),
        ),
    )
    before_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # imports, the interpreter
    began = time.perf_counter()
    outcome = simulate_rep(scenario, seed=1)
    wall_s = time.perf_counter() - began
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "workers": workers,
        "jobs": jobs,
        "policy": policy,
        "wall_s": round(wall_s, 3),
        "us_per_job": round(wall_s / jobs * 1e6, 1),
        "peak_rss_mb": round(peak_kib / 1024, 1),
        "bytes_per_job": round((peak_kib - before_kib) * 1024 / jobs),
        "time_to_p99_s": outcome.measure.figures["time_to_p99_s"],
        "completed": outcome.measure.figures["jobs"]["completed"],
    }


def run_point(workers: int, jobs: int, policy: str) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--point", f"{workers},{jobs}", "--policy", policy]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"point {workers} x {jobs} failed:\n{done.stderr}")
    point: dict[str, Any] = json.loads(done.stdout)
    return point


def numbers(text: str) -> list[int]:
    return [int(part.replace("_", "")) for part in text.split(",") if part]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=numbers, default=list(JOBS), help="comma-separated bursts")
    p.add_argument("--workers", type=numbers, default=list(WORKERS), help="comma-separated")
    p.add_argument("--policy", default="drain", choices=("drain", "take-ahead", "sdk-1.12"))
    p.add_argument("--json", action="store_true", help="print the points as JSON, no table")
    p.add_argument("--point", help=argparse.SUPPRESS)  # W,J: run one point in this process
    args = p.parse_args()
    if args.point:
        workers, jobs = numbers(args.point)
        print(json.dumps(one_point(workers, jobs, args.policy)))
        return
    points = []
    for jobs in args.jobs:
        for workers in args.workers:
            points.append(run_point(workers, jobs, args.policy))
            if not args.json:
                print(f"  {workers} workers x {jobs} jobs: {points[-1]['wall_s']} s", flush=True)
    if args.json:
        print(json.dumps(points, indent=2))
        return
    print_machine()
    headers = ["workers", "jobs", "wall s", "us/job", "peak RSS MB", "B/job", "p99 s"]
    keys = ["workers", "jobs", "wall_s", "us_per_job", "peak_rss_mb", "bytes_per_job"]
    rows = [[pt[k] for k in keys] + [pt["time_to_p99_s"]] for pt in points]
    print(table(headers, rows))


if __name__ == "__main__":
    main()
