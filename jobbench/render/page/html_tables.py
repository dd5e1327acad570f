"""HTML tables of the report: a scenario's summary (one or two sides), the comparison rows and
the verdicts."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from jobbench.render.words.cells import (
    FLEET_ROWS,
    HELD,
    HELD_ROWS,
    MARKS,
    SHORT,
    STEADY_ROWS,
    WIDE_METRICS,
    change,
    figure,
    fmt,
    gated,
    held_cells,
    held_figures,
    held_shown,
    interval,
    noise,
)
from jobbench.render.words.explain import (
    buffered_any,
    fleet_line,
    gap_line,
    harness_line,
    held_line,
    is_live,
    phase_title,
    predicted_line,
    profile_ideal_lines,
    refresh_line,
)
from jobbench.render.words.resilience import (
    COMPLETED_ROW,
    HEAD,
    completed_share,
    rep_notes,
    resilience_rows,
)
from jobbench.results.compare import is_profile
from jobbench.results.model import Comparison, ScenarioResult, Spread


def figures(live: bool) -> tuple[tuple[str, str, str], ...]:
    """(row title, summary key, unit): every figure of `scenarios[].summary` that a reader asks
    for, the job phases named as the terminal names them for this mode (render/words/explain.py)."""
    return (
        ("time to first done", "time_to_first_s", "s"),
        ("time to 50 %", "time_to_p50_s", "s"),
        ("time to 99 %", "time_to_p99_s", "s"),
        ("time to 100 %", "time_to_p100_s", "s"),
        ("throughput", "throughput_jps", "jobs/s"),
        ("utilisation", "utilisation", "%"),
        ("efficiency", "efficiency", "%"),
        *(
            (f"{phase_title(key, live)} {stat}", f"{key}_{stat}_s", "s")
            for key in ("queue_wait", "service", "e2e")
            for stat in ("p50", "p90", "p99", "max")
        ),
        ("takes", "takes_count", ""),
        ("mean take size", "takes_got_mean", "jobs"),
        *STEADY_ROWS,
        *HELD_ROWS,
        *FLEET_ROWS,
    )


STATS = ("median", "min", "max")


def _cells(values: Sequence[str], tag: str = "td") -> str:
    return "".join(f"<{tag}>{escape(v)}</{tag}>" for v in values)


def _change(a: Spread | None, b: Spread | None) -> str:
    if a is None or b is None or a.median == 0:
        return "-"
    return f"{b.median / a.median - 1:+.1%}"


def _stats(figure: Spread | None) -> tuple[float | None, float | None, float | None]:
    return (figure.median, figure.min, figure.max) if figure else (None, None, None)


def summary_table(entries: Sequence[ScenarioResult], labels: Sequence[str]) -> str:
    """Median / min / max per figure; with two sides, A and B side by side and B's change."""
    two = len(entries) == 2
    head = ["figure"] + [f"{label} {stat}".strip() for label in labels for stat in STATS]
    head += ["B vs A"] if two else []
    rows = []
    held = any(buffered_any(entry) for entry in entries)
    for title, key, unit in figures(is_live(entries[0])):
        stats = [entry.summary.get(key) for entry in entries]
        if not any(stats) or (not held and (title, key, unit) in HELD_ROWS):
            continue
        cells = [title] + [fmt(value, unit) for s in stats for value in _stats(s)]
        cells += [_change(stats[0], stats[1])] if two else []
        rows.append(f"<tr>{_cells(cells)}</tr>")
    shares = [completed_share(entry) for entry in entries]
    if any(shares):  # some job ended badly: the share that completed, flagged
        title, unit = COMPLETED_ROW
        cells = [title] + [fmt(v, unit) for share in shares for v in share or (None,) * 3]
        cells += ["-"] if two else []
        rows.append(f'<tr class="bad">{_cells(cells)}</tr>')
    return (
        f'<table class="num"><thead><tr>{_cells(head, "th")}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def facts(entry: ScenarioResult, label: str) -> str:
    """Ideal, efficiency and the split across workers of the last rep, as a definition list."""
    reps = entry.reps
    efficiency = entry.summary.get("efficiency")
    eff = efficiency.median if efficiency else None
    split = reps[-1].split if reps else None
    per_worker = split.jobs_per_worker if split else {}
    ideal = entry.ideal_s
    items = [
        ("ideal", fmt(ideal, "s") + " (wake + ceil(burst / (workers x slots)) x job)"),
        ("efficiency", fmt(eff, "%") + " (ideal / time to 99 %, median)"),
    ]
    if is_profile(entry):  # the perfect dispatcher's steady latency, not a drain's limit
        lines = profile_ideal_lines(entry)
        items = [(line.split(" ", 1)[0], line.split(" ", 1)[1]) for line in lines]
    items += [
        ("reps", str(len(reps))),
        ("split, last rep", ", ".join(f"{w} {n}" for w, n in per_worker.items()) or "-"),
        (
            "max/min, Jain",
            f"{fmt(split.max_min_ratio if split else None, 'ratio')}, "
            f"{fmt(split.jain if split else None, 'ratio')}",
        ),
    ]
    if (predicted := predicted_line(entry)) is not None:
        items.insert(2, ("predicted", predicted.removeprefix("predicted ")))
    if (gap := gap_line(entry)) is not None:
        items.insert(3, ("gap to the ideal", gap))
    if (held := held_line(entry)) is not None:
        items.append(("held", held.removeprefix("held ")))
    if (fleet := fleet_line(entry)) is not None:
        items.append(("fleet", fleet.removeprefix("fleet ")))
    if (cpu := harness_line(entry)) is not None:
        items.append(("harness CPU", cpu.removeprefix("harness CPU ")))
    if (refreshed := refresh_line(entry)) is not None:
        items.append(("refreshed", refreshed.removeprefix("refreshed ")))
    body = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in items)
    prefix = f"<h4>{escape(label)}</h4>" if label else ""
    return f'<div class="facts">{prefix}<dl>{body}</dl></div>'


