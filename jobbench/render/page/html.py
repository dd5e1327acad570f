"""The HTML report: one self-contained page (inline CSS and SVG, no scripts, no fetches).

A banner first when a result is incomplete. Per scenario: the summary table, every rep (the
gated metric's strip, a table with each rep's flags and machine load, a collapsed block of
plots per rep: every_rep.py), then where the time goes in the plotted rep: the slot timeline,
the completion curve against the ideal, queue depth, take sizes and latencies, and the
end-to-end latency CDF. With two sides (a comparison) A and B share every axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from jobbench.measure.series import RepSeries
from jobbench.render.page import charts, html_tables, steady_charts
from jobbench.render.page.charts import Figure, Ideal, Plotted
from jobbench.render.page.every_rep import Budget, Scene, every_rep
from jobbench.render.page.fleet_timeline import FleetSide, fleet_timeline
from jobbench.render.page.rep_strip import StripSide
from jobbench.render.page.steady_charts import SteadySide
from jobbench.render.page.style import CSS
from jobbench.render.page.timeline import timeline
from jobbench.render.words.explain import jobs_text
from jobbench.results.compare import gated_metric
from jobbench.results.model import (
    Comparison,
    LatencyDistribution,
    LatencyValue,
    Result,
    Row,
    ScenarioResult,
)

# A Content-Security-Policy that forbids every fetch: the page cannot reach the network.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


@dataclass(frozen=True)
class SideReport:
    """One result to show: its document, where it came from, and its reps' series."""

    key: str  # "A" / "B" in a comparison, "" alone
    doc: Result
    source: Path
    series: dict[str, dict[int, RepSeries]] = field(default_factory=dict)  # scenario -> rep ->
    reps: dict[str, int] = field(default_factory=dict)  # scenario name -> rep plotted
    note: str | None = None  # why the plotted rep has no plots

    def rep_series(self, scenario: str, rep: int) -> RepSeries | None:
        return self.series.get(scenario, {}).get(rep)

    def plotted_rep(self, scenario: str) -> int | None:
        return self.reps.get(scenario)

    def has_events(self, scenario: str) -> bool:
        return bool(self.series.get(scenario))

    def plotted(self, scenario: str) -> RepSeries | None:
        rep = self.reps.get(scenario)
        return None if rep is None else self.rep_series(scenario, rep)

    @property
    def source_label(self) -> str:
        return str(self.source)

    @property
    def label(self) -> str:
        name = self.doc.label
        return f"{self.key} = {name}" if self.key else name

    @property
    def cls(self) -> str:
        return "b" if self.key == "B" else "a"


def render_page(sides: Sequence[SideReport], comparison: Comparison | None = None) -> str:
    title = " vs ".join(s.doc.label for s in sides)
    body = [_banner(sides), _header(sides, title)]
    if comparison is not None:
        body.append(_verdict(comparison))
    budget = Budget()
    for entry in sides[0].doc.scenarios:
        entries = [s.doc.scenario(entry.name) for s in sides]
        found = [e for e in entries if e is not None]
        body.append(_section(sides, found, _row(comparison, entry.name), budget))
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


def _banner(sides: Sequence[SideReport]) -> str:
    """What an incomplete result lacks and why, before anything else on the page."""
    lines = [
        f"<p><strong>Incomplete result: {escape(side.label)}</strong> "
        f"({escape(str(side.source))}): {_text(side.doc.error)}; {escape(_held(side.doc))}.</p>"
        for side in sides
        if not side.doc.complete
    ]
    return f'<div class="banner" role="alert">{"".join(lines)}</div>' if lines else ""


def _held(doc: Result) -> str:
    reps = sum(len(e.reps) for e in doc.scenarios)
    if not reps:
        return "it holds no rep: nothing below was measured"
    per = ", ".join(f"{len(e.reps)} of {e.name}" for e in doc.scenarios)
    return f"it holds {reps} rep(s) ({per}): the figures below are of those only"


def _row(comparison: Comparison | None, scenario: str) -> Row | None:
    rows = comparison.rows if comparison is not None else []
    return next((row for row in rows if row.scenario == scenario), None)


