"""The gate's error rates, measured on real reps: resample the pools of benchmarks/gate_pools.py
into thousands of simulated `jobbench gate` calls over the seed suite and count how often the
rule (jobbench/results/decision.py, with --reps auto as jobbench/core/settle.py runs it) is wrong.

    python benchmarks/gate_error_rates.py --calls 2000            # docs/ci.md's figures
    python benchmarks/gate_error_rates.py --calls 200 --policies sdk-1.12

Per policy pool (a seed-suite row's reps, quiet and beside a busy core, drawn together):
- A/A: both sides drawn from the same pool; a false alarm is any row judged a regression, and
  a row left inconclusive is the price of the rule's caution;
- power: B's reps are the pool's times (1 + 2 x threshold); each row should be flagged, and a
  miss is a row that passes;
- +50 % with outliers: B times 1.5, and one rep in ten of either side replaced by a stall
  (its value times 2.5-4); each row should still be flagged.
The old rule (fixed 5 reps, change > threshold and two-sided Mann-Whitney p < 0.05 per row, no
correction across rows) is measured on the same draws for comparison. Intervals: Wilson 95 %.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scipy.stats import mannwhitneyu

from jobbench.core.project import BUILTIN_SUITES
from jobbench.core.settle import DEFAULT_MAX_REPS
from jobbench.measure.stats import robust_spread
from jobbench.results.decision import Rule, decide, look_levels, weigh

POOLS = Path(__file__).resolve().parent / "data" / "gate-pools.json"
FIRST_REPS = 5  # the seed suite's reps: where --reps auto starts
Pool = list[list[float]]  # one row's reps: [quiet, busy]


@dataclass(frozen=True)
class Case:
    name: str
    shift: float  # B = A x (1 + shift)
    outliers: bool  # one rep in ten of either side is a stall


def draw(pool: Sequence[Sequence[float]], rng: random.Random, case: Case, side: str) -> float:
    """One rep: quiet or beside a busy core with even odds (the pools' sizes may differ). A
    jitter of a millionth breaks the ties that drawing from a small pool with replacement makes
    (real reps never tie at the microsecond), far below any row's noise."""
    value = rng.choice(rng.choice(pool)) * (1 + case.shift if side == "B" else 1)
    value *= 1 + rng.uniform(-1e-6, 1e-6)
    if case.outliers and rng.random() < 0.1:
        value *= rng.uniform(2.5, 4.0)
    return value


def simulate_call(
    pools: list[Pool], rng: random.Random, case: Case, rule: Rule, max_reps: int
) -> tuple[list[str], list[int]]:
    """One gate call over the rows: settle each row as jobbench/core/settle.py does, one test (look)
    per pair past the first reps, each at its look_levels. Returns each row's verdict at its
    last look and its reps a side."""
    verdicts, reps = [], []
    for pool in pools:
        a = [draw(pool, rng, case, "A") for _ in range(FIRST_REPS)]
        b = [draw(pool, rng, case, "B") for _ in range(FIRST_REPS)]
        look = 1
        while True:
            levels = look_levels(rule, look, rows=len(pools), costed=0)
            verdict = decide(weigh(a, b, rule, interval=False), rule, levels).verdict
            if verdict != "unsettled" or len(a) >= max_reps:
                break
            a.append(draw(pool, rng, case, "A"))
            b.append(draw(pool, rng, case, "B"))
            look += 1
        verdicts.append(verdict)
        reps.append(len(a))
    return verdicts, reps


def old_rule_call(
    pools: list[list[float]], rng: random.Random, case: Case, rule: Rule
) -> list[bool]:
    """The rule before this one: 5 reps, ratio of medians > threshold and p < 0.05 per row."""
    flagged = []
    for pool in pools:
        a = sorted(draw(pool, rng, case, "A") for _ in range(FIRST_REPS))
        b = sorted(draw(pool, rng, case, "B") for _ in range(FIRST_REPS))
        change = b[2] / a[2] - 1
        p = mannwhitneyu(a, b, alternative="two-sided").pvalue
        flagged.append(change > rule.threshold and p < 0.05)
    return flagged


def wilson(hits: int, n: int) -> str:
    if n == 0:
        return "-"
    z, p = 1.96, hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return f"{p:.1%} [{max(0.0, centre - half):.1%}, {min(1.0, centre + half):.1%}]"


def cases(rule: Rule) -> list[Case]:
    return [
        Case("A/A (nothing changed)", 0.0, False),
        Case(f"+{2 * rule.threshold:.0%} on every row", 2 * rule.threshold, False),
        Case("+50 %, 1 rep in 10 a stall", 0.5, True),
    ]


def study(task: tuple[str, list[Pool], list[Pool], Case, int, int, int]) -> list[str]:
    """One pool and case: `calls` simulated gate calls, new rule and old on the same seed
    (`pools`: each row's gated metric; `p99_pools`: its time to 99 %, for the old rule)."""
    name, pools, p99_pools, case, calls, seed, max_reps = task
    rule = Rule()
    rng = random.Random(seed)
    per_row, reps, old_row = [0] * len(pools), [0] * len(pools), [0] * len(pools)
    passed = [0] * len(pools)
    any_row = old_any = any_open = 0
    for _ in range(calls):
        verdicts, used = simulate_call(pools, rng, case, rule, max_reps)
        flags = [v == "regression" for v in verdicts]
        any_row += any(flags)
        any_open += "unsettled" in verdicts
        for i, (flag, verdict, n) in enumerate(zip(flags, verdicts, used)):
            per_row[i] += flag
            passed[i] += verdict == "pass"
            reps[i] += n
        old = old_rule_call(p99_pools, rng, case, rule)
        old_any += any(old)
        for i, flag in enumerate(old):
            old_row[i] += flag
    weakest = min(range(len(pools)), key=lambda i: per_row[i])
    return [
        name,
        case.name,
        wilson(any_row, calls),
        wilson(per_row[weakest], calls) if case.shift else "-",
        wilson(max(passed), calls) if case.shift else "-",
        wilson(any_open, calls),
        " / ".join(f"{r / calls:.1f}" for r in reps),
        wilson(old_any, calls),
        wilson(min(old_row), calls) if case.shift else "-",
    ]


def load_pools(path: Path, policy: str, metric_for: dict[str, str]) -> list[Pool]:
    data: dict[str, Any] = json.loads(path.read_text())["pools"][policy]
    rows = [s.name for s in BUILTIN_SUITES["seed"].scenarios]
    return [
        [[rep[metric_for[row]] for rep in data[row][cond]] for cond in ("quiet", "busy")]
        for row in rows
    ]


def spreads(path: Path, policies: list[str]) -> None:
    """The rep-to-rep noise of each candidate metric per row (robust spread, all reps of the
    pool): the seed suite gates each row on the steadiest figure that a scheduling change moves."""
    data = json.loads(path.read_text())["pools"]
    names = ["time_to_p99_s", "time_to_p100_s", "e2e_mean_s", "e2e_p50_s", "e2e_p99_s"]
    print("| pool | row | " + " | ".join(names) + " |\n|" + "---|" * (len(names) + 2))
    for policy in policies:
        for row, pool in data[policy].items():
            reps = pool["quiet"] + pool["busy"]
            cells = [f"{robust_spread([r[n] for r in reps]):.2%}" for n in names]
            print(f"| {policy} | {row} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pools", type=Path, default=POOLS)
    parser.add_argument("--policies", default="sdk-1.12,drain,take-ahead")
    parser.add_argument("--calls", type=int, default=2000, help="simulated gate calls per case")
    parser.add_argument("--max-reps", type=int, default=DEFAULT_MAX_REPS)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--spreads", action="store_true", help="only the noise of each metric")
    args = parser.parse_args()
    if args.spreads:
        spreads(args.pools, args.policies.split(","))
        return
    suite = BUILTIN_SUITES["seed"]
    metric_for = {s.name: s.metric or "time_to_p99_s" for s in suite.scenarios}
    print("gated metrics:", ", ".join(f"{k} {v}" for k, v in metric_for.items()))
    header = ["pool", "case", "any row flagged", "weakest row flagged", "most passed row (miss)",
              "any row inconclusive", "mean reps a side per row", "old rule: any row",
              "old rule: weakest row"]  # fmt: skip
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    tasks = [
        (
            policy,
            load_pools(args.pools, policy, metric_for),
            load_pools(args.pools, policy, dict.fromkeys(metric_for, "time_to_p99_s")),
            case,
            args.calls,
            args.seed,
            args.max_reps,
        )
        for policy in args.policies.split(",")
        for case in cases(Rule())
    ]
    with ProcessPoolExecutor(max_workers=os.cpu_count()) as pool:  # one task per pool and case
        for line in pool.map(study, tasks):
            print("| " + " | ".join(line) + " |", flush=True)


if __name__ == "__main__":
    main()
