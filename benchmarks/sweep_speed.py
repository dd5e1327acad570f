"""Sweep speed (target: "thousands of cells in seconds"): the wall time of the 2,000-cell
`jobbench sweep` of docs/performance.md at each burst, run as a user runs it (a process of its
own, the pool of one process per CPU), checked against a target and, with --root, alternated
with another checkout whose document must be the same, byte for byte.

    .venv/bin/python benchmarks/sweep_speed.py                         # bursts 64,256,1024
    .venv/bin/python benchmarks/sweep_speed.py --bursts 1024 --runs 3 --root /path/to/other

Target: the 2,000 cells of 1,024-job bursts (the quick start's, about 2 million simulated jobs)
in under --target-s seconds of wall time, by the median of --runs (default 15 s: seconds, not
the half minute and more the simulator took before; docs/performance.md has the figures).
Exit 1 when the target is missed or two checkouts' documents differ.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, print_machine, table

GRID = [
    "--workers", "1,2,4,8,16", "--slots", "8,16,32,64", "--take-ahead", "0,8,32,64,128",
    "--job-seconds", "0.1,0.5,1,2", "--take-latency", "0.05,0.1,0.2,0.5,1",
]  # fmt: skip  # 5 x 4 x 5 x 4 x 5 = 2,000 cells, no --policy: each K its own, none skipped
CELLS = 2_000
TARGET_BURST = 1024


def sweep_once(root: Path, burst: int, out: Path) -> float:
    """One `jobbench sweep` of the grid from checkout `root`: its wall seconds."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "jobbench", "sweep", *GRID, "--burst", str(burst), "-q",
         "-o", str(out)],
        cwd=root, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    took = time.perf_counter() - began
    if done.returncode != 0 or done.stderr.strip():
        raise SystemExit(f"sweep from {root} failed ({done.returncode}): {done.stderr.strip()}")
    return took


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bursts", default="64,256,1024", help="comma-separated bursts")
    p.add_argument("--runs", type=int, default=1, help="runs of each (alternated with --root)")
    p.add_argument("--root", type=Path, help="another checkout to alternate with")
    p.add_argument("--target-s", type=float, default=15.0, help="for the 1,024-job sweep")
    args = p.parse_args(argv)
    print_machine()
    roots = [ROOT, *([args.root.resolve()] if args.root else [])]
    rows, ok = [], True
    with tempfile.TemporaryDirectory(prefix="jb-sweep-") as tmp:
        for burst in (int(b) for b in args.bursts.split(",")):
            walls: dict[Path, list[float]] = {root: [] for root in roots}
            for run in range(args.runs):
                for i, root in enumerate(roots):
                    out = Path(tmp) / f"{burst}-{run}-{i}"
                    walls[root].append(sweep_once(root, burst, out))
            docs = [Path(tmp) / f"{burst}-0-{i}" / "sweep.sweep.json" for i in range(len(roots))]
            same = all(filecmp.cmp(docs[0], doc, shallow=False) for doc in docs[1:])
            ok &= same
            for root, times in walls.items():
                median = statistics.median(times)
                met = (
                    ""
                    if burst != TARGET_BURST or root != ROOT
                    else ("met" if median < args.target_s else "MISSED")
                )
                ok &= met != "MISSED"
                rows.append([
                    burst, root.name, ", ".join(f"{t:.2f}" for t in times), f"{median:.2f}",
                    f"{CELLS / median:,.0f}", f"{median / CELLS * 1000:.1f}", met,
                    "" if len(roots) == 1 else ("same" if same else "DIFFERENT"),
                ])  # fmt: skip
    print(f"\n{CELLS:,} cells a sweep; target: {TARGET_BURST}-job cells under {args.target_s:g} s")
    print(table(
        ["burst", "checkout", "wall s", "median s", "cells/s", "wall ms a cell", "target",
         "document"], rows,
    ))  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