def _header(sides: Sequence[SideReport], title: str) -> str:
    rows = []
    for side in sides:
        doc = side.doc
        env, target = doc.environment, doc.target
        state = "" if doc.complete else ' <strong class="warn">incomplete (see above)</strong>'
        where = (
            "simulated in virtual time"
            if target.kind == "sim"
            else f"{_text(target.kind)} queue {_text(target.endpoint)}"
        )
        rows.append(
            f"<li><b>{escape(side.label)}</b>: {escape(str(side.source))}, created "
            f"{_text(doc.created)}; {where}; python {_text(env.python)}, "
            f"runpod {_text(env.runpod)}, git {_text(env.git_sha)[:12]}"
            f"{state}</li>"
        )
    return f"<header><h1>jobbench: {escape(title)}</h1><ul>{''.join(rows)}</ul></header>"


def _text(value: Any) -> str:
    return "-" if value is None else escape(str(value))


def _verdict(comparison: Comparison) -> str:
    from jobbench.render.words.cells import legend, title

    return (
        f"<section><h2>Comparison</h2><p>{escape(title(comparison))}</p>"
        f"{html_tables.comparison_tables(comparison)}"
        f'<p class="note">{escape(" ".join(legend(comparison)))}</p>'
        f"{html_tables.verdict_list(comparison)}</section>"
    )


def _params_line(entry: ScenarioResult) -> str:
    p = entry.params
    lat = p.latency
    if lat is None:  # a live endpoint: the platform's latencies, not a model's
        return f"live endpoint; {jobs_text(entry)}"
    return (
        f"{p.workers} workers x {p.slots} slots, {jobs_text(entry)}; "
        f"take latency {_latency(lat, 'take')} s, wake "
        f"{_latency(lat, 'wake')} s, hold {_latency(lat, 'hold')} s"
    )


def _latency(latency: dict[str, LatencyValue], name: str) -> str:
    """As the file has it: seconds, or the distribution's JSON object."""
    value = latency.get(name)
    return str(value.as_written() if isinstance(value, LatencyDistribution) else value)


def _worker_text(side: SideReport, entry: ScenarioResult) -> str:
    if entry.simulated:  # --target sim; a runpod worker ran as its model, which it names
        model = "" if entry.params.worker == "model" else f" as model {entry.simulated}"
        return f"{side.label}: {entry.worker}, simulated in virtual time{model}"
    return f"{side.label}: {entry.worker}"


def _section(
    sides: Sequence[SideReport], entries: list[ScenarioResult], row: Row | None, budget: Budget
) -> str:
    entry = entries[0]
    used = sides[: len(entries)]
    two = len(used) == 2
    head = (
        f'<section id="{_slug(entry.name)}"><h2>{escape(entry.name)}</h2><p class="params">'
        f"{escape(_params_line(entry))}<br>"
        f"{escape('; '.join(_worker_text(s, e) for s, e in zip(used, entries)))}</p>"
    )
    if not any(e.reps for e in entries):
        return f'{head}<p class="note missing">No rep of this scenario ran.</p></section>'
    labels = [s.key for s in used] if two else [""]
    facts = "".join(html_tables.facts(e, s.label if two else "") for s, e in zip(used, entries))
    resilience = "".join(
        f"<h4>{escape(s.label)}</h4>{table}" if two else table
        for s, e in zip(used, entries)
        if (table := html_tables.resilience_table(e))
    )
    extra = f'<div class="scroll">{resilience}</div>' if resilience else ""
    scene = Scene(
        entry.name,
        _slug(entry.name),
        entry.params.slots or 1,
        _ideal(entry),
        row.gated if row is not None else gated_metric(None, entry),
    )
    return (
        f'{head}<div class="tables"><div class="scroll">'
        f"{html_tables.summary_table(entries, labels)}</div>"
        f'<div class="factrow">{facts}</div></div>{extra}'
        f"{every_rep(used, _strips(used, entries, row), scene, budget)}"
        f"{_steady_plots(used, entries)}{_plots(used, entries)}</section>"
    )


def _strips(
    sides: Sequence[SideReport], entries: list[ScenarioResult], row: Row | None
) -> list[StripSide]:
    """The strip's rows: a comparison's sides with the reps its gate set aside, or the one."""
    excluded = row.metrics[row.gated].excluded if row is not None else []
    return [
        StripSide(
            s.key or s.doc.label,
            s.cls,
            e,
            {x.rep: x.reason for x in excluded if x.side == s.key},
        )
        for s, e in zip(sides, entries)
    ]


