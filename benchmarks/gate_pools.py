"""Collect pools of real reps of the seed suite, quiet and beside a busy core, for the gate's
error-rate study (benchmarks/gate_error_rates.py resamples them; docs/ci.md has the figures).

    python benchmarks/gate_pools.py --shallow-reps 60 --deep-reps 5   # about 30 min
    python benchmarks/gate_pools.py --policies sdk-1.12 --rows 4w-64j-0.5s-shallow --shallow-reps 8

Each (policy, row) is run twice: once on a quiet machine and once while a second process keeps
one core busy (a shared CI runner), `reps` reps each, with the model worker of each policy or
the real SDK (`--policies runpod-1.12`). The pools keep the
per-rep figures the gate can rest on, and the machine's load average after every block.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from common import machine

from jobbench.core.fake.target import FakeTarget
from jobbench.core.run.loop import run_plans
from jobbench.core.run.target import Plan
from jobbench.core.scenario.config import RunConfig
from jobbench.core.scenario.project import BUILTIN_SUITES
from jobbench.render.text.plain_progress import PlainProgress
from jobbench.results.behaviour import split_imbalance, worker_cpu_ms_per_job
from jobbench.results.model import Rep
from jobbench.workers.spec import WorkerSpec

POLICIES = {
    "sdk-1.12": WorkerSpec(kind="model", policy="sdk-1.12"),
    "drain": WorkerSpec(kind="model", policy="drain"),
    "take-ahead": WorkerSpec(kind="model", policy="take-ahead", take_ahead=32),
    # The real SDK installed beside jobbench (runpod 1.12.0), its bench handler.
    "runpod-1.12": WorkerSpec(kind="runpod"),
}
DEFAULT_OUT = Path(__file__).resolve().parent / "data" / "gate-pools.json"
BURN = "import time\nwhile True:\n    time.time()\n"  # one busy core, like a neighbour on a runner


def figures(rep: Rep) -> dict[str, Any]:
    e2e = rep.phases.e2e
    return {
        "time_to_p99_s": rep.time_to_p99_s,
        "time_to_p100_s": rep.time_to_p100_s,
        "e2e_mean_s": e2e and e2e.mean,
        "e2e_p50_s": e2e and e2e.p50,
        "e2e_p99_s": e2e and e2e.p99,
        # The workers' own figures the gate's checks compare (results/row_checks.py).
        "worker_cpu_ms_per_job": worker_cpu_ms_per_job(rep),
        "split_imbalance": split_imbalance(rep),
    }


def run_block(policy: str, row: str, reps: int, busy: bool, out: Path) -> list[dict[str, Any]]:
    scenario = next(s for s in BUILTIN_SUITES["seed"].scenarios if s.name == row)
    scenario = replace(scenario, worker=POLICIES[policy])
    config = RunConfig(scenarios=(scenario,), reps=reps, label="pool", out=out, save_events=False)
    burner = subprocess.Popen([sys.executable, "-c", BURN]) if busy else None
    try:
        doc = run_plans([Plan(config, FakeTarget())], PlainProgress(quiet=True))[0]
    finally:
        if burner is not None:
            burner.kill()
            burner.wait()
    load = os.getloadavg()[0]
    return [{**figures(rep), "load1": round(load, 2)} for rep in doc.scenarios[0].reps]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policies", default=",".join(POLICIES))
    parser.add_argument(
        "--rows", default=",".join(s.name for s in BUILTIN_SUITES["seed"].scenarios)
    )
    parser.add_argument("--shallow-reps", type=int, default=60, help="reps per block, shallow row")
    parser.add_argument("--deep-reps", type=int, default=5, help="reps per block, deep rows")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    pools: dict[str, Any] = json.loads(args.out.read_text())["pools"] if args.out.exists() else {}
    info = {"machine": machine(), "command": " ".join(sys.argv), "pools": pools}
    with tempfile.TemporaryDirectory(prefix="jobbench-pools-") as tmp:
        for policy in args.policies.split(","):
            for row in args.rows.split(","):
                reps = args.shallow_reps if "shallow" in row else args.deep_reps
                for condition in ("quiet", "busy"):
                    block = run_block(policy, row, reps, condition == "busy", Path(tmp))
                    pool = pools.setdefault(policy, {}).setdefault(row, {})
                    pool[condition] = pool.get(condition, []) + block
                    p99 = sorted(r["time_to_p99_s"] for r in block)
                    print(f"{policy} {row} {condition}: {len(block)} reps, time to 99 % "
                          f"{p99[0]:.3f}-{p99[-1]:.3f} s", flush=True)  # fmt: skip
                    args.out.parent.mkdir(parents=True, exist_ok=True)
                    args.out.write_text(json.dumps(info, indent=1) + "\n")  # after every block


if __name__ == "__main__":
    main()
