"""Scale: 16 model workers x 32 slots draining a 50,000-job burst of 0.1 s jobs, and 8 real SDK
workers on this machine. Reports efficiency and the peak RSS of jobbench's own process (and,
apart, of the fake queue and the workers).

    python benchmarks/scale.py                  # both runs, ~2-4 min on 2 cores
    python benchmarks/scale.py --only model
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

RUNS = {
    "model": [
        "--worker",
        "model",
        "--policy",
        "take-ahead",
        "--take-ahead",
        "32",
        "--workers",
        "16",
        "--slots",
        "32",
        "--burst",
        "50000",
        "--job-seconds",
        "0.1",
    ],
    "sdk": [
        "--worker",
        "runpod",
        "--workers",
        "8",
        "--slots",
        "32",
        "--burst",
        "1024",
        "--job-seconds",
        "0.5",
    ],
}


class PeakRss(threading.Thread):
    """Samples RSS of the jobbench process and, separately, of its children."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.process = psutil.Process(pid)
        self.own = 0
        self.children: dict[str, int] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            try:
                self.own = max(self.own, self.process.memory_info().rss)
                for child in self.process.children(recursive=True):
                    kind = "fake_queue" if "fake_queue" in " ".join(child.cmdline()) else "worker"
                    self.children[kind] = max(self.children.get(kind, 0), child.memory_info().rss)
            except psutil.Error:
                pass
            time.sleep(0.2)


def run(name: str, out: Path) -> dict[str, Any]:
    argv = [
        sys.executable,
        "-m",
        "jobbench",
        "run",
        *RUNS[name],
        "--reps",
        "1",
        "--json",
        "--no-events",
        "--out",
        str(out),
        "--label",
        name,
    ]
    started = time.monotonic()
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, text=True, env={**os.environ, "CI": "true"}
    )
    sampler = PeakRss(proc.pid)
    sampler.start()
    stdout, _ = proc.communicate()
    sampler.done.set()
    if proc.returncode != 0:
        raise SystemExit(f"{name}: jobbench exited {proc.returncode}")
    rep = json.loads(stdout)["scenarios"][0]["reps"][0]
    return {
        "name": name,
        "wall_s": time.monotonic() - started,
        "rep": rep,
        "jobbench_rss_mb": sampler.own / 2**20,
        "children_rss_mb": {k: v / 2**20 for k, v in sampler.children.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", choices=sorted(RUNS))
    args = parser.parse_args()
    out = Path(tempfile.mkdtemp(prefix="jb-scale-"))
    print(
        f"machine: {os.cpu_count()} cpus, {platform.machine()}, python {platform.python_version()}"
    )
    print(
        "| run | jobs | time to 99 % | time to 100 % | ideal | efficiency | throughput | "
        "jobbench peak RSS | fake queue peak RSS | largest worker RSS | wall |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in [args.only] if args.only else list(RUNS):
        r = run(name, out)
        rep = r["rep"]
        children = r["children_rss_mb"]
        print(
            f"| {name} | {rep['jobs']['completed']}/{rep['jobs']['submitted']} | "
            f"{rep['time_to_p99_s']:.2f} s | {rep['time_to_p100_s']:.2f} s | "
            f"{rep['ideal_s']:.2f} s | {rep['efficiency']:.1%} | "
            f"{rep['throughput_jps']:.0f} jobs/s | {r['jobbench_rss_mb']:.0f} MB | "
            f"{children.get('fake_queue', 0):.0f} MB | {children.get('worker', 0):.0f} MB | "
            f"{r['wall_s']:.0f} s |",
            flush=True,
        )


if __name__ == "__main__":
    main()
