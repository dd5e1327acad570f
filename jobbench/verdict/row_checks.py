"""What a row is judged on before its speed (docs/ci.md, "Correctness and behaviour first"):
how its jobs ended, the behaviour its workers showed (stalls, a worker spinning a core), their
CPU per job, how evenly the jobs spread and how many requests they made per job. Each can make
a row a regression, or inconclusive with the finding named, whatever its speed; none can make a
slower row pass.

These checks take a fixed share of the call's family-wise false-alarm rate (decision.py
CHECKS_SHARE), split evenly over the rows and the checks (decision.CHECKS_PER_ROW), and spent
over a row's looks like the speed test's (decision.look_levels), so the gate's 1 % per call
holds with them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jobbench.measure import stats
from jobbench.results.model import JobOutcomes, MetricComparison, Row, ScenarioResult
from jobbench.verdict.behaviour import judge_behaviour, side_behaviour
from jobbench.verdict.comparison import compare_metric, row_metrics
from jobbench.verdict.correctness import judge_correctness, side_outcomes
from jobbench.verdict.decision import MIN_CLEAN_REPS, Rule


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
# uneven than the baseline's means some workers idle while one holds the jobs. A job costs at
# least its job-done and a share of a take (1 + 1/K requests on a burst taken K at a time, about
# 2 in a trickle, where each take is woken by one job); a rep's count moves by a take or two,
# so 20 % more is a change of the workers' loops (a take per job where a batch was taken
# doubles it); the floor, a request more every ten jobs, keeps a row of a few jobs from being
# judged on one take.
FIGURE_RULES = (
    FigureRule("worker_cpu_ms_per_job", 0.5, 0.5, "workers' CPU per job"),
    FigureRule("split_imbalance", 0.25, 0.0, "uneven split (busiest worker / mean)"),
    FigureRule("requests_per_job", 0.2, 0.1, "workers' requests per job"),
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
    """judge_figure on the reps of the row that count."""
    clean = metric.clean
    a, b = (clean.baseline, clean.candidate) if clean is not None else ([], [])
    return judge_figure(a, b, figure, alpha)


def judge_figure(
    a: Sequence[float], b: Sequence[float], figure: FigureRule, alpha: float
) -> Finding | None:
    """A regression where the candidate's figure is worse than the baseline's by more than the
    threshold (a one-sided Mann-Whitney test of B / (1 + threshold) against A at `alpha`) and
    its median by more than the floor; inconclusive, named, where the medians are that far
    apart but the reps cannot yet show it; None where they are not. On the raw figures, not
    their logs: a worker's CPU in a short rep can be 0 clock ticks."""
    if min(len(a), len(b)) < MIN_CLEAN_REPS:
        return None
    mid_a, mid_b = stats.median(a), stats.median(b)
    if mid_b - mid_a <= figure.floor or mid_b <= mid_a * (1 + figure.threshold):
        return None
    p = stats.mann_whitney_p([v / (1 + figure.threshold) for v in b], a, "greater")
    said = (
        f"{figure.what}: {mid_b:.3g} against {mid_a:.3g} for the baseline, more than "
        f"+{figure.threshold:.0%}"
    )
    if p < alpha:
        return Finding("regression", f"{said} (p = {p:.2g} < {alpha:.2g})")
    return Finding("inconclusive", f"{said}, not yet sure (p = {p:.2g}, needs < {alpha:.2g})")


def checked_verdict(found: str | None, speed: str) -> str:
    """A row's decision (decision.py's words) from its checks' worst finding and its speed's:
    a regression in either; else a check still open leaves the row unsettled; else the
    speed's. The one rule for the settling loop, the verdict and the error-rate study."""
    if "regression" in (found, speed):
        return "regression"
    return "unsettled" if found == "inconclusive" else speed


def worst(findings: list[Finding]) -> str | None:
    """regression, else inconclusive, else None (nothing that overrides the speed verdict)."""
    for verdict in ("regression", "inconclusive"):
        if any(f.verdict == verdict for f in findings):
            return verdict
    return None
