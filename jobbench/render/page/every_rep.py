"""A scenario's "every rep" block: the strip of the gated metric and the rep table
(rep_strip.py), then a collapsed <details> per rep with its slot timelines and completion curve,
on axes shared by every rep of the scenario so reps compare at a glance. No script: the
browser opens a <details> on a click, or when the rep table's link points into it.

Slot timelines are the page's heavy part (~280 kB for a 10,000-job rep), so the other reps'
timelines share a budget; past it a rep's block says how to draw its timeline alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Protocol

from jobbench.measure.series import RepSeries
from jobbench.render.page import charts
from jobbench.render.page.charts import Figure, Ideal, Plotted
from jobbench.render.page.rep_strip import StripSide, rep_table, strip
from jobbench.render.page.timeline import timeline
from jobbench.render.words.cells import fmt
from jobbench.results.rep_metrics import METRICS

TIMELINE_BUDGET = 1_500_000  # characters of the other reps' slot timelines on one page


class PlottedSide(Protocol):
    """What this block needs of a side it plots (html.SideReport): its names, and each rep's
    series from its events file."""

    @property
    def key(self) -> str: ...
    @property
    def cls(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def source_label(self) -> str: ...
    def rep_series(self, scenario: str, rep: int) -> RepSeries | None: ...
    def plotted_rep(self, scenario: str) -> int | None: ...
    def has_events(self, scenario: str) -> bool: ...


@dataclass
class Budget:
    left: int = TIMELINE_BUDGET


@dataclass(frozen=True)
class Scene:
    """One scenario as the block draws it: its name, anchor, slots and ideal."""

    name: str
    slug: str
    slots: int
    ideal: Ideal | None
    metric: str


def every_rep(
    sides: Sequence[PlottedSide], strips: Sequence[StripSide], scene: Scene, budget: Budget
) -> str:
    count = max(len(s.entry.reps) for s in strips)
    if not count:
        return ""
    plotted_everywhere = {
        n for n in range(1, count + 1) if all(s.plotted_rep(scene.name) == n for s in sides)
    }
    links = {
        n: f"{scene.slug}-plots" if n in plotted_everywhere else f"{scene.slug}-rep-{n}"
        for n in range(1, count + 1)
    }
    fig = strip(strips, scene.metric)
    x_max = _shared_x_max(sides, scene, count)
    with_events = [s for s in sides if s.has_events(scene.name)]  # else html.py says why
    blocks = [
        _rep_block(with_events, strips, scene, n, x_max, budget)
        for n in range(1, count + 1)
        if n not in plotted_everywhere and with_events
    ]
    return (
        f'<h3 id="{scene.slug}-reps">Every rep</h3><figure>{fig.svg}{_notes(fig)}</figure>'
        f'<p class="note">{escape(_legend_text())}</p>'
        f'<div class="scroll">{rep_table(strips, scene.metric, links)}</div>{"".join(blocks)}'
    )


def _legend_text() -> str:
    return (
        "counted: the rep enters the summary and the verdict; outlier: over 3.5 robust z-scores "
        "from its side's median, set aside by the gate; partial: cut short (a timeout, a dead "
        "worker, a signal); anomalous: something disturbed the measurement (a saturated queue or "
        "driver, a machine busy with other work). What the workers did themselves (a stall, a "
        "core kept busy) is noted and counted. "
        "machine: the share of all CPU time the machine spent busy during the rep (every "
        "process, jobbench's own included) and the 1-minute load average at its start and end."
    )


def _notes(fig: Figure) -> str:
    return "".join(f'<p class="note">{escape(n)}</p>' for n in fig.notes)


def _shared_x_max(sides: Sequence[PlottedSide], scene: Scene, count: int) -> float:
    ends = [
        series.done[-1] if series.done else series.end
        for side in sides
        for n in range(1, count + 1)
        if (series := side.rep_series(scene.name, n)) is not None
    ]
    if scene.ideal is not None:
        ends.append(scene.ideal.ideal_s)
    return max([*ends, 0.001]) * 1.03


def _rep_block(
    sides: Sequence[PlottedSide],
    strips: Sequence[StripSide],
    scene: Scene,
    number: int,
    x_max: float,
    budget: Budget,
) -> str:
    found = [(s, series) for s in sides if (series := s.rep_series(scene.name, number))]
    plotted = [Plotted(s.cls, s.label, series) for s, series in found]
    parts = [_missing(s, number) for s in sides if s.rep_series(scene.name, number) is None]
    for side, p in zip((s for s, _ in found), plotted):
        drawn = timeline(p, scene.slots, x_max, f"rep {number}")
        if len(drawn.svg) <= budget.left:
            budget.left -= len(drawn.svg)
            parts.append(f"<figure>{drawn.svg}{_notes(drawn)}</figure>")
        else:
            parts.append(
                f'<p class="note">{escape(side.label)}: slot timeline left out to keep the page '
                f"small; <code>jobbench report {escape(side.source_label)} --rep {number} --html "
                f"FILE</code> draws it</p>"
            )
    if plotted:
        fig = charts.completion(plotted, scene.ideal, x_max)
        parts.append(f"<figure>{fig.svg}{_notes(fig)}</figure>")
    summary = "; ".join(_rep_line(s, scene.metric, number) for s in strips)
    return (
        f'<details id="{scene.slug}-rep-{number}"><summary>rep {number}: {escape(summary)}'
        f"</summary>{''.join(parts)}</details>"
    )


def _missing(side: PlottedSide, number: int) -> str:
    return f'<p class="note missing">{escape(side.label)}: no events for rep {number}</p>'


def _rep_line(side: StripSide, metric: str, number: int) -> str:
    marks = side.marks(metric)
    if number > len(marks):
        return f"{side.key}: no rep {number}"
    mark = marks[number - 1]
    name = METRICS[metric].label
    return f"{side.key}: {name} {fmt(mark.value, 's')} ({mark.flags()})"
