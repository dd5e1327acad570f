"""The report's line and scatter plots: completion, queue depth, takes, end-to-end CDF.

Each takes one or two sides (A and B of a comparison on the same axes) and returns the SVG and
notes saying what was downsampled. Anything finer than a pixel is thinned, never dropped
silently. The slot timeline is in timeline.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from jobbench.measure.series import RepSeries
from jobbench.render.page import svg, thinning
from jobbench.render.words.cells import fmt

WIDTH = 960
CDF_POINTS = 2000


@dataclass(frozen=True)
class Plotted:
    """One side's series of one scenario: `cls` is its colour class (a or b)."""

    cls: str
    label: str
    series: RepSeries


@dataclass(frozen=True)
class Ideal:
    """The limit of docs/latency-model.md: a full wave of slots every job length."""

    ideal_s: float
    job_s: float
    per_wave: int
    burst: int

    def staircase(self) -> list[svg.Point]:
        if self.per_wave < 1 or self.job_s <= 0:
            return []
        waves = math.ceil(self.burst / self.per_wave)
        first = self.ideal_s - waves * self.job_s
        points = [(0.0, 0.0)]
        points += [
            (first + k * self.job_s, float(min(self.burst, k * self.per_wave)))
            for k in range(1, waves + 1)
        ]
        return points


@dataclass
class Figure:
    svg: str
    notes: list[str] = field(default_factory=list)


Legend = list[tuple[str, str, str]]  # (css class, label, swatch) per item


def _line_items(sides: Sequence[Plotted], extra: Sequence[tuple[str, str, str]] = ()) -> Legend:
    return [(f"ln {s.cls}", s.label, "line") for s in sides] + list(extra)


def frame(height: int, items: Legend, x_max: float, y_max: float) -> svg.Frame:
    """A plot `height` px tall plus a row per legend row past the first: a long legend wraps
    above the plot, never past the picture's right edge."""
    extra = round((svg.legend_rows(items, 64, WIDTH - 16) - 1) * svg.LEGEND_ROW)
    return svg.Frame(WIDTH, height + extra, x_max=x_max, y_max=y_max, top=30 + extra)


def plot_legend(f: svg.Frame, items: Legend, x: float | None = None) -> str:
    return svg.legend(items, f.left if x is None else x, 16, f.width - f.right)


def _step_line(f: svg.Frame, points: list[svg.Point], cls: str) -> tuple[str, bool]:
    px, thinned = thinning.thin(f.xy(points))
    return svg.path(svg.polyline_d(svg.step_points(px)), cls), thinned


def _thin_note(thinned: bool, what: str) -> list[str]:
    return [f"{what}: points closer than 1 px thinned to each pixel column's extremes"] * thinned


def completion(sides: Sequence[Plotted], ideal: Ideal | None, x_max: float) -> Figure:
    y_max = max([s.series.submitted for s in sides] + [1])
    extra = [("ln ideal", "ideal (the limit)", "line")] if ideal is not None else []
    items = _line_items(sides, extra)
    f = frame(300, items, x_max, y_max * 1.04)
    body = [svg.axes(f, "seconds from burst start", "jobs done")]
    thinned = False
    if ideal is not None:
        stairs = ideal.staircase()
        if stairs:
            body.append(_step_line(f, stairs, "ln ideal")[0])
        x = f.x(ideal.ideal_s)
        body.append(svg.line(x, f.top, x, f.top + f.inner_h, "ln ideal"))
        label = f"ideal {ideal.ideal_s:.3f} s"
        body.append(svg.fitted_text(x + 4, f.top + f.inner_h - 6, label, f.width))
    for side in sides:
        points = [(0.0, 0.0)] + [(t, i + 1.0) for i, t in enumerate(side.series.done)]
        line, cut = _step_line(f, points, f"ln {side.cls}")
        body.append(line)
        thinned = thinned or cut
    body.append(plot_legend(f, items))
    title = "completion: jobs done over time, with the ideal"
    return Figure(
        svg.document(f.width, f.height, title, "".join(body)), _thin_note(thinned, "curve")
    )


def queue_depth(sides: Sequence[Plotted], x_max: float) -> Figure:
    y_max = max([d for s in sides for _, d in s.series.queue] + [1])
    items = _line_items(sides)
    f = frame(220, items, x_max, y_max * 1.05)
    body = [svg.axes(f, "seconds from burst start", "jobs queued")]
    thinned = False
    for side in sides:
        points = [(t, float(d)) for t, d in side.series.queue if t <= x_max]
        line, cut = _step_line(f, points, f"ln {side.cls}")
        body.append(line)
        thinned = thinned or cut
    body.append(plot_legend(f, items))
    title = "queue depth: submitted minus claimed"
    return Figure(
        svg.document(f.width, f.height, title, "".join(body)), _thin_note(thinned, "curve")
    )


