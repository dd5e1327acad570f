"""The gate's error rates, measured on real reps: resample the pools of benchmarks/gate_pools.py
into thousands of simulated `jobbench gate` calls over a suite (the gate's default unless told)
and count how often the rule (jobbench/verdict/decision.py, with --reps auto as
jobbench/core/run/settle.py runs it, and every check of jobbench/verdict/row_checks.py) is wrong.

    python benchmarks/gate_error_rates.py --calls 2000     # docs/ci.md's figures: the real SDK
    python benchmarks/gate_error_rates.py --suite seed --pools benchmarks/data/gate-pools.json \
        --policies sdk-1.12,drain,take-ahead --calls 200   # the model policies' seed-suite pools

Per policy pool (a row's reps, quiet and beside a busy core, drawn together):
- A/A: both sides drawn from the same pool; a false alarm is any row judged a regression, and
  a row left inconclusive is the price of the rule's caution;
- power: B's reps are the pool's times (1 + 2 x threshold); each row should be flagged, and a
  miss is a row that passes;
- A/A with stalls: as A/A, and one rep in ten of either side is a stall (its value times
  2.5-4, the watchdog names it): the behaviour check must not call the candidate's share more;
- +50 % with outliers: B times 1.5, and one rep in ten of either side a stall; each row should
  still be flagged.
Each test is the row's whole verdict at its look: the checks of jobbench/verdict/row_checks.py
before the speed, each on what the pool's rep recorded (how its jobs ended, the behaviour its
workers showed, their CPU per job and split), a planted stall counted with them; a rep the
harness set aside as disturbed counts for the checks and not for the speed, as in a gate. "by a
check" counts the calls a check flagged.
The old rule (fixed 5 reps, change > threshold and two-sided Mann-Whitney p < 0.05 per row, no
correction across rows) is measured on the same draws for comparison. Intervals: Wilson 95 %.
"""

from __future__ import annotations

import argparse
import json
import os
import random
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import wilson
from scipy.stats import mannwhitneyu

from jobbench.core.run.settle import DEFAULT_MAX_REPS
from jobbench.core.scenario.project import BUILTIN_SUITES, DEFAULT_SUITE
from jobbench.measure.stats import robust_spread
from jobbench.results.model import JobOutcomes
from jobbench.verdict.correctness import BAD_OUTCOMES
from jobbench.verdict.decision import (
    Levels,
    Rule,
    decide,
    is_look_point,
    look_levels,
    look_number,
    weigh,
)
from jobbench.verdict.row_checks import (
    FIGURE_RULES,
    Finding,
    checked_verdict,
    find,
    judge_figure,
    worst,
)

POOLS = Path(__file__).resolve().parent / "data" / "gate-pools-runpod.json"
FIRST_REPS = 5  # the suites' reps: where --reps auto starts
FIGURES = {figure.metric: figure for figure in FIGURE_RULES}  # the checks' figures per rep
STALL = "stall"  # the behaviour kind a planted stall is (verdict/behaviour.py)
Pool = list[list[dict[str, Any]]]  # one row's reps, [quiet, busy]: gated metric, figures, jobs


@dataclass(frozen=True)
class Case:
    name: str
    shift: float  # B = A x (1 + shift)
    outliers: bool  # one rep in ten of either side is a stall


@dataclass(frozen=True)
class Drawn:
    value: float | None  # the row's gated metric; None: set aside as disturbed, or never reached
    figures: dict[str, float | None]  # the workers' CPU per job and split, where the pool has them
    jobs: int
    bad: dict[str, int]  # how many of its jobs ended badly, by way
    behaviour: frozenset[str]  # what its workers did (the watchdog's kinds), a planted stall too