def comparison_tables(comparison: Comparison) -> str:
    """The wide comparison's cells (as in Markdown and `--wide`) in two tables that each fit a
    1,400 px window: the gated metric with its verdict, then the other figures, grouped."""
    gated_head = ["scenario", "gated on", "A", "B", "change", "95 % CI", "noise"]
    gated_head += ["reps A/B", "set aside", "detectable", "verdict"]
    gated_rows, other_rows = [], []
    held = held_shown(comparison)  # take-ahead's cost, beside the latencies
    for row in comparison.rows:
        name, metric = gated(row)
        reps, mdc = row.reps, row.mdc
        verdict = row.verdict
        mark = escape(verdict) if isinstance(verdict, str) else ""
        scenario = row.scenario + (" *" if metric.excluded else "")
        cells = [scenario, SHORT.get(name, name), figure(metric, "baseline", name)]
        cells += [figure(metric, "candidate", name), change(metric), interval(metric)]
        cells += [noise(metric), f"{reps.baseline}/{reps.candidate}" if reps else "-/-"]
        cells += [str(len(metric.excluded)), "-" if mdc is None else f"{mdc:+.0%}"]
        cells += [MARKS.get(verdict, str(verdict))]
        gated_rows.append(f'<tr class="v-{mark}">{_cells(cells)}</tr>')
        others = [row.scenario]
        for other in WIDE_METRICS:
            m = row.metrics.get(other)  # a /1 file has no pooled mean
            others += [figure(m, "baseline", other), figure(m, "candidate", other), change(m)]
        for held_figure, _, unit in held_figures(row.held) if held else []:
            others += held_cells(held_figure, unit)
        others += [fmt(row.ideal_s, "s")]
        others += [fmt(row.efficiency.baseline, "%"), fmt(row.efficiency.candidate, "%")]
        other_rows.append(f"<tr>{_cells(others)}</tr>")
    names = [SHORT[n] for n in WIDE_METRICS] + ([text for _, text, _ in HELD] if held else [])
    groups = "".join(f'<th colspan="3">{escape(name)}</th>' for name in names)
    other_head = (
        f'<tr><th rowspan="2">scenario</th>{groups}<th rowspan="2">ideal</th>'
        f'<th colspan="2">efficiency</th></tr>'
        f"<tr>{_cells(['A', 'B', 'change'] * len(names) + ['A', 'B'], 'th')}</tr>"
    )
    return (
        f'<div class="scroll"><table class="num"><caption>the gated metric</caption><thead><tr>'
        f"{_cells(gated_head, 'th')}</tr></thead><tbody>{''.join(gated_rows)}</tbody></table>"
        f'</div><div class="scroll"><table class="num grouped"><caption>other figures'
        f"</caption><thead>{other_head}</thead><tbody>{''.join(other_rows)}</tbody></table></div>"
    )


def verdict_list(comparison: Comparison) -> str:
    """One line per verdict: each judged row's, then the overall one with the rule."""
    items = []
    for row in comparison.rows:
        if row.verdict:
            items.append(_verdict_item(row.verdict, row.scenario, row.reason))
    if comparison.verdict:
        gate = comparison.gate
        limit = gate.max_regression if gate else 0
        false_alarm = (gate.false_alarm if gate else None) or 0
        miss = (gate.miss if gate else None) or 0
        rule = (
            f"threshold +{limit:.1%}, false alarms <= {false_alarm:.0%} per call, misses "
            f"<= {miss:.0%} at +{2 * limit:.1%} (docs/ci.md)"
        )
        reason = "; ".join(part for part in (comparison.reason, rule) if part)
        items.append(_verdict_item(comparison.verdict, "overall", reason))
    return f'<ul class="verdicts">{"".join(items)}</ul>' if items else ""


def _verdict_item(verdict: str, what: str, reason: str) -> str:
    mark = escape(MARKS.get(verdict, verdict))
    why = f": {escape(reason)}" if reason else ""
    return f'<li class="v-{escape(verdict)}"><b>{mark}</b> {escape(what)}{why}</li>'


def resilience_table(entry: ScenarioResult) -> str:
    """Faults, lost jobs and stalls per rep, and why flagged reps are set aside ("" if none)."""
    rows = resilience_rows(entry)
    notes = rep_notes(entry)
    if not rows and not notes:
        return ""
    body = "".join(f"<tr>{_cells(row)}</tr>" for row in rows)
    table = (
        f'<table class="num"><caption>faults and losses</caption><thead><tr>'
        f"{_cells(HEAD, 'th')}</tr></thead><tbody>{body}</tbody></table>"
        if rows
        else ""
    )
    items = "".join(f"<li>{escape(note)}</li>" for note in notes)
    return table + (f'<ul class="notes">{items}</ul>' if items else "")
