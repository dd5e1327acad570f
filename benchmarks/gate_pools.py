"""Collect pools of real reps of a suite (the gate's default suite unless told), quiet and beside
a busy core, for the gate's error-rate study (benchmarks/gate_error_rates.py resamples them;
docs/ci.md, "The error rates, measured", has the figures).

    python benchmarks/gate_pools.py --policies runpod-1.12 --reps 30 --busy-reps 10   # ~30 min
    python benchmarks/gate_pools.py --suite seed --policies sdk-1.12,drain --reps 20

Each policy's rows run as `jobbench gate` runs them: every row in the same run, in lanes
(`--lanes`, the gate's `auto` unless told), with the model worker of each policy or the real
SDK (`--policies runpod-1.12`), once on a quiet machine and once while a second process keeps
one core busy (a shared CI runner; the harness then turns lanes off, as it would in a gate).
Every rep keeps what the gate rests on: each gated metric's figure, the workers' CPU per job and
split, how its jobs ended, the behaviour the watchdog named and whether the rep was set aside
as a disturbed measurement. The file records the machine and the command.
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

from jobbench.core.real_workers.fake_target import FakeTarget
from jobbench.core.run.lanes import parse_lanes
from jobbench.core.run.loop import run_plans
from jobbench.core.run.target_seam import Plan
from jobbench.core.scenario.config import RunConfig
from jobbench.core.scenario.project import BUILTIN_SUITES, DEFAULT_SUITE
from jobbench.render.text.plain_progress import PlainProgress
from jobbench.results.model import Rep, ScenarioResult
from jobbench.results.rep_metrics import METRICS
from jobbench.verdict.behaviour import rep_behaviour
from jobbench.verdict.comparison import rep_flags
from jobbench.verdict.correctness import rep_bad
from jobbench.verdict.row_checks import FIGURE_RULES
from jobbench.workers.spec import WorkerSpec

POLICIES = {
    "sdk-1.12": WorkerSpec(kind="model", policy="sdk-1.12"),
    "drain": WorkerSpec(kind="model", policy="drain"),
    "take-ahead": WorkerSpec(kind="model", policy="take-ahead", take_ahead=32),
    # The real SDK installed beside jobbench (runpod 1.12.0), its bench handler.
    "runpod-1.12": WorkerSpec(kind="runpod"),
}
DATA = Path(__file__).resolve().parent / "data"
DEFAULT_OUT = DATA / "gate-pools-runpod.json"  # the model policies' are gate-pools.json
# The gated metrics a suite's rows may name (core/scenario/project.py): each rep keeps them all.
GATED = ("time_to_p99_s", "time_to_p100_s", "e2e_mean_s", "e2e_p50_s", "e2e_p99_s",
         "steady_e2e_p99_s")  # fmt: skip
BURN = "import time\nwhile True:\n    time.time()\n"  # one busy core, like a neighbour on a runner


def figures(rep: Rep, flag: str | None) -> dict[str, Any]:
    return {
        **{name: METRICS[name].read(rep) for name in GATED},
        # The workers' own figures the gate's checks compare (verdict/row_checks.py): their
        # CPU per job, the split and their requests per job (pools made before have no
        # requests_per_job; gate_error_rates.py then leaves that check out).
        **{rule.metric: METRICS[rule.metric].read(rep) for rule in FIGURE_RULES},
        # How its jobs ended and what its workers did (verdict/correctness.py, behaviour.py).
        "jobs": rep.jobs.submitted,
        "bad": rep_bad(rep.jobs),
        "behaviour": sorted(rep_behaviour(rep)),
        "flag": flag,  # why the rep is set aside as a disturbed measurement, if it is
    }


def entry_figures(entry: ScenarioResult) -> list[dict[str, Any]]:
    return [figures(rep, flag) for rep, flag in zip(entry.reps, rep_flags(entry))]


def run_block(
    policy: str, suite: str, rows: list[str], reps: int, busy: bool, lanes: int | str, out: Path
) -> dict[str, list[dict[str, Any]]]:
    """One run of the rows, `reps` reps each: every row's reps, and the load after the block."""
    scenarios = tuple(
        replace(s, worker=POLICIES[policy])
        for s in BUILTIN_SUITES[suite].scenarios
        if s.name in rows
    )
    config = RunConfig(scenarios=scenarios, reps=reps, label="pool", out=out, save_events=False)
    burner = subprocess.Popen([sys.executable, "-c", BURN]) if busy else None
    try:
        (doc,) = run_plans([Plan(config, FakeTarget())], PlainProgress(quiet=True), lanes=lanes)
    finally:
        if burner is not None:
            burner.kill()
            burner.wait()
    load = round(os.getloadavg()[0], 2)
    return {e.name: [{**f, "load1": load} for f in entry_figures(e)] for e in doc.scenarios}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", default=DEFAULT_SUITE, choices=sorted(BUILTIN_SUITES))
    parser.add_argument("--policies", default="runpod-1.12")
    parser.add_argument("--rows", default="", help="comma-separated rows (default: the suite's)")
    parser.add_argument("--reps", type=int, default=30, help="reps a row, quiet")
    parser.add_argument("--busy-reps", type=int, default=10, help="reps a row, beside a busy core")
    parser.add_argument("--lanes", type=parse_lanes, default="auto")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    rows = (
        args.rows.split(",")
        if args.rows
        else [s.name for s in BUILTIN_SUITES[args.suite].scenarios]
    )
    pools: dict[str, Any] = json.loads(args.out.read_text())["pools"] if args.out.exists() else {}
    # The command as a reader runs it again from the repository: no machine's own paths.
    args_text = " ".join(os.path.relpath(a) if os.path.isabs(a) else a for a in sys.argv[1:])
    command = f"python benchmarks/gate_pools.py {args_text}".rstrip()
    info = {"machine": machine(), "command": command, "suite": args.suite, "pools": pools}
    with tempfile.TemporaryDirectory(prefix="jobbench-pools-") as tmp:
        for policy in args.policies.split(","):
            for condition, reps in (("quiet", args.reps), ("busy", args.busy_reps)):
                if reps == 0:
                    continue
                block = run_block(policy, args.suite, rows, reps, condition == "busy", args.lanes,
                                  Path(tmp))  # fmt: skip
                for row, got in block.items():
                    pool = pools.setdefault(policy, {}).setdefault(row, {})
                    pool[condition] = pool.get(condition, []) + got
                    bad = sum(sum(r["bad"].values()) for r in got)
                    aside = sum(r["flag"] is not None for r in got)
                    print(f"{policy} {row} {condition}: {len(got)} reps, {bad} jobs ended badly, "
                          f"{aside} set aside", flush=True)  # fmt: skip
                args.out.parent.mkdir(parents=True, exist_ok=True)
                args.out.write_text(json.dumps(info, indent=1) + "\n")  # after every block


if __name__ == "__main__":
    main()