def draw(pool: Pool, rng: random.Random, case: Case, side: str) -> Drawn:
    """One rep: quiet or beside a busy core with even odds (the pools' sizes may differ). A
    jitter of a millionth breaks the ties that drawing from a small pool with replacement makes
    (real reps never tie at the microsecond), far below any row's noise. A planted stall is a
    behaviour the watchdog names: the rep counts it, and its time is 2.5-4 times longer."""
    rep = rng.choice(rng.choice(pool))
    counted = rep["value"] is not None and rep.get("flag") is None
    value = float(rep["value"]) * (1 + case.shift if side == "B" else 1) if counted else None
    if value is not None:
        value *= 1 + rng.uniform(-1e-6, 1e-6)
    behaviour = set(rep.get("behaviour", ()))
    if case.outliers and rng.random() < 0.1:
        behaviour.add(STALL)
        value = value * rng.uniform(2.5, 4.0) if value is not None else None
    figures = {name: rep.get(name) for name in FIGURES}
    return Drawn(value, figures, int(rep.get("jobs", 0)), rep.get("bad", {}), frozenset(behaviour))


def outcomes(side: list[Drawn]) -> JobOutcomes:
    """A side's jobs as verdict/correctness.py counts them (no faults in the suites drawn)."""
    bad = {way: sum(r.bad.get(way, 0) for r in side) for way in BAD_OUTCOMES}
    jobs = sum(r.jobs for r in side)
    return JobOutcomes(jobs=jobs, completed=jobs - sum(bad.values()),
                       bad={w: n for w, n in bad.items() if n}, faulted=False)  # fmt: skip


def behaviour(side: list[Drawn]) -> dict[str, int]:
    """Per kind, how many of the side's reps showed it (verdict/behaviour.side_behaviour)."""
    counts: dict[str, int] = {}
    for rep in side:
        for kind in rep.behaviour:
            counts[kind] = counts.get(kind, 0) + 1
    return counts


def row_verdict(a: list[Drawn], b: list[Drawn], rule: Rule, levels: Levels) -> tuple[str, bool]:
    """The row's verdict at one look as core/run/settle.py takes it: a check of row_checks.py that
    finds a regression (correctness, the behaviour counted per side, the workers' figures
    compared), else a speed regression, else a check left open, else the speed. The flag says
    whether a check decided it."""
    findings: list[Finding] = find(
        (outcomes(a), outcomes(b)), (behaviour(a), behaviour(b)), (len(a), len(b)), {},
        levels.checks,
    )  # fmt: skip
    for name, figure in FIGURES.items():
        base, cand = ([v for r in side if (v := r.figures[name]) is not None] for side in (a, b))
        found = judge_figure(base, cand, figure, levels.checks)
        findings += [found] if found is not None else []
    checks = worst(findings)
    values = ([r.value for r in a if r.value is not None],
              [r.value for r in b if r.value is not None])  # fmt: skip
    speed = decide(weigh(*values, rule, interval=False), rule, levels).verdict
    verdict = checked_verdict(checks, speed)
    return verdict, checks == "regression" or verdict != speed


def simulate_call(
    pools: list[Pool], rng: random.Random, case: Case, rule: Rule, max_reps: int
) -> tuple[list[str], list[int], list[bool]]:
    """One gate call over the rows: settle each row as jobbench/core/run/settle.py does, a pair at a
    time past the first reps, tested at the schedule's points (decision.look_points) and at
    --max-reps, each test at its look_levels. Returns each row's verdict at its last test, its
    reps a side and whether a check (not the speed) decided it."""
    verdicts, reps, by_check = [], [], []
    for pool in pools:
        a = [draw(pool, rng, case, "A") for _ in range(FIRST_REPS)]
        b = [draw(pool, rng, case, "B") for _ in range(FIRST_REPS)]
        while True:
            if is_look_point(len(a), FIRST_REPS) or len(a) >= max_reps:
                look = look_number(len(a), FIRST_REPS)
                levels = look_levels(rule, look, rows=len(pools), costed=0)
                verdict, checked = row_verdict(a, b, rule, levels)
                if verdict != "unsettled" or len(a) >= max_reps:
                    break
            a.append(draw(pool, rng, case, "A"))
            b.append(draw(pool, rng, case, "B"))
        verdicts.append(verdict)
        reps.append(len(a))
        by_check.append(checked)
    return verdicts, reps, by_check


