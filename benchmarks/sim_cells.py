"""Simulator cost per sweep-sized cell: 12 cells of 1,024 jobs (1, 4 and 16 workers, 8 and 32
slots, drain and take-ahead 32, the reference latencies) simulated in this process, REPS
times over; prints the wall milliseconds a cell. For A/B runs of two checkouts side by side:

    .venv/bin/python benchmarks/sim_cells.py --reps 2
    .venv/bin/python benchmarks/sim_cells.py --reps 2 --root /path/to/other/checkout
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3, help="passes over the 12 cells")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to import")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.root))
    from fake_queue.api import Distribution, LatencyModel
    from jobbench.core.scenario.config import Scenario
    from jobbench.core.scenario.worker import worker_spec
    from jobbench.core.sim.engine import simulate_rep

    latency = LatencyModel(
        take=Distribution("fixed", 0.5),
        wake=Distribution("fixed", 0.05),
        hold=Distribution("fixed", 20.0),
        done=Distribution("fixed", 0.0),
    )
    cells = [
        Scenario(
            name="cell",
            workers=workers,
            slots=slots,
            burst=1024,
            job_seconds=0.5,
            worker=worker_spec("model", "take-ahead" if k else "drain", k, None, None),
            latency=latency,
        )
        for workers in (1, 4, 16)
        for slots in (8, 32)
        for k in (0, 32)
    ]
    simulate_rep(cells[0], seed=1)  # imports and first-call costs out
    began = time.perf_counter()
    for _ in range(args.reps):
        for cell in cells:
            simulate_rep(cell, seed=1)  # events kept, as a sweep's cells keep them
    per_cell_ms = (time.perf_counter() - began) / (args.reps * len(cells)) * 1000
    print(f"{args.root}: {args.reps * len(cells)} cells, {per_cell_ms:.1f} ms a cell")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
