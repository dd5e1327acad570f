"""HTML tables of the report: a scenario's summary (one or two sides), the comparison rows and
the verdicts."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from jobbench.render.words.cells import (
    HELD,
    MARKS,
    SHORT,
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
    OWN_INPUTS_LINE,
    fleet_line,
    gap_line,
    harness_line,
    held_line,
    predicted_line,
    profile_ideal_lines,
    ran_own_inputs,
    refresh_line,
)
from jobbench.render.words.resilience import HEAD, rep_notes, resilience_rows
from jobbench.render.words.summary import COLUMNS, SummaryLine, summary_lines
from jobbench.results.compare import is_profile
from jobbench.results.model import Comparison, ScenarioResult


def _cells(values: Sequence[str], tag: str = "td") -> str:
    return "".join(f"<{tag}>{escape(v)}</{tag}>" for v in values)


def _change(line: SummaryLine) -> str:
    """B/A - 1 of the medians; the jobs-completed row has none."""
    a, b = line.medians()
    if line.bad or a is None or b is None or a == 0:
        return "-"
    return f"{b / a - 1:+.1%}"


def summary_table(entries: Sequence[ScenarioResult], labels: Sequence[str]) -> str:
    """Median / min / max of every row of the summary (render/words/summary.py); with two
    sides, A and B side by side and B's change."""
    two = len(entries) == 2
    head = ["figure"] + [f"{label} {stat}".strip() for label in labels for stat in COLUMNS]
    head += ["B vs A"] if two else []
    rows = []
    for line in summary_lines(entries, terminal=False):
        cells = [line.title, *line.cells()] + ([_change(line)] if two else [])
        flag = ' class="bad"' if line.bad else ""  # some job ended badly: flagged
        rows.append(f"<tr{flag}>{_cells(cells)}</tr>")
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
    if ran_own_inputs(entry):  # no job length, so neither figure
        items = [("job length", OWN_INPUTS_LINE.removeprefix("job length "))]
    elif is_profile(entry):  # the perfect dispatcher's steady latency, not a drain's limit
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
