"""Two result documents -> comparison rows (schema `jobbench.comparison/2`): per metric every
rep's value, the reps set aside and the evidence; gate.py turns it into verdicts."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace

from jobbench.errors import ResultsError
from jobbench.measure import stats
from jobbench.results.behaviour import (
    is_measurement,
    rep_behaviour,
    requests_per_job,
    side_behaviour,
    split_imbalance,
    worker_cpu_ms_per_job,
)
from jobbench.results.correctness import rep_bad, side_outcomes
from jobbench.results.decision import Evidence, Rule, weigh
from jobbench.results.held_compare import held_comparison
from jobbench.results.model import (
    COMPARISON_SCHEMA,
    DEFAULT_METRIC,
    Comparison,
    ExcludedRep,
    MetricComparison,
    PerSide,
    Rep,
    Result,
    Row,
    ScenarioResult,
    SideFigure,
    SideSummary,
)
from jobbench.results.pairing import match_scenarios, shared_params


def _e2e_p50(rep: Rep) -> float | None:
    return rep.phases.e2e.p50 if rep.phases.e2e else None


def _e2e_p99(rep: Rep) -> float | None:
    return rep.phases.e2e.p99 if rep.phases.e2e else None


def _e2e_mean(rep: Rep) -> float | None:
    return rep.phases.e2e.mean if rep.phases.e2e else None


@dataclass(frozen=True)
class Metric:
    read: Callable[[Rep], float | None]  # one rep's figure
    label: str  # what it is, for headers and legends
    pooled: bool = False  # the side's figure is over every job of every rep, not a median
    # Compared only where a rep of the baseline has it (the workers' CPU: not live or
    # simulated; the split: two workers or more; the requests: not live), so rows that cannot
    # have it do not list it.
    where_measured: bool = False
    # Reps far from the others are set aside as outliers (a disturbed measurement); a figure of
    # the workers' own (their CPU, the split) is judged whole: a far rep is their doing too.
    outliers: bool = True


def _steady_e2e_p99(rep: Rep) -> float | None:
    return None if rep.steady is None else rep.steady.e2e_p99_s


def _worker_seconds(rep: Rep) -> float | None:
    return None if rep.fleet is None else rep.fleet.worker_s


METRICS: dict[str, Metric] = {
    "time_to_p99_s": Metric(lambda rep: rep.time_to_p99_s, "time to 99 % done"),
    "time_to_p100_s": Metric(lambda rep: rep.time_to_p100_s, "time to 100 % done"),
    "e2e_p50_s": Metric(_e2e_p50, "job end-to-end p50"),
    "e2e_p99_s": Metric(_e2e_p99, "job end-to-end p99"),
    "e2e_mean_s": Metric(_e2e_mean, "mean job end-to-end, pooled", pooled=True),
    "steady_e2e_p99_s": Metric(_steady_e2e_p99, "steady-state end-to-end p99"),
    "fleet_worker_s": Metric(_worker_seconds, "worker-seconds billed (an autoscaled fleet)"),
    "worker_cpu_ms_per_job": Metric(
        worker_cpu_ms_per_job,
        "workers' CPU per completed job, ms",
        where_measured=True,
        outliers=False,
    ),
    "split_imbalance": Metric(
        split_imbalance,
        "busiest worker's jobs / the mean (1 = even)",
        where_measured=True,
        outliers=False,
    ),
    "requests_per_job": Metric(
        requests_per_job,
        "workers' requests per completed job",
        where_measured=True,
        outliers=False,
    ),
}
# An autoscaled fleet's cost: compared on its rows, gated with --max-cost-regression.
COST_METRIC = "fleet_worker_s"
# An arrival profile's rows are judged on their steady-state latency: a drain's time to 99 %
# says little of a steady rate's jobs, which end as they arrive (docs/load-profiles.md).
PROFILE_METRIC = "steady_e2e_p99_s"


def gated_metric(chosen: str | None, entry: ScenarioResult) -> str:
    """The metric a row is judged on: the one chosen (--metric, else the suite's row), else
    the one the result recorded for its scenario when it ran, else time to 99 % (a profile's
    row: its steady-state end-to-end p99)."""
    recorded = entry.gate_metric
    default = PROFILE_METRIC if is_profile(entry) else DEFAULT_METRIC
    return chosen or (recorded if recorded in METRICS else None) or default


def is_profile(entry: ScenarioResult) -> bool:
    """The scenario ran an arrival profile (`params.load`), not one burst."""
    return (entry.params.model_extra or {}).get("load") is not None


def is_autoscaled(entry: ScenarioResult) -> bool:
    """The scenario ran an autoscaled fleet (`params.fleet`), not a fixed one."""
    return entry.params.fleet is not None


def row_metrics(entry: ScenarioResult) -> list[str]:
    """The metrics a row compares: the steady-state one only for a profile (a burst has none),
    the cost only for an autoscaled fleet."""
    return [
        name
        for name, metric in METRICS.items()
        if (name != PROFILE_METRIC or is_profile(entry))
        and (name != COST_METRIC or is_autoscaled(entry))
        and (not metric.where_measured or any(metric.read(rep) is not None for rep in entry.reps))
    ]


def rep_values(entry: ScenarioResult, name: str, source: str, required: bool) -> list[float | None]:
    """One figure of every rep (the reader has checked each is a number or null). A NaN or an
    infinity is a corrupt file (a ResultsError naming the field); a missing figure is None, or
    corrupt too if `required` (the gated metric: a verdict never rests on a silently shorter
    list), unless the rep's jobs did not all complete: a rep whose jobs failed may never reach
    99 % completed, and its correctness is judged apart (results/correctness.py)."""
    values: list[float | None] = []
    for index, rep in enumerate(entry.reps):
        value = METRICS[name].read(rep)
        where = f"{source}: scenario {entry.name!r} rep {index + 1} field {name}"
        if value is None and (not required or rep_bad(rep.jobs)):
            values.append(None)
        elif value is None:
            raise ResultsError(f"{where} is None, not a number; re-run that side")
        elif not math.isfinite(value):
            raise ResultsError(f"{where} is {value!r}; the file is corrupt, re-run that side")
        else:
            values.append(float(value))
    return values


def rep_flags(entry: ScenarioResult) -> list[str | None]:
    """Why the runner flagged each rep as a disturbed measurement (a saturated queue or
    driver, a machine busy with other work), or None: such reps never count towards a verdict.
    What the side's own workers did (a stall, a spinning worker) is not a flag: those reps
    count, and the behaviour is judged apart (results/behaviour.py)."""
    flags: list[str | None] = []
    for rep in entry.reps:
        kinds = [anomaly.kind for anomaly in rep.anomalies or [] if is_measurement(anomaly.kind)]
        flags.append(f"flagged: {', '.join(kinds)}" if kinds else None)
    return flags


def compare_metric(
    entries: tuple[ScenarioResult, ScenarioResult],
    name: str,
    sources: tuple[str, str],
    required: bool,
    rule: Rule,
) -> MetricComparison:
    """One metric of one row: every rep's value, the reps set aside, and the evidence."""
    values = [rep_values(e, name, src, required) for e, src in zip(entries, sources)]
    # A figure some reps lack (a file from before it existed) is not compared on that side;
    # the gated metric (required) lacks it only in reps whose jobs did not all complete, and
    # is compared on the reps that have it.
    numbers = [
        [i for i, v in enumerate(vals, start=1) if v is not None]
        if required or None not in vals
        else []
        for vals in values
    ]
    kept = [
        [v for i in nums if (v := vals[i - 1]) is not None] for vals, nums in zip(values, numbers)
    ]
    flags = [[every[i - 1] for i in nums] for every, nums in zip(map(rep_flags, entries), numbers)]
    # The figures of a rep that showed the side's own behaviour (a stall) are that side's:
    # never set aside as outliers. A figure judged whole (a worker's CPU) has no outliers.
    own = [[bool(rep_behaviour(e.reps[i - 1])) for i in nums] for e, nums in zip(entries, numbers)]
    if not METRICS[name].outliers:
        rule = replace(rule, outlier_z=math.inf)
    evidence = weigh(
        kept[0],
        kept[1],
        rule,
        (flags[0], flags[1]),
        numbers=(numbers[0], numbers[1]),
        own=(own[0], own[1]),
    )
    return MetricComparison(
        baseline=_side_figure(entries[0], name, evidence, 0, values[0]),
        candidate=_side_figure(entries[1], name, evidence, 1, values[1]),
        change=evidence.change,
        ci=list(evidence.ci) if evidence.ci else None,
        p_slower=evidence.p_slower,
        p_faster=evidence.p_faster,
        spread=PerSide(baseline=evidence.spread[0], candidate=evidence.spread[1]),
        excluded=[
            ExcludedRep(side=e.side, rep=e.rep, value=e.value, reason=e.reason)
            for e in evidence.excluded
        ],
        clean=PerSide(baseline=list(evidence.clean[0]), candidate=list(evidence.clean[1])),
        unsteady=evidence.unsteady,
        values=PerSide(baseline=values[0], candidate=values[1]),
    )


def _side_figure(
    entry: ScenarioResult, name: str, evidence: Evidence, side: int, values: list[float | None]
) -> SideFigure | None:
    """Median / min / max / n of the reps that count; a pooled metric adds `pooled`, the
    figure over every job of those reps (each rep's value, a mean, weighted by the jobs it
    served). `values`: every rep's value, in rep order."""
    clean = evidence.clean[side]
    if not clean:
        return None
    figure = SideFigure.model_validate(stats.summary(clean))
    if METRICS[name].pooled:
        out = {e.rep for e in evidence.excluded if e.side == "AB"[side]}
        weighted = [
            (value, _served(rep))
            for i, (value, rep) in enumerate(zip(values, entry.reps), start=1)
            if i not in out and value is not None
        ]
        jobs = sum(n for _, n in weighted)
        figure.pooled = math.fsum(v * n for v, n in weighted) / jobs if jobs else figure.median
    return figure


def _served(rep: Rep) -> int:
    return rep.jobs.completed or 1  # the phases are of completed jobs


def compare_docs(
    base: Result,
    cand: Result,
    *,
    paths: Sequence[str | None] = (None, None),
    sources: Sequence[str] | None = None,
    free_latency: Collection[str] = (),
    metric_for: Callable[[str], str | None] = lambda _: None,
    rule: Rule | None = None,
) -> Comparison:
    """Rows per scenario; `verdict` fields are filled in by gate.judge. `paths`: where each
    side's result file is, relative to the comparison's folder; `sources`: how an error names
    each side (the file as the user gave it; default: `paths`, else the label);
    `free_latency`: the latency fields a variant of the comparison sets, which may differ;
    `metric_for`: the gated metric chosen for a scenario (by name; see gated_metric), which
    every rep must hold."""
    names = sources or (paths[0] or base.label, paths[1] or cand.label)
    rule = rule or Rule()
    rows = []
    for b_entry, c_entry in match_scenarios(base, cand, free_latency):
        gated = gated_metric(metric_for(b_entry.name), b_entry)
        metrics = {
            name: compare_metric(
                (b_entry, c_entry), name, (names[0], names[1]), name == gated, rule
            )
            for name in row_metrics(b_entry)
        }
        rows.append(
            Row(
                scenario=b_entry.name,
                params=shared_params(b_entry.params, free_latency),
                ideal_s=b_entry.ideal_s,
                efficiency=PerSide(
                    baseline=_median_summary(b_entry, "efficiency"),
                    candidate=_median_summary(c_entry, "efficiency"),
                ),
                split=PerSide(baseline=_last_split(b_entry), candidate=_last_split(c_entry)),
                reps=PerSide(baseline=len(b_entry.reps), candidate=len(c_entry.reps)),
                metric=gated,
                metrics=metrics,
                outcomes=PerSide(baseline=side_outcomes(b_entry), candidate=side_outcomes(c_entry)),
                behaviour=PerSide(
                    baseline=side_behaviour(b_entry), candidate=side_behaviour(c_entry)
                ),
                verdict=None,
            )
        )
        if (held := held_comparison(b_entry, c_entry)) is not None:  # else no `held` key
            rows[-1].held = held
    return Comparison(
        schema=COMPARISON_SCHEMA,
        baseline=_side(base, paths[0]),
        candidate=_side(cand, paths[1]),
        rows=rows,
        verdict=None,
    )


def _side(doc: Result, path: str | None) -> SideSummary:
    return SideSummary(
        label=doc.label,
        path=path,
        created=doc.created,
        complete=doc.complete,
        error=doc.error,
        workers=sorted(
            {entry.worker + (", simulated" if entry.simulated else "") for entry in doc.scenarios}
        ),
    )


def _median_summary(entry: ScenarioResult, key: str) -> float | None:
    figure = entry.summary.get(key)
    return float(figure.median) if figure is not None else None


def _last_split(entry: ScenarioResult) -> list[int]:
    if not entry.reps:
        return []
    return sorted(entry.reps[-1].split.jobs_per_worker.values(), reverse=True)
