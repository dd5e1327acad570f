"""What a row is judged on before its speed (docs/ci.md, "Correctness and behaviour first"):
how its jobs ended, the behaviour its workers showed (stalls, a worker spinning a core), their
CPU per job and how evenly the jobs spread. Each can make a row a regression, or inconclusive
with the finding named, whatever its speed; none can make a slower row pass.

These checks take a fixed share of the call's family-wise false-alarm rate (decision.py
CHECKS_SHARE), split evenly over the rows and the four checks, and spent over a row's looks like
the speed test's (decision.look_levels), so the gate's 1 % per call holds with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from jobbench.results.behaviour import judge_behaviour, side_behaviour
from jobbench.results.compare import compare_metric, row_metrics
from jobbench.results.correctness import judge_correctness, side_outcomes
from jobbench.results.decision import Levels, Rule, decide, evidence_from
from jobbench.results.model import JobOutcomes, MetricComparison, Row, ScenarioResult


@dataclass(frozen=True)
class FigureRule:
    """A worker figure judged like the latency: worse by more than `threshold` (relative) and
    by more than `floor` (its own unit) between the sides' medians."""

    metric: str
    threshold: float
    floor: float
    what: str  # how a reason names it


# +50 % CPU per job is far outside the run-to-run noise of a worker's CPU; the floor keeps a
# model worker's ~0.1 ms a job from being judged on fractions of a tick. A split 25 % more
# uneven than the baseline's means some workers idle while one holds the jobs.
FIGURE_RULES = (
    FigureRule("worker_cpu_ms_per_job", 0.5, 0.5, "workers' CPU per job"),
    FigureRule("split_imbalance", 0.25, 0.0, "uneven split (busiest worker / mean)"),
)


@dataclass(frozen=True)
class Finding:
    verdict: str  # regression | inconclusive | pass
    reason: str


def judge_checks(row: Row, alpha: float) -> list[Finding]:
    """Every check's finding for one comparison row at significance `alpha` (the look's
    decision.Levels.checks); nothing found: an empty list."""
    reps = (row.reps.baseline, row.reps.candidate) if row.reps is not None else None
    return find(
        (row.outcomes.baseline, row.outcomes.candidate) if row.outcomes is not None else None,
        (row.behaviour.baseline, row.behaviour.candidate) if row.behaviour is not None else None,
        reps,
        row.metrics,
        alpha,
    )


def judge_entries(
    entries: tuple[ScenarioResult, ScenarioResult], rule: Rule, alpha: float
) -> list[Finding]:
    """The same checks on the two sides' results as they run (the settling loop's look)."""
    base, cand = entries
    metrics = {
        figure.metric: compare_metric(entries, figure.metric, ("A", "B"), False, rule)
        for figure in FIGURE_RULES
        if figure.metric in row_metrics(base)
    }
    return find(
        (side_outcomes(base), side_outcomes(cand)),
        (side_behaviour(base), side_behaviour(cand)),
        (len(base.reps), len(cand.reps)),
        metrics,
        alpha,
    )


def find(
    outcomes: tuple[JobOutcomes, JobOutcomes] | None,
    behaviour: tuple[dict[str, int], dict[str, int]] | None,
    reps: tuple[int, int] | None,
    metrics: Mapping[str, MetricComparison],
    alpha: float,
) -> list[Finding]:
    found: list[Finding] = []
    if outcomes is not None:
        check = judge_correctness(outcomes[0], outcomes[1], alpha)
        if check is not None:
            found.append(Finding("regression" if check.regression else "pass", check.reason))
    if behaviour is not None and reps is not None:
        seen = judge_behaviour(behaviour[0], behaviour[1], reps, alpha)
        if seen is not None:
            found.append(Finding(seen.verdict, seen.reason))
    for figure in FIGURE_RULES:
        metric = metrics.get(figure.metric)
        if metric is not None:
            finding = _judge_figure(metric, figure, alpha)
            if finding is not None:
                found.append(finding)
    return found


def _judge_figure(metric: MetricComparison, figure: FigureRule, alpha: float) -> Finding | None:
    """A regression where the figure is worse beyond its threshold and floor at `alpha`;
    inconclusive, named, where it looks that much worse but the reps cannot yet show it;
    None where it is not worse by that much."""
    a, b = metric.baseline, metric.candidate
    if a is None or b is None or b.median - a.median <= figure.floor:
        return None
    limit = Rule(threshold=figure.threshold)
    decision = decide(evidence_from(metric), limit, Levels(alpha, limit.miss, alpha))
    said = f"{figure.what}: {b.median:.3g} against {a.median:.3g} for the baseline"
    if decision.verdict == "regression":
        return Finding("regression", f"{said} ({decision.reason})")
    change = metric.change
    if change is not None and change > figure.threshold:
        return Finding("inconclusive", f"{said}: worse, not yet sure ({decision.reason})")
    return None


def worst(findings: list[Finding]) -> str | None:
    """regression, else inconclusive, else None (nothing that overrides the speed verdict)."""
    for verdict in ("regression", "inconclusive"):
        if any(f.verdict == verdict for f in findings):
            return verdict
    return None
