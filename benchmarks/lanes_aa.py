"""Do lanes disturb each other? An A/A of lanes: the default gate suite with the real runpod SDK
(the one jobbench installs), each row run alone (one row at a time) and in lanes (every row at
once), in alternating blocks so a drifting machine spreads over both, and per row the gated
figure's shift in lanes against alone (Hodges-Lehmann, its 95 % interval, every rep counted,
the gate's own statistics) and each side's spread (docs/performance.md, "Verdict time"):

    python benchmarks/lanes_aa.py --blocks 2 --reps 5     # about 20 minutes on 2 cores

A lane effect shows as a shift whose interval excludes 0 beyond the rows' noise, or as a spread
that grows in lanes. The spread is tested, not eyed: ten reps' MAD of a row whose figure has two
modes (the SDK's pickup tick) moves by a factor of three between two runs of the same thing, so
each row gets the Fligner-Killeen test of equal spread (median-centred ranks, robust to such
shapes; Bonferroni's correction over the rows) and the lanes-to-alone ratio of the spreads with
a 95 % bootstrap interval. A quiet machine: nothing else may run beside it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
from common import machine
from scipy.stats import bootstrap, fligner

from jobbench.core.real_workers.fake_target import FakeTarget
from jobbench.core.run.loop import run_plans
from jobbench.core.run.target_seam import Plan
from jobbench.core.scenario.config import RunConfig
from jobbench.core.scenario.project import BUILTIN_SUITES, DEFAULT_SUITE
from jobbench.render.text.plain_progress import PlainProgress
from jobbench.results.compare import gated_metric, rep_values
from jobbench.results.decision import Rule, weigh
from jobbench.workers.spec import WorkerSpec

EVERY_REP = Rule(outlier_z=float("inf"))  # no rep set aside: the lanes' effect whole


def run_block(lanes: int | str, reps: int, out: Path, label: str) -> dict[str, list[float]]:
    """The suite's rows, `reps` reps each, with the real SDK: each row's gated figures."""
    suite = BUILTIN_SUITES[DEFAULT_SUITE]
    scenarios = tuple(replace(s, worker=WorkerSpec(kind="runpod")) for s in suite.scenarios)
    plan = Plan(RunConfig(scenarios=scenarios, reps=reps, label=label, out=out), FakeTarget())
    (doc,) = run_plans([plan], PlainProgress(quiet=True), lanes=lanes)
    figures = {}
    for entry in doc.scenarios:
        metric = gated_metric(suite.metric_for(entry.name), entry)
        figures[entry.name] = [v for v in rep_values(entry, metric, "A", True) if v is not None]
    return figures


def spread(values: Sequence[float]) -> float:
    """The robust spread: median absolute deviation over the median."""
    mid = statistics.median(values)
    return statistics.median(abs(v - mid) for v in values) / mid


def spread_ratio(alone: list[float], lanes: list[float]) -> str:
    """Lanes' spread over alone's, with its 95 % percentile-bootstrap interval."""

    def ratio(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        def mad(x: np.ndarray) -> np.ndarray:
            mid = np.median(x, axis=axis, keepdims=True)
            return np.median(np.abs(x - mid), axis=axis) / np.squeeze(mid, axis=axis)

        return mad(b) / np.maximum(mad(a), 1e-12)

    point = spread(lanes) / max(spread(alone), 1e-12)
    got = bootstrap((np.array(alone), np.array(lanes)), ratio, n_resamples=4000,
                    method="percentile", random_state=1)  # fmt: skip
    low, high = got.confidence_interval
    return f"{point:.2f} [{low:.2f}, {high:.2f}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=2, help="blocks of each kind")
    parser.add_argument("--reps", type=int, default=5, help="reps a row in each block")
    parser.add_argument("--save", type=Path, help="write every rep's figure here (JSON)")
    args = parser.parse_args()
    for key, value in machine().items():
        print(f"{key}: {value}")
    out = Path(tempfile.mkdtemp(prefix="lanes-aa-"))
    alone: dict[str, list[float]] = {}
    lanes: dict[str, list[float]] = {}
    walls = {"alone": 0.0, "lanes": 0.0}
    for block in range(args.blocks):
        for kind, asked, into in (("lanes", "auto", lanes), ("alone", 1, alone)):
            began = time.monotonic()
            got = run_block(asked, args.reps, out, f"{kind}-{block}")
            walls[kind] += time.monotonic() - began
            for name, values in got.items():
                into.setdefault(name, []).extend(values)
            print(f"block {block + 1} {kind}: {time.monotonic() - began:.0f} s", flush=True)
    print(f"\nwall: alone {walls['alone']:.0f} s, lanes {walls['lanes']:.0f} s "
          f"({walls['alone'] / walls['lanes']:.2f}x)")  # fmt: skip
    if args.save is not None:
        args.save.write_text(json.dumps({"alone": alone, "lanes": lanes}, indent=1) + "\n")
    # Bonferroni over the rows: a row's equal-spread test must hold at 0.05 / rows.
    raw = [float(fligner(alone[name], lanes[name]).pvalue) for name in alone]
    adjusted = [min(1.0, p * len(raw)) for p in raw]
    print("\n| row | reps a kind | alone median | lanes median | lanes vs alone [95 %] "
          "| spread alone | spread lanes | lanes/alone spread [95 %] | equal spread p (x rows) |"
          "\n|---|---|---|---|---|---|---|---|---|")  # fmt: skip
    for (name, base), p_raw, p_rows in zip(alone.items(), raw, adjusted):
        other = lanes[name]
        evidence = weigh(base, other, EVERY_REP)
        shift = "too few reps"
        if evidence.change is not None and evidence.ci is not None:
            low, high = evidence.ci
            shift = f"{evidence.change:+.2%} [{low:+.2%}, {high:+.2%}]"
        medians = f"{statistics.median(base):.4f} | {statistics.median(other):.4f}"
        spreads = f"{spread(base):.2%} | {spread(other):.2%} | {spread_ratio(base, other)}"
        print(f"| {name} | {len(base)} | {medians} | {shift} | {spreads} "
              f"| {p_raw:.2g} ({p_rows:.2g}) |")  # fmt: skip
    print(f"\nresults in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
