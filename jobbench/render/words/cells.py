"""Cell text shared by every comparison renderer, so the formats agree to the character.

Two shapes: the narrow table (the terminal's default, within 100 columns: the gated metric only)
and the wide one (`--wide`, Markdown, HTML: every metric, the reps and what was set aside).
"""

from __future__ import annotations

from typing import Any

from jobbench.results.model import Comparison, HeldComparison, HeldFigure, MetricComparison, Row

MARKS: dict[str | None, str] = {
    "pass": "pass",
    "better": "better",
    "regression": "REGRESSION",
    "inconclusive": "inconclusive",
    None: "",
}
SHORT = {  # metric -> column text; the legend spells each out
    "time_to_p99_s": "99 % done",
    "time_to_p100_s": "100 % done",
    "e2e_p50_s": "e2e p50",
    "e2e_p99_s": "e2e p99",
    "e2e_mean_s": "e2e mean",
    "steady_e2e_p99_s": "steady e2e p99",
    "fleet_worker_s": "worker-s",
}
LONG = {
    "time_to_p99_s": "time until 99 % of the burst is done",
    "time_to_p100_s": "time until the whole burst is done",
    "e2e_p50_s": "job end-to-end p50",
    "e2e_p99_s": "job end-to-end p99",
    "e2e_mean_s": "mean job end-to-end time over every job of the reps (pooled)",
    "steady_e2e_p99_s": "end-to-end p99 of the jobs submitted after the warm-up (a profile)",
    "fleet_worker_s": "worker-seconds billed by an autoscaled fleet (its cost)",
}
COST = "fleet_worker_s"
WIDE_METRICS = ("e2e_p50_s", "e2e_p99_s", "e2e_mean_s")


def fmt(value: Any, unit: str) -> str:
    """One figure with its unit, the same in the terminal, Markdown and HTML."""
    if not isinstance(value, (int, float)):
        return "-"
    if unit == "%":
        return f"{value:.1%}"
    if unit == "s":
        return f"{value:.3f} s"
    if unit == "":
        return f"{value:.0f}"
    if unit == "ratio":
        return f"{value:.3f}"
    return f"{value:.1f} {unit}"


def change(metric: MetricComparison | None) -> str:
    value = metric.change if metric else None
    return "-" if value is None else f"{value:+.1%}"


def interval(metric: MetricComparison) -> str:
    ci = metric.ci
    return f"[{ci[0]:+.1%}, {ci[1]:+.1%}]" if ci else "-"


def figure(metric: MetricComparison | None, side: str, name: str) -> str:
    """A side's figure: the median of the reps that count, or the pooled mean."""
    summary = (metric.baseline if side == "baseline" else metric.candidate) if metric else None
    if not summary:
        return "-"
    pooled = summary.pooled if name == "e2e_mean_s" else None
    return fmt(summary.median if pooled is None else pooled, "s")


def noise(metric: MetricComparison) -> str:
    sides = metric.spread
    spread = [v for v in (sides.baseline, sides.candidate) if v is not None] if sides else []
    return f"±{max(spread):.1%}" if spread else "-"


def gated(row: Row) -> tuple[str, MetricComparison]:
    return row.gated, row.metrics[row.gated]


def mixed_metrics(comparison: Comparison) -> bool:
    return len({row.metric for row in comparison.rows}) > 1


def costed(comparison: Comparison) -> bool:
    """Some row ran an autoscaled fleet: its cost is shown beside the latency."""
    return any(COST in row.metrics for row in comparison.rows)


# (the comparison's held figure, column text, unit): take-ahead's cost, shown beside, never gated
HELD = (("jobs", "held", ""), ("extra_wait_p99_s", "held wait p99", "s"))
HELD_LEGEND = (
    "held: jobs held in a take-ahead buffer while a slot was free elsewhere; held wait p99: "
    "their extra wait's p99 (medians over each side's reps; change: B - A; shown, never gated)"
)


def held_figures(held: HeldComparison | None) -> list[tuple[HeldFigure | None, str, str]]:
    """A row's held figures with their column text and unit (None: the row has none)."""
    return [(getattr(held, name) if held else None, text, unit) for name, text, unit in HELD]


def held_shown(comparison: Comparison) -> bool:
    """Some side of some row held a job: take-ahead's cost has a say beside the verdicts (all
    none, or unmeasured, it has nothing to say)."""
    return any(
        held is not None and (held.baseline or held.candidate)
        for row in comparison.rows
        for held, _, _ in held_figures(row.held)
    )


def held_cells(figure: HeldFigure | None, unit: str) -> list[str]:
    """A, B and the change (B - A) of one held figure."""
    if figure is None:
        return ["-", "-", "-"]
    diff = figure.difference
    change = "-" if diff is None else f"{diff:+.3f} s" if unit == "s" else f"{diff:+.0f}"
    return [fmt(figure.baseline, unit), fmt(figure.candidate, unit), change]


def held_lines(comparison: Comparison) -> list[str]:
    """The narrow table's held figures, a line per row under it (the table has no room)."""
    if not held_shown(comparison):
        return []
    lines = ["held (A -> B, change):"]
    for row in comparison.rows:
        parts = []
        for held, text, unit in held_figures(row.held):
            a, b, diff = held_cells(held, unit)
            parts.append(f"{text} {a} -> {b} ({diff})")
        lines.append(f"  {row.scenario}: {'; '.join(parts)}")
    return lines