def _plots(sides: Sequence[SideReport], entries: list[ScenarioResult]) -> str:
    name = entries[0].name
    notes = "".join(
        f'<p class="note missing">{escape(s.label)}: no plots: '
        f"{escape(s.note or 'no events for this scenario')}</p>"
        for s in sides
        if s.plotted(name) is None
    )
    pairs = [(s, e, series) for s, e in zip(sides, entries) if (series := s.plotted(name))]
    if not pairs:
        return notes
    plotted = [Plotted(s.cls, s.label, series) for s, _, series in pairs]
    rep_texts = [f"rep {s.reps.get(name)} of {len(e.reps)}" for s, e, _ in pairs]
    x_max = _x_max(plotted, entries[0].ideal_s)
    slots = entries[0].params.slots or 1
    timelines = [timeline(p, slots, x_max, text) for p, text in zip(plotted, rep_texts)]
    fleets = _fleet_timelines(sides, entries, x_max)
    figures = [
        *([("Fleet", _pair(fleets))] if fleets else []),
        ("Slot timeline", _pair(timelines)),
        ("Completion", _figure(charts.completion(plotted, _ideal(entries[0]), x_max))),
        ("Queue depth", _figure(charts.queue_depth(plotted, x_max))),
        ("Take sizes", _figure(charts.take_sizes(plotted, x_max))),
        ("Take latencies", _figure(charts.take_latencies(plotted, x_max))),
        ("End-to-end latency", _figure(charts.e2e_cdf(plotted))),
    ]
    slug = _slug(name)
    blocks = "".join(
        f'<h4 class="fig" id="{slug}-{_slug(t)}">{escape(t)}</h4>{html}' for t, html in figures
    )
    which = "; ".join(f"{p.label}: {text}" for p, text in zip(plotted, rep_texts))
    return (
        f'{notes}<h3 id="{slug}-plots">Where the time went in one rep</h3><p class="note">'
        f"{escape(which)}; every other rep's timeline and completion curve are under Every rep "
        f"above, and <code>--rep N</code> draws all of these for rep N.</p>{blocks}"
    )


def _fleet_timelines(
    sides: Sequence[SideReport], entries: list[ScenarioResult], x_max: float
) -> list[Figure]:
    """An autoscaled fleet's timeline per side (render/page/fleet_timeline.py), for the plotted
    rep."""
    fleets = []
    for side, entry in zip(sides, entries):
        number = side.plotted_rep(entry.name) or len(entry.reps)
        rep = entry.reps[number - 1] if 0 < number <= len(entry.reps) else None
        if rep is not None and rep.fleet is not None:
            text = f"rep {number} of {len(entry.reps)}"
            fleets.append(fleet_timeline(FleetSide(side.cls, side.label, rep.fleet, text), x_max))
    return fleets


def _steady_plots(sides: Sequence[SideReport], entries: list[ScenarioResult]) -> str:
    """An arrival profile's rep over time (render/page/steady_charts.py), from the result alone:
    the rep the other plots show, else the last; nothing for a burst."""
    name = entries[0].name
    shown: list[SteadySide] = []
    texts = []
    for side, entry in zip(sides, entries):
        number = side.plotted_rep(name) or len(entry.reps)
        steady = entry.reps[number - 1].steady if 0 < number <= len(entry.reps) else None
        if steady is not None and steady.windows:
            shown.append(SteadySide(side.cls, side.label, steady))
            texts.append(f"{side.label}: rep {number} of {len(entry.reps)}")
    if not shown:
        return ""
    figures = [
        ("Latency over time", steady_charts.latency(shown)),
        ("Queue depth and held jobs over time", steady_charts.depth(shown)),
        ("Spread across workers over time", steady_charts.spread(shown)),
    ]
    slug = _slug(name)
    blocks = "".join(
        f'<h4 class="fig" id="{slug}-{_slug(t)}">{escape(t)}</h4>{_figure(fig)}'
        for t, fig in figures
        if fig is not None
    )
    return (
        f'<h3 id="{slug}-steady">Steady state over time</h3><p class="note">'
        f"{escape('; '.join(texts))}; {escape(STEADY_NOTE)}</p>{blocks}"
    )


STEADY_NOTE = (
    "windows of the arrival profile's rep (docs/load-profiles.md): latencies of the jobs that "
    "ended in each window; the dotted line is where the warm-up ends and the steady part "
    "begins; the ideal is a perfect dispatcher's for the same arrivals"
)


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
