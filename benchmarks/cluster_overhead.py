"""What placing the workers on a Ray cluster costs a job: the seed rows run with model
workers here and on a two-node Ray cluster on this machine (two raylets on 127.0.0.1, started by
this script in a temp folder of its own), rep by rep interleaved (local, cluster, local, ...), the
same seed each; per row the median of the row's metric on each side and the cluster's difference
(target: within 1 %). Then, with --fleet N, one burst on the largest fleet the two nodes hold
(--worker-cpus below 1 packs more workers than logical CPUs), with its harness figures.

    python benchmarks/cluster_overhead.py --reps 3
    python benchmarks/cluster_overhead.py --reps 1 --rows 4w-64j-0.5s-shallow     # a smoke
    python benchmarks/cluster_overhead.py --reps 0 --fleet 24 --worker-cpus 0.25  # the fleet

docs/performance.md, "Workers on a Ray cluster", records a run. Every process it started is
stopped at the end, the cluster's included (by its own pids; never `ray stop`, which would stop
any other Ray on the machine).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from common import ROOT, machine

from jobbench.core.scenario.project import SEED_ROWS
from jobbench.measure.metrics import OUTLIER_FIGURES

GCS_PORT = 6420
TARGET = 0.01  # a Ray-placed worker within 1 % of a local one
FAST = ["--worker", "model", "--seed", "7", "--quiet", "--json", "--no-events"]


@contextlib.contextmanager
def two_nodes(cpus: int) -> Iterator[dict[str, str]]:
    """A head and a second node on 127.0.0.1, `cpus` logical CPUs each; the environment a run
    needs to reach them."""
    from ray.cluster_utils import Cluster

    root = Path(tempfile.mkdtemp(prefix="jbc-bench-", dir="/tmp"))
    env = {
        "RAY_TMPDIR": str(root),
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",  # 127.0.0.1 stays 127.0.0.1
        "PYTHONPATH": str(ROOT),
    }
    before = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    cluster = Cluster(
        initialize_head=True,
        connect=False,
        head_node_args={
            "num_cpus": cpus,
            "node_ip_address": "127.0.0.1",
            "gcs_server_port": GCS_PORT,
            "temp_dir": str(root / "ray"),
            "include_dashboard": False,
        },
    )
    try:
        cluster.add_node(num_cpus=cpus, node_ip_address="127.0.0.1")
        cluster.wait_for_nodes()
        yield env
    finally:
        cluster.shutdown()
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(root, ignore_errors=True)


def run_once(args: list[str], env: dict[str, str], where: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "jobbench", "run", *args, "-o", str(where)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=900,
    )
    if done.returncode != 0:
        raise SystemExit(f"jobbench run {' '.join(args)}: exit {done.returncode}\n{done.stderr}")
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def row_args(workers: int, burst: int, job_s: float) -> list[str]:
    return ["-w", str(workers), "--burst", str(burst), "--job-seconds", str(job_s), "--reps", "1"]


def compare_rows(rows: list[tuple[str, int, int, float, str]], reps: int, env: dict[str, str],
                 where: Path) -> list[dict[str, Any]]:  # fmt: skip
    out = []
    for name, workers, burst, job_s, metric in rows:
        sides: dict[str, list[float]] = {"local": [], "cluster": []}
        for rep in range(reps):
            for side in sides:
                extra = ["--cluster", f"127.0.0.1:{GCS_PORT}"] if side == "cluster" else []
                doc = run_once([*row_args(workers, burst, job_s), *FAST, *extra], env, where)
                value: Any = doc["scenarios"][0]["reps"][0]
                for key in OUTLIER_FIGURES[metric]:  # where the row's metric is in a rep
                    value = value[key]
                sides[side].append(float(value))
                print(f"  {name} rep {rep + 1} {side}: {metric} {value:.4f}", flush=True)
        local, cluster = (statistics.median(v) for v in sides.values())
        out.append({
            "row": name, "metric": metric, "local": local, "cluster": cluster,
            "difference": cluster / local - 1.0, "reps": reps,
        })  # fmt: skip
    return out


def largest_fleet(fleet: int, cpus: float, env: dict[str, str], where: Path) -> dict[str, Any]:
    args = [
        "-w", str(fleet), "-s", "8", "--burst", str(fleet * 64), "--job-seconds", "0.5",
        "--reps", "1", "--cluster", f"127.0.0.1:{GCS_PORT}", "--worker-cpus", str(cpus), *FAST,
    ]  # fmt: skip
    doc = run_once(args, env, where)
    rep = doc["scenarios"][0]["reps"][0]
    return {
        "command": "jobbench run " + " ".join(args),
        "nodes": [
            (n["id"][:12], len(n["workers"])) for n in doc["environment"]["cluster"]["nodes"]
        ],
        "jobs": rep["jobs"],
        "time_to_p99_s": rep["time_to_p99_s"],
        "efficiency": rep.get("efficiency"),
        "harness": rep.get("harness"),
        "anomalies": [a["kind"] for a in rep.get("anomalies", [])],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3, help="reps a side per row (0: none)")
    parser.add_argument("--rows", nargs="*", help="seed rows by name (default: every one)")
    parser.add_argument("--node-cpus", type=int, default=4, help="logical CPUs per node")
    parser.add_argument("--fleet", type=int, default=0, help="also one burst on N workers")
    parser.add_argument("--worker-cpus", type=float, default=0.25, help="the fleet's")
    opts = parser.parse_args()
    rows = [r for r in SEED_ROWS if not opts.rows or r[0] in opts.rows]
    print(json.dumps(machine(), indent=1), flush=True)
    with two_nodes(opts.node_cpus) as env, tempfile.TemporaryDirectory() as where:
        table = compare_rows(rows, opts.reps, env, Path(where)) if opts.reps else []
        fleet = (
            largest_fleet(opts.fleet, opts.worker_cpus, env, Path(where)) if opts.fleet else None
        )
    print("\n| row | metric | local (median) | cluster (median) | cluster - local |")
    print("|---|---|---|---|---|")
    for r in table:
        print(
            f"| {r['row']} | {r['metric']} | {r['local']:.4f} | {r['cluster']:.4f} | "
            f"{r['difference']:+.2%} |"
        )
    if fleet is not None:
        print("\nlargest fleet:", json.dumps(fleet, indent=1))
    within = all(abs(r["difference"]) <= TARGET for r in table)
    print(f"\nwithin {TARGET:.0%} on every row: {within}")
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
