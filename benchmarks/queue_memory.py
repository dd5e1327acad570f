"""Queue memory: resident memory of the server process holding 100,000 queued jobs.

A server process, no workers; bursts of {"seconds": 0.5} jobs until 100,000 are queued. RSS is
VmRSS from /proc/PID/status before the first burst and after the last (VmHWM is the peak).
Two input modes: `shared` posts {"count": N, "input": {...}} (every job of a burst refers to one
parsed input object, as /_bench/burst does), `distinct` posts {"inputs": [...]} with one
separately parsed object per job (what /run submissions cost). Target: < 200 MB after.

    .venv/bin/python benchmarks/queue_memory.py
    .venv/bin/python benchmarks/queue_memory.py --jobs 100000 --burst 10000 --mode shared
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from common import (
    CpuMeter,
    add_server_args,
    describe_cpu,
    http_json,
    launcher_argv,
    print_machine,
    server_process,
    state,
    table,
    vm_rss_kib,
)

TARGET_MB = 200.0
JOB_INPUT = {"seconds": 0.5}


def vm_hwm_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def fill(url: str, jobs: int, burst_size: int, mode: str) -> float:
    """Queue `jobs` jobs in bursts; returns the seconds it took."""
    started = time.monotonic()
    left = jobs
    while left > 0:
        n = min(left, burst_size)
        body: dict[str, Any]
        if mode == "shared":
            body = {"count": n, "input": JOB_INPUT}
        else:
            body = {"inputs": [dict(JOB_INPUT) for _ in range(n)]}
        left -= int(http_json("POST", f"{url}/_bench/burst", body)["count"])
    return time.monotonic() - started


def measure(args: argparse.Namespace, mode: str) -> dict[str, Any]:
    launcher = launcher_argv(args)
    with server_process(["--hold", "20", *args.server_arg], launcher) as srv:
        time.sleep(args.settle)
        before = vm_rss_kib(srv.pid)
        meter = CpuMeter()
        meter.track(srv.pid)
        fill_s = fill(srv.url, args.jobs, args.burst, mode)
        time.sleep(args.settle)
        after = vm_rss_kib(srv.pid)
        peak = vm_hwm_kib(srv.pid)
        cpu = meter.stop()
        counts = state(srv.url)["counts"]
    return {
        "mode": mode,
        "before_mb": before / 1024,
        "after_mb": after / 1024,
        "peak_mb": peak / 1024,
        "per_job_b": (after - before) * 1024 / args.jobs,
        "fill_s": fill_s,
        "queued": counts["in_queue"],
        "cpu": cpu,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--jobs", type=int, default=100_000, help="jobs to queue (default 100,000)")
    p.add_argument("--burst", type=int, default=10_000, help="jobs per burst (default 10,000)")
    p.add_argument("--mode", choices=("shared", "distinct", "both"), default="both")
    p.add_argument("--settle", type=float, default=0.5, help="pause before reading RSS, s")
    add_server_args(p)
    args = p.parse_args(argv)

    print_machine()
    modes = ("shared", "distinct") if args.mode == "both" else (args.mode,)
    results = [measure(args, m) for m in modes]
    print(
        f"\n{args.jobs} jobs in bursts of {args.burst}, input {JOB_INPUT}; "
        f"server: {args.launcher or 'python -m fake_queue'}"
    )
    print(
        table(
            [
                "mode",
                "queued",
                "RSS before MB",
                "RSS after MB",
                "peak (HWM) MB",
                "bytes/job",
                "fill s",
            ],
            [
                [
                    r["mode"],
                    r["queued"],
                    r["before_mb"],
                    r["after_mb"],
                    r["peak_mb"],
                    round(r["per_job_b"]),
                    r["fill_s"],
                ]
                for r in results
            ],
        )
    )
    for r in results:
        met = r["after_mb"] < TARGET_MB
        print(
            f"{r['mode']}: target RSS after < {TARGET_MB:.0f} MB: "
            f"{'MET' if met else 'MISSED'} ({r['after_mb']:.1f} MB); {describe_cpu(r['cpu'])}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