def old_rule_call(pools: list[Pool], rng: random.Random, case: Case, rule: Rule) -> list[bool]:
    """The rule before this one: 5 reps, ratio of medians > threshold and p < 0.05 per row."""
    flagged = []
    for pool in pools:
        a = sorted(v for _ in range(FIRST_REPS) if (v := draw(pool, rng, case, "A").value))
        b = sorted(v for _ in range(FIRST_REPS) if (v := draw(pool, rng, case, "B").value))
        if not a or not b:
            flagged.append(False)
            continue
        change = b[len(b) // 2] / a[len(a) // 2] - 1
        p = mannwhitneyu(a, b, alternative="two-sided").pvalue
        flagged.append(change > rule.threshold and p < 0.05)
    return flagged


def share(hits: int, n: int) -> str:
    if n == 0:
        return "-"
    p, low, high = wilson(hits, n)
    return f"{p:.1%} [{low:.1%}, {high:.1%}]"


def cases(rule: Rule) -> list[Case]:
    return [
        Case("A/A (nothing changed)", 0.0, False),
        Case("A/A, 1 rep in 10 a stall", 0.0, True),
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
    any_row = old_any = any_open = any_check = 0
    for _ in range(calls):
        verdicts, used, by_check = simulate_call(pools, rng, case, rule, max_reps)
        flags = [v == "regression" for v in verdicts]
        any_row += any(flags)
        any_check += any(f and c for f, c in zip(flags, by_check))
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
        share(any_row, calls),
        share(any_check, calls),
        share(per_row[weakest], calls) if case.shift else "-",
        share(max(passed), calls) if case.shift else "-",
        share(any_open, calls),
        " / ".join(f"{r / calls:.1f}" for r in reps),
        share(old_any, calls),
        share(min(old_row), calls) if case.shift else "-",
    ]


def load_pools(path: Path, policy: str, metric_for: dict[str, str]) -> list[Pool]:
    """Each row's pool, in the suite's order; a row the pool lacks is named."""
    data: dict[str, Any] = json.loads(path.read_text())["pools"][policy]
    missing = [row for row in metric_for if row not in data]
    if missing:
        raise SystemExit(f"{path}: no reps of {', '.join(missing)} for {policy}: gate_pools.py")
    return [
        [
            [{**rep, "value": rep.get(metric_for[row])} for rep in data[row][condition]]
            for condition in ("quiet", "busy")
            if data[row].get(condition)
        ]
        for row in metric_for
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
    parser.add_argument("--suite", default=DEFAULT_SUITE, choices=sorted(BUILTIN_SUITES))
    parser.add_argument("--pools", type=Path, default=POOLS)
    parser.add_argument("--policies", default="runpod-1.12")
    parser.add_argument("--calls", type=int, default=2000, help="simulated gate calls per case")
    parser.add_argument("--max-reps", type=int, default=DEFAULT_MAX_REPS)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--spreads", action="store_true", help="only the noise of each metric")
    args = parser.parse_args()
    if args.spreads:
        spreads(args.pools, args.policies.split(","))
        return
    suite = BUILTIN_SUITES[args.suite]
    metric_for = {s.name: s.metric or "time_to_p99_s" for s in suite.scenarios}
    print("gated metrics:", ", ".join(f"{k} {v}" for k, v in metric_for.items()))
    header = ["pool", "case", "any row flagged", "by a check", "weakest row flagged",
              "most passed row (miss)", "any row inconclusive", "mean reps a side per row",
              "old rule: any row", "old rule: weakest row"]  # fmt: skip
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
