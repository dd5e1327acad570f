"""The HTML report: one self-contained page (inline CSS and SVG, no scripts, no fetches).

Per scenario: the summary table, then where the time goes in the plotted rep: the slot
timeline, the completion curve against the ideal, queue depth, take sizes and latencies, and
the end-to-end latency CDF. With two sides (a comparison) A and B share every axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from jobbench.measure.series import RepSeries
from jobbench.render import charts, html_tables
from jobbench.render.charts import Figure, Ideal, Plotted
from jobbench.render.style import CSS
from jobbench.render.timeline import timeline
from jobbench.results.model import (
    Comparison,
    LatencyDistribution,
    LatencyValue,
    Result,
    ScenarioResult,
)

# A Content-Security-Policy that forbids every fetch: the page cannot reach the network.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


@dataclass(frozen=True)
class SideReport:
    """One result to show: its document, where it came from, and the plotted rep's events."""

    key: str  # "A" / "B" in a comparison, "" alone
    doc: Result
    source: Path
    series: dict[str, RepSeries] = field(default_factory=dict)  # scenario name -> series
    reps: dict[str, int] = field(default_factory=dict)  # scenario name -> rep plotted
    note: str | None = None  # why there is nothing to plot

    @property
    def label(self) -> str:
        name = self.doc.label
        return f"{self.key} = {name}" if self.key else name

    @property
    def cls(self) -> str:
        return "b" if self.key == "B" else "a"


def render_page(sides: Sequence[SideReport], comparison: Comparison | None = None) -> str:
    title = " vs ".join(s.doc.label for s in sides)
    body = [_header(sides, title)]
    if comparison is not None:
        body.append(_verdict(comparison))
    for entry in sides[0].doc.scenarios:
        entries = [s.doc.scenario(entry.name) for s in sides]
        body.append(_section(sides, [e for e in entries if e is not None]))
    body.append(
        "<footer>Written by jobbench "
        f"{escape(sides[0].doc.jobbench)}. One self-contained file: inline CSS and "
        "SVG, no scripts, nothing fetched.</footer>"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        f"<title>jobbench report: {escape(title)}</title><style>{CSS}</style></head>"
        f"<body><main>{''.join(body)}</main></body></html>\n"
    )


def _header(sides: Sequence[SideReport], title: str) -> str:
    rows = []
    for side in sides:
        doc = side.doc
        env, target = doc.environment, doc.target
        state = (
            ""
            if doc.complete
            else f' <strong class="warn">incomplete: {escape(str(doc.error))}</strong>'
        )
        rows.append(
            f"<li><b>{escape(side.label)}</b>: {escape(str(side.source))}, created "
            f"{_text(doc.created)}; {_text(target.kind)} queue "
            f"{_text(target.endpoint)}; python {_text(env.python)}, "
            f"runpod {_text(env.runpod)}, git {_text(env.git_sha)[:12]}"
            f"{state}</li>"
        )
    return f"<header><h1>jobbench: {escape(title)}</h1><ul>{''.join(rows)}</ul></header>"


def _text(value: Any) -> str:
    return "-" if value is None else escape(str(value))


def _verdict(comparison: Comparison) -> str:
    from jobbench.render.cells import legend, title, verdict_lines

    items = "".join(f"<li>{escape(line)}</li>" for line in verdict_lines(comparison))
    return (
        f"<section><h2>Comparison</h2><p>{escape(title(comparison))}</p>"
        f'<div class="scroll">{html_tables.comparison_table(comparison)}</div>'
        f"<p>{escape(' '.join(legend(comparison)))}</p>"
        f"<ul>{items}</ul></section>"
    )


def _params_line(entry: ScenarioResult) -> str:
    p = entry.params
    lat = p.latency
    if lat is None:  # a live endpoint: the platform's latencies, not a model's
        return f"live endpoint; {p.burst} jobs of {p.job_seconds} s"
    return (
        f"{p.workers} workers x {p.slots} slots, {p.burst} jobs of "
        f"{p.job_seconds} s; take latency {_latency(lat, 'take')} s, wake "
        f"{_latency(lat, 'wake')} s, hold {_latency(lat, 'hold')} s"
    )


