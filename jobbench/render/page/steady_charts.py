"""An arrival profile's rep over time, from its `steady` windows (measure/steady.py):
end-to-end latency per window beside the ideal dispatcher's, the queue depth with the jobs in
take-ahead buffers and those held while a slot was free elsewhere, and the spread of jobs
across workers (each window's most and fewest deliveries to one worker). One or two sides on
the same axes, as charts.py draws a burst's rep."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from jobbench.render.page import svg
from jobbench.render.page.charts import WIDTH, Figure, Legend, frame, plot_legend
from jobbench.results.model import Steady


@dataclass(frozen=True)
class SteadySide:
    cls: str  # a or b
    label: str
    steady: Steady


def _x_max(sides: Sequence[SteadySide]) -> float:
    ends = [s.steady.windows[-1].start_s + s.steady.window_s for s in sides if s.steady.windows]
    return float(max([*ends, 0.001]))


def _mid(steady: Steady, k: int) -> float:
    return float(steady.windows[k].start_s + steady.window_s / 2)


def _polyline(f: svg.Frame, points: list[svg.Point], cls: str) -> str:
    return svg.path(svg.polyline_d(f.xy(points)), cls) if points else ""


def _warmup_mark(f: svg.Frame, side: SteadySide) -> str:
    x = f.x(float(side.steady.warmup_s))
    return svg.line(x, f.top, x, f.top + f.inner_h, f"mark {side.cls}")


def latency(sides: Sequence[SteadySide]) -> Figure:
    """e2e p99 (solid) and p50 (dashed) of the jobs that ended in each window; the ideal
    dispatcher's steady p99 as a dashed level; the warm-up's end as a dotted mark."""
    values = [
        float(v)
        for s in sides
        for w in s.steady.windows
        for v in (w.e2e_p50_s, w.e2e_p99_s)
        if v is not None
    ]
    ideal = [float(s.steady.ideal_e2e_p99_s) for s in sides if s.steady.ideal_e2e_p99_s]
    items: Legend = [(f"ln {s.cls}", f"{s.label}: e2e p99", "line") for s in sides]
    items += [(f"mark {s.cls}", f"{s.label}: e2e p50", "line") for s in sides]
    if ideal:
        items.append(("ln ideal", "ideal dispatcher: steady p99", "line"))
    f = frame(260, items, _x_max(sides), max([*values, *ideal, 0.001]) * 1.08)
    body = [svg.axes(f, "seconds from the first submit", "end-to-end latency, s")]
    for side in sides:
        st = side.steady
        for key, cls in (("e2e_p99_s", "ln"), ("e2e_p50_s", "mark")):
            points = [
                (_mid(st, k), float(v))
                for k, w in enumerate(st.windows)
                if (v := getattr(w, key)) is not None
            ]
            body.append(_polyline(f, points, f"{cls} {side.cls}"))
        body.append(_warmup_mark(f, side))
        if st.ideal_e2e_p99_s:
            y = f.y(float(st.ideal_e2e_p99_s))
            body.append(svg.line(f.left, y, f.left + f.inner_w, y, "ln ideal"))
    body.append(plot_legend(f, items))
    title = f"latency over time: {sides[0].steady.window_s:g} s windows, warm-up marked"
    return Figure(svg.document(f.width, f.height, title, "".join(body)))


def depth(sides: Sequence[SteadySide]) -> Figure:
    """Queue depth at each window's end (solid), mean jobs in take-ahead buffers (dashed) and
    the jobs that left a buffer after waiting while a slot was free elsewhere (dots); the last
    two only where the queue's log gave them (not at a live endpoint)."""
    values = [
        float(v)
        for s in sides
        for w in s.steady.windows
        for v in (w.queue_depth, w.buffered, w.held_jobs)
        if v is not None
    ]
    items: Legend = [(f"ln {s.cls}", f"{s.label}: queued", "line") for s in sides]
    slotted = [s for s in sides if any(w.buffered is not None for w in s.steady.windows)]
    items += [(f"mark {s.cls}", f"{s.label}: in buffers (mean)", "line") for s in slotted]
    items += [(f"dot {s.cls}", f"{s.label}: held while a slot was free", "dot") for s in slotted]
    f = frame(240, items, _x_max(sides), max([*values, 1.0]) * 1.08)
    body = [svg.axes(f, "seconds from the first submit", "jobs")]
    for side in sides:
        st = side.steady
        ends = [(float(w.start_s + st.window_s), float(w.queue_depth)) for w in st.windows]
        body.append(_polyline(f, ends, f"ln {side.cls}"))
        buffered = [
            (_mid(st, k), float(w.buffered)) for k, w in enumerate(st.windows) if w.buffered
        ]
        body.append(_polyline(f, buffered, f"mark {side.cls}"))
        held = [(_mid(st, k), float(w.held_jobs)) for k, w in enumerate(st.windows) if w.held_jobs]
        body.append(svg.path(svg.dots_d(f.xy(held)), f"dot {side.cls}"))
    body.append(plot_legend(f, items))
    title = "queue depth, buffered and held jobs over time"
    return Figure(svg.document(f.width, f.height, title, "".join(body)))


def spread(sides: Sequence[SteadySide]) -> Figure | None:
    """Each window's most (solid) and fewest (dashed) jobs delivered to one worker: an even
    spread keeps the two close. None when no side has per-worker windows (a live rep)."""
    drawn = [s for s in sides if any(w.delivered for w in s.steady.windows)]
    if not drawn:
        return None
    top = max(max(w.delivered or [0]) for s in drawn for w in s.steady.windows)
    items: Legend = [(f"ln {s.cls}", f"{s.label}: most to one worker", "line") for s in drawn]
    items += [(f"mark {s.cls}", f"{s.label}: fewest", "line") for s in drawn]
    f = frame(220, items, _x_max(drawn), max(top, 1) * 1.08)
    body = [svg.axes(f, "seconds from the first submit", "jobs delivered per worker")]
    for side in drawn:
        st = side.steady
        for pick, cls in ((max, "ln"), (min, "mark")):
            points = [
                (_mid(st, k), float(pick(w.delivered)))
                for k, w in enumerate(st.windows)
                if w.delivered
            ]
            body.append(_polyline(f, points, f"{cls} {side.cls}"))
    body.append(plot_legend(f, items))
    title = "spread across workers over time"
    return Figure(svg.document(WIDTH, f.height, title, "".join(body)))
