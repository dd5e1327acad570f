"""Do lanes disturb each other? An A/A of lanes: the default gate suite with the real runpod SDK
(the one jobbench installs), each row run alone (one row at a time) and in lanes (every row at
once), in alternating blocks so a drifting machine spreads over both, and per row the gated
figure's shift in lanes against alone (Hodges-Lehmann, its 95 % interval, every rep counted,
the gate's own statistics) and each side's spread (docs/performance.md, "Verdict time"):

    python benchmarks/lanes_aa.py --blocks 2 --reps 5     # about 20 minutes on 2 cores

A lane effect shows as a shift whose interval excludes 0 beyond the rows' noise, or a spread
that grows in lanes. A quiet machine: nothing else may run beside it.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from common import machine

from jobbench.core.fake.target import FakeTarget
from jobbench.core.run.loop import run_plans
from jobbench.core.run.target import Plan
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


def spread(values: list[float]) -> str:
    mid = statistics.median(values)
    mad = statistics.median(abs(v - mid) for v in values)
    return f"{mad / mid:.2%}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=2, help="blocks of each kind")
    parser.add_argument("--reps", type=int, default=5, help="reps a row in each block")
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
    print("\n| row | reps a kind | alone median | lanes median | lanes vs alone [95 %] "
          "| spread alone | spread lanes |\n|---|---|---|---|---|---|---|")  # fmt: skip
    for name, base in alone.items():
        other = lanes[name]
        evidence = weigh(base, other, EVERY_REP)
        shift = "too few reps"
        if evidence.change is not None and evidence.ci is not None:
            low, high = evidence.ci
            shift = f"{evidence.change:+.2%} [{low:+.2%}, {high:+.2%}]"
        medians = f"{statistics.median(base):.4f} | {statistics.median(other):.4f}"
        print(f"| {name} | {len(base)} | {medians} | {shift} | {spread(base)} | {spread(other)} |")
    print(f"\nresults in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