def _latency(latency: dict[str, LatencyValue], name: str) -> str:
    """As the file has it: seconds, or the distribution's JSON object."""
    value = latency.get(name)
    return str(value.as_written() if isinstance(value, LatencyDistribution) else value)


def _worker_text(side: SideReport, entry: ScenarioResult) -> str:
    return f"{side.label}: {entry.worker}"


def _section(sides: Sequence[SideReport], entries: list[ScenarioResult]) -> str:
    entry = entries[0]
    used = sides[: len(entries)]
    two = len(used) == 2
    labels = [s.key for s in used] if two else [""]
    workers = "; ".join(_worker_text(s, e) for s, e in zip(used, entries))
    facts = "".join(html_tables.facts(e, s.label if two else "") for s, e in zip(used, entries))
    resilience = "".join(
        f"<h4>{escape(s.label)}</h4>{table}" if two else table
        for s, e in zip(used, entries)
        if (table := html_tables.resilience_table(e))
    )
    extra = f'<div class="scroll">{resilience}</div>' if resilience else ""
    return (
        f'<section id="{_slug(entry.name)}"><h2>{escape(entry.name)}</h2><p class="params">'
        f"{escape(_params_line(entry))}<br>{escape(workers)}</p>"
        f'<div class="tables"><div class="scroll">{html_tables.summary_table(entries, labels)}'
        f'</div><div class="factrow">{facts}</div></div>{extra}{_plots(used, entries)}</section>'
    )


def _plots(sides: Sequence[SideReport], entries: list[ScenarioResult]) -> str:
    name = entries[0].name
    notes = "".join(
        f'<p class="note missing">{escape(s.label)}: no plots: '
        f"{escape(s.note or 'no events for this scenario')}</p>"
        for s in sides
        if name not in s.series
    )
    pairs = [(s, e) for s, e in zip(sides, entries) if name in s.series]
    if not pairs:
        return notes
    plotted = [Plotted(s.cls, s.label, s.series[name]) for s, _ in pairs]
    rep_texts = [f"rep {s.reps.get(name)} of {len(e.reps)}" for s, e in pairs]
    x_max = _x_max(plotted, entries[0].ideal_s)
    slots = entries[0].params.slots or 1
    timelines = [timeline(p, slots, x_max, text) for p, text in zip(plotted, rep_texts)]
    figures = [
        ("Slot timeline", _pair(timelines)),
        ("Completion", _figure(charts.completion(plotted, _ideal(entries[0]), x_max))),
        ("Queue depth", _figure(charts.queue_depth(plotted, x_max))),
        ("Take sizes", _figure(charts.take_sizes(plotted, x_max))),
        ("Take latencies", _figure(charts.take_latencies(plotted, x_max))),
        ("End-to-end latency", _figure(charts.e2e_cdf(plotted))),
    ]
    slug = _slug(name)
    blocks = "".join(f'<h3 id="{slug}-{_slug(t)}">{escape(t)}</h3>{html}' for t, html in figures)
    which = "; ".join(f"{p.label}: {text}" for p, text in zip(plotted, rep_texts))
    return f'{notes}<p class="note">Plots show one rep ({escape(which)}).</p>{blocks}'


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower())


def _x_max(plotted: Sequence[Plotted], ideal_s: float | None) -> float:
    ends = [p.series.done[-1] if p.series.done else p.series.end for p in plotted]
    if ideal_s is not None:
        ends.append(float(ideal_s))
    return max([*ends, 0.001]) * 1.03


def _ideal(entry: ScenarioResult) -> Ideal | None:
    p = entry.params
    if entry.ideal_s is None or p.workers is None or p.slots is None:  # a live endpoint
        return None
    return Ideal(float(entry.ideal_s), float(p.job_seconds), p.workers * p.slots, p.burst)


def _figure(fig: Figure) -> str:
    notes = "".join(f'<p class="note">{escape(n)}</p>' for n in fig.notes)
    return f"<figure>{fig.svg}{notes}</figure>"


def _pair(figures: list[Figure]) -> str:
    return f'<div class="pair">{"".join(_figure(f) for f in figures)}</div>'
