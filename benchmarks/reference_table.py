"""Reproduce the reference table (docs/latency-model.md) side by side: model drain (main), model
take-ahead 32, and the SDK 1.12.0 calibration (model `sdk-1.12` against the real `runpod`
worker), interleaved rep by rep.

    python benchmarks/reference_table.py --reps 5            # full scale, ~20 min
    python benchmarks/reference_table.py --reps 3 --scale 0.1 --rows 1,3

Prints a Markdown table for docs/performance.md; results go to --out (default a temp folder).
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from fake_queue.api import Distribution, LatencyModel
from jobbench.core.real_workers.fake_target import FakeTarget
from jobbench.core.run.loop import run_plans
from jobbench.core.run.target_seam import Plan
from jobbench.core.scenario.config import RunConfig, Scenario
from jobbench.measure.analytic import expected_time_s
from jobbench.render.text.plain_progress import PlainProgress
from jobbench.results.model import Result
from jobbench.workers.spec import WorkerSpec

ROWS = [  # name, workers, burst, job seconds (docs/latency-model.md)
    ("1 worker, 512 burst, 0.5 s jobs", 1, 512, 0.5),
    ("1 worker, 256 burst, 2.0 s jobs", 1, 256, 2.0),
    ("4 workers, 1024 burst, 0.5 s jobs", 4, 1024, 0.5),
    ("4 workers, 64 burst (shallow), 0.5 s jobs", 4, 64, 0.5),
]
VARIANTS = {
    "drain": WorkerSpec(kind="model", policy="drain"),
    "take-ahead": WorkerSpec(kind="model", policy="take-ahead", take_ahead=32),
    "sdk-1.12": WorkerSpec(kind="model", policy="sdk-1.12"),
    "runpod": WorkerSpec(kind="runpod"),
}


def scenarios(rows: list[int], scale: float, spec: WorkerSpec) -> tuple[Scenario, ...]:
    latency = LatencyModel(
        take=Distribution("fixed", 0.5 * scale), wake=Distribution("fixed", 0.05 * scale)
    )
    return tuple(
        Scenario(
            name=f"row{i}",
            workers=w,
            slots=32,
            burst=b,
            job_seconds=j * scale,
            worker=spec,
            latency=latency,
        )
        for i, (_, w, b, j) in enumerate(ROWS, 1)
        if i in rows
    )


def median_p99(doc: Result, index: int) -> float:
    p99 = doc.scenarios[index].summary["time_to_p99_s"]
    assert p99 is not None, "every rep of a reference row finishes"
    return float(p99.median)


def split(doc: Result, index: int) -> str:
    per_worker = doc.scenarios[index].reps[-1].split.jobs_per_worker
    return "/".join(str(n) for n in per_worker.values())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every latency")
    parser.add_argument("--rows", default="1,2,3,4", help="which rows of the table")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="jb-ref-")))
    args = parser.parse_args()
    rows = [int(r) for r in args.rows.split(",")]
    names = args.variants.split(",")
    base = RunConfig(scenarios=(), reps=args.reps, out=args.out, save_events=False)
    plans = [
        Plan(
            replace(base, label=f"ref-{n}", scenarios=scenarios(rows, args.scale, VARIANTS[n])),
            FakeTarget(),
        )
        for n in names
    ]
    docs = dict(zip(names, run_plans(plans, PlainProgress())))
    print(
        f"\nmachine: {os.cpu_count()} cpus, {platform.processor() or platform.machine()}, "
        f"python {platform.python_version()}; reps {args.reps}, scale {args.scale}; "
        f"results in {args.out}\n"
    )
    print_table(rows, names, docs, args.scale)


def print_table(rows: list[int], names: list[str], docs: dict[str, Any], scale: float) -> None:
    print("| scenario | variant | time to 99 % (median) | model | measured - model | split |")
    print("|---|---|---|---|---|---|")
    for index, row in enumerate(rows):
        title, workers, burst, job = ROWS[row - 1]
        for name in names:
            policy = "sdk-1.12" if name == "runpod" else name
            model = expected_time_s(
                policy,
                burst=burst,
                workers=workers,
                slots=32,
                job_seconds=job * scale,
                take_s=0.5 * scale,
                wake_s=0.05 * scale,
            )
            measured = median_p99(docs[name], index)
            print(
                f"| {title} | {name} | {measured:.3f} s | {model:.3f} s | "
                f"{(measured - model) * 1000:+.0f} ms | {split(docs[name], index)} |"
            )
    if {"drain", "take-ahead"} <= set(names):
        print("\n| scenario | main (drain) | take_ahead=32 | change |\n|---|---|---|---|")
        for index, row in enumerate(rows):
            a, b = median_p99(docs["drain"], index), median_p99(docs["take-ahead"], index)
            print(f"| {ROWS[row - 1][0]} | {a:.2f} s | {b:.2f} s | {(b / a - 1):+.0%} |")
    if {"sdk-1.12", "runpod"} <= set(names):
        print("\n| scenario | model sdk-1.12 | real SDK 1.12.0 | difference |\n|---|---|---|---|")
        for index, row in enumerate(rows):
            a, b = median_p99(docs["sdk-1.12"], index), median_p99(docs["runpod"], index)
            print(f"| {ROWS[row - 1][0]} | {a:.3f} s | {b:.3f} s | {(b / a - 1):+.1%} |")


if __name__ == "__main__":
    main()
