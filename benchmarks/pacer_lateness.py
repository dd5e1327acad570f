"""The open-loop driver's submission lateness (target: p99 under 2 ms at 500 jobs/s): runs
`jobbench run --load rate:R/s:for:D` on the embedded fake queue with model workers, one rep a
run, and reads each run's `arrivals` block (core/real_workers/submit_pacer.py): lateness
p50/p99/max, jobs later than 2 ms, requests, the pacer thread's scheduling (fifo, nice or normal)
and how busy the machine was during the rep. First, the machine's own floor: a bare thread sleeping
until each due time at the same rate.

    .venv/bin/python benchmarks/pacer_lateness.py                    # both fleets, 3 runs each
    .venv/bin/python benchmarks/pacer_lateness.py --rate 500 --runs 5 --fleets fast
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import print_machine, table

ROOT = Path(__file__).resolve().parent.parent
# Two fleets of four drain model workers: the reference latencies (saturated at 500 jobs/s:
# it completes about 85) and a fast one that keeps up (every job served within ~50 ms).
FLEETS = {
    "reference": ["-j", "0.1"],
    "fast": ["-j", "0.02", "--take-latency", "0.01", "--wake-latency", "0.005"],
}


def one_run(rate: float, seconds: float, fleet: str, folder: Path) -> dict[str, Any]:
    command = [
        sys.executable, "-m", "jobbench", "run", "--worker", "model", "--policy", "drain",
        "-w", "4", "--load", f"rate:{rate:g}/s:for:{seconds:g}s", "-n", "1", "--label", "late",
        "--out", str(folder), "--no-events", *FLEETS[fleet],
    ]  # fmt: skip
    subprocess.run(
        command, cwd=folder, env={**os.environ, "CI": "true"}, check=True, capture_output=True
    )
    doc = json.loads((folder / "late.json").read_text())
    rep = doc["scenarios"][0]["reps"][0]
    return {**rep["arrivals"], "cpu_busy": (rep.get("machine") or {}).get("cpu_busy")}


def timer_floor(rate: float, seconds: float) -> dict[str, float]:
    """What the machine itself gives a thread that sleeps until each due time (SCHED_FIFO
    where allowed, as the pacer): the floor under any driver's lateness (a VM's vCPU can be
    descheduled by its host, which no guest priority prevents)."""
    with contextlib.suppress(OSError, AttributeError):
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
    late = []
    due = time.monotonic()
    for _ in range(int(rate * seconds)):
        due += 1 / rate
        time.sleep(max(0.0, due - time.monotonic()))
        late.append(time.monotonic() - due)
    with contextlib.suppress(OSError, AttributeError):
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    ordered = sorted(late)
    return {
        "p50": ordered[len(ordered) // 2],
        "p99": ordered[int(len(ordered) * 0.99)],
        "max": ordered[-1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=500.0, help="jobs a second (500)")
    parser.add_argument("--seconds", type=float, default=10.0, help="the profile's length (10)")
    parser.add_argument("--runs", type=int, default=3, help="runs per fleet (3)")
    parser.add_argument("--fleets", default="reference,fast", help="reference,fast")
    args = parser.parse_args()
    print_machine()
    floor = timer_floor(args.rate, args.seconds)
    rows: list[list[Any]] = [
        ["bare sleep loop", "-", floor["p50"] * 1000, floor["p99"] * 1000, floor["max"] * 1000]
        + [""] * 4
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for fleet in args.fleets.split(","):
            p99s = []
            for run in range(1, args.runs + 1):
                a = one_run(args.rate, args.seconds, fleet, Path(tmp))
                p99s.append(a["lateness_p99_s"])
                rows.append(
                    [
                        fleet,
                        run,
                        a["lateness_p50_s"] * 1000,
                        a["lateness_p99_s"] * 1000,
                        a["lateness_max_s"] * 1000,
                        a["late_jobs"],
                        a["requests"],
                        a.get("priority"),
                        a["cpu_busy"],
                    ]
                )
            rows.append([fleet, "median", "", statistics.median(p99s) * 1000, "", "", "", "", ""])
    print(
        table(
            [
                "fleet",
                "run",
                "p50 ms",
                "p99 ms",
                "max ms",
                "late jobs",
                "requests",
                "pacer",
                "cpu busy",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    main()