def take_sizes(sides: Sequence[Plotted], x_max: float) -> Figure:
    y_max = max([max(t.got, t.asked) for s in sides for t in s.series.takes] + [1])
    items = _dot_items(sides)
    f = frame(220, items, x_max, y_max * 1.1)
    body = [svg.axes(f, "answered at, seconds from burst start", "jobs per take")]
    merged = False
    for side in sides:
        values = [(t.answered, float(t.got)) for t in side.series.takes if t.answered <= x_max]
        points, cut = thinning.dedupe(f.xy(values))
        merged = merged or cut
        body.append(svg.path(svg.dots_d(points), f"dot {side.cls}"))
    body.append(plot_legend(f, items))
    title = "take sizes: jobs got per take"
    notes = ["takes on the same pixel drawn once"] * merged
    return Figure(svg.document(f.width, f.height, title, "".join(body)), notes)


def take_latencies(sides: Sequence[Plotted], x_max: float) -> Figure:
    """Answered minus arrived. A take that was already waiting when the burst came (a long
    poll) would flatten the scale, so the axis stops at the slowest take that arrived after
    burst start and those above it sit on the top edge as triangles."""
    takes = [t for s in sides for t in s.series.takes if t.answered <= x_max]
    inside = [t.latency for t in takes if t.arrived >= 0] or [t.latency for t in takes]
    y_max = max([*inside, 0.001]) * 1.1
    items = _dot_items(sides)
    f = frame(220, items, x_max, y_max)
    body = [svg.axes(f, "answered at, seconds from burst start", "take latency, s")]
    merged, over = False, []
    for side in sides:
        mine = [t for t in side.series.takes if t.answered <= x_max]
        points, cut = thinning.dedupe(
            f.xy((t.answered, t.latency) for t in mine if t.latency <= y_max)
        )
        high = [(f.x(t.answered), f.top + 4.0) for t in mine if t.latency > y_max]
        over += [t.latency for t in mine if t.latency > y_max]
        merged = merged or cut
        body.append(svg.path(svg.dots_d(points), f"dot {side.cls}"))
        body.append(svg.path(svg.up_triangles_d(high), f"dot {side.cls}"))
    body.append(plot_legend(f, items))
    notes = ["takes on the same pixel drawn once"] * merged
    if over:
        notes.append(
            f"{len(over)} take(s) long-polling since before the burst (up to {max(over):.3f} s) "
            "drawn as triangles on the top edge"
        )
    title = "take latencies: answered minus arrived"
    return Figure(svg.document(f.width, f.height, title, "".join(body)), notes)


def _dot_items(sides: Sequence[Plotted]) -> Legend:
    return [(f"dot {s.cls}", s.label, "dot") for s in sides]


def _cdf_points(values: Sequence[float]) -> tuple[list[svg.Point], bool]:
    n = len(values)
    if n <= CDF_POINTS:
        return [(v, (i + 1) / n) for i, v in enumerate(values)], False
    picks = sorted({round(k * (n - 1) / (CDF_POINTS - 1)) for k in range(CDF_POINTS)})
    return [(values[i], (i + 1) / n) for i in picks], True


def e2e_cdf(sides: Sequence[Plotted]) -> Figure:
    x_max = max([v for s in sides for v in s.series.e2e[-1:]] + [0.001]) * 1.04
    items = [
        (
            f"ln {s.cls}",
            f"{s.label}: p50 {fmt(s.series.p(50), 's')}, p99 {fmt(s.series.p(99), 's')}",
            "line",
        )
        for s in sides
    ]
    f = frame(280, items, x_max, 1.0)
    body = [svg.axes(f, "end-to-end latency, s", "fraction of jobs", lambda v: f"{v:.0%}")]
    sampled = False
    for index, side in enumerate(sides):
        points, cut = _cdf_points(side.series.e2e)
        sampled = sampled or cut
        px, _ = thinning.thin(f.xy([(points[0][0], 0.0), *points] if points else []))
        body.append(svg.path(svg.polyline_d(svg.step_points(px)), f"ln {side.cls}"))
        for pct in (50, 99):
            value = side.series.p(pct)
            if value is None:
                continue
            x = f.x(value)
            body.append(svg.line(x, f.top, x, f.top + f.inner_h, f"mark {side.cls}"))
            y = f.top + 12 + 14 * index
            body.append(svg.fitted_text(x + 3, y, f"p{pct}", f.width, "lab small"))
    body.append(plot_legend(f, items))
    notes = [f"sampled at {CDF_POINTS} evenly spaced ranks (p50/p99 marks are exact)"] * sampled
    title = "end-to-end latency CDF with p50 and p99"
    return Figure(svg.document(f.width, f.height, title, "".join(body)), notes)