def header(comparison: Comparison, wide: bool) -> list[str]:
    cells = ["scenario"]
    if wide or mixed_metrics(comparison):
        cells.append("gated on")
    cells += ["A", "B", "change", "95 % CI", "noise"]
    if costed(comparison):
        cells += ["A worker-s", "B worker-s", "cost"] if wide else ["cost"]
    if wide and held_shown(comparison):
        for _, text, _ in HELD:
            cells += [f"A {text}", f"B {text}", "change"]
    if wide:
        cells += ["reps A/B", "set aside", "detectable"]
        for name in WIDE_METRICS:
            cells += [f"A {SHORT[name]}", f"B {SHORT[name]}", "change"]
        cells += ["ideal", "eff A", "eff B"]
    return [*cells, "verdict"]


def row_cells(row: Row, comparison: Comparison, wide: bool) -> list[str]:
    name, metric = gated(row)
    cells = [row.scenario + (" *" if metric.excluded else "")]
    if wide or mixed_metrics(comparison):
        cells.append(SHORT.get(name, name))
    cells += [
        figure(metric, "baseline", name),
        figure(metric, "candidate", name),
        change(metric),
        interval(metric),
        noise(metric),
    ]
    if costed(comparison):
        cost = row.metrics.get(COST)
        if wide:
            cells += [figure(cost, "baseline", COST), figure(cost, "candidate", COST)]
        cells.append(change(cost) + ("" if row.cost_verdict is None else f" {row.cost_verdict}"))
    if wide and held_shown(comparison):
        for held, _, unit in held_figures(row.held):
            cells += held_cells(held, unit)
    if wide:
        reps = row.reps
        mdc = row.mdc
        cells += [
            f"{reps.baseline}/{reps.candidate}" if reps else "-/-",
            str(len(metric.excluded)),
            "-" if mdc is None else f"{mdc:+.0%}",
        ]
        for other in WIDE_METRICS:
            m = row.metrics.get(other)  # a /1 file has no pooled mean
            cells += [figure(m, "baseline", other), figure(m, "candidate", other), change(m)]
        cells += [
            fmt(row.ideal_s, "s"),
            fmt(row.efficiency.baseline, "%"),
            fmt(row.efficiency.candidate, "%"),
        ]
    verdict = row.verdict
    return [*cells, MARKS.get(verdict, str(verdict))]


def title(comparison: Comparison) -> str:
    """Who A and B are: label, role and the workers that ran each (as the results name them)."""
    sides = []
    for letter, side, role in (
        ("A", comparison.baseline, "baseline"),
        ("B", comparison.candidate, "candidate"),
    ):
        workers = "; ".join(side.workers)
        sides.append(f"{letter} = {side.label} ({role}{': ' + workers if workers else ''})")
    text = ", ".join(sides)
    names = {row.metric for row in comparison.rows}
    if len(names) == 1 and (name := names.pop()) is not None and name in LONG:
        text += f"; gated on {LONG[name]}"
    return text


VERDICTS = (  # the verdict column's words, as the verdict lines use them (docs/ci.md)
    "verdict: REGRESSION = B slower by more than the threshold, and significant; better = faster "
    "by more than it, and significant; pass = a slowdown beyond it is ruled out; inconclusive = "
    "these reps settle neither."
)
WIDE_LEGEND = (
    "reps A/B: reps each side ran; set aside: reps that do not count; detectable: the smallest "
    "slowdown these reps flag with 95 % power; e2e: a job's submit until done; ideal = wake + "
    "ceil(burst / (workers x slots)) x job: every slot busy from the first wake; eff A, eff B = "
    "ideal / that side's time to 99 %."
)


def legend(comparison: Comparison, wide: bool = True) -> list[str]:
    """One clause per figure, under every comparison table; `wide` adds the wide table's columns
    (Markdown and the HTML page show that one)."""
    lines = [
        "A, B: median over the reps that count (e2e mean: pooled over their jobs); change: B/A - 1 "
        "(Hodges-Lehmann) with its 95 % interval; noise: rep-to-rep spread, 1.4826 MAD / median.",
        *([WIDE_LEGEND] if wide else []),
        VERDICTS,
    ]
    if any(gated(row)[1].excluded for row in comparison.rows):
        lines.append("*: reps were set aside (outliers or flagged by the runner), named below.")
    if mixed_metrics(comparison):
        used = sorted({row.gated for row in comparison.rows})
        lines.append("gated on: " + "; ".join(f"{SHORT[n]} = {LONG[n]}" for n in used))
    if costed(comparison):
        lines.append(
            "worker-s: worker-seconds an autoscaled fleet billed (median); cost: B/A - 1, and its "
            "verdict when the gate judges cost too (--max-cost-regression)"
        )
    if held_shown(comparison):
        lines.append(HELD_LEGEND)
    return lines


def verdict_lines(comparison: Comparison) -> list[str]:
    lines = []
    for row in comparison.rows:
        if row.verdict:
            lines.append(f"{row.scenario}: {row.verdict}: {row.reason}")
    if comparison.verdict:
        gate = comparison.gate
        limit = gate.max_regression if gate else 0
        false_alarm = (gate.false_alarm if gate else None) or 0
        miss = (gate.miss if gate else None) or 0
        lines.append(
            f"overall: {comparison.verdict} ({comparison.reason}); threshold "
            f"+{limit:.1%}, false alarms <= {false_alarm:.0%} per call, "
            f"misses <= {miss:.0%} at +{2 * limit:.1%} (docs/ci.md)"
        )
    return lines
