"""The fleet's timeline (an autoscaled fleet's rep, above the slot timelines): the fleet's size over
time (workers billed), then a row per worker: its cold start (the modelled delay, then its
process booting), polling with its idle spans lighter, its stop (SIGTERM until it exited).
From the result's `fleet` block alone (measure/fleet_figures.py): no events needed."""

from __future__ import annotations

from dataclasses import dataclass

from jobbench.render.page import svg
from jobbench.render.page.charts import WIDTH, Figure
from jobbench.render.page.timeline import short_names
from jobbench.results.model_result import FleetFigures, FleetWorker

SIZE_H = 60.0  # px of the size track
ROW_H = 12.0
MAX_WORKERS = 64  # rows drawn at most


@dataclass(frozen=True)
class FleetSide:
    cls: str  # a or b
    label: str
    fleet: FleetFigures
    rep_text: str


def fleet_timeline(side: FleetSide, x_max: float) -> Figure:
    workers = list(side.fleet.workers.items())[:MAX_WORKERS]
    end = max(float(side.fleet.rest_s), x_max)
    height = 34 + SIZE_H + 10 + len(workers) * ROW_H + 44
    f = svg.Frame(WIDTH, round(height), x_max=end, y_max=1.0, left=110, top=34)
    body = [svg.x_axis(f, "seconds from the rep's first submission", f.height - f.bottom + 4)]
    body += _size_track(f, side)
    names = short_names([w for w, _ in workers])
    y = f.top + SIZE_H + 10
    for worker, life in workers:
        body += _worker_row(f, life, y, side.cls, names[worker], end)
        y += ROW_H
    body.append(svg.legend(_legend(side.cls), f.left, 20, f.width - f.right))
    notes = [f"{side.label}: {side.rep_text}"]
    if len(side.fleet.workers) > len(workers):
        notes.append(f"showing the first {len(workers)} of {len(side.fleet.workers)} workers")
    notes.append(
        "billed from the scale-up decision (an active worker: all along) to its process's exit; "
        "cold start: the modelled delay, then the process starting until its first take"
    )
    title = f"fleet of {side.label}: workers over time"
    return Figure(svg.document(f.width, f.height, title, "".join(body)), notes)


def _legend(cls: str) -> list[tuple[str, str, str]]:
    return [
        ("fleet-cold", "cold start (modelled)", "box"),
        ("fleet-boot", "process starting", "box"),
        (f"busy {cls}", "polling, with jobs", "box"),
        (f"busy held-bar {cls}", "idle (no job)", "box"),
        ("fleet-stop", "stopping", "box"),
    ]


def _size_track(f: svg.Frame, side: FleetSide) -> list[str]:
    size = [(float(t), float(n)) for t, n in side.fleet.size]
    if not size:
        return []
    peak = max(n for _, n in size) or 1.0
    top, base = float(f.top), f.top + SIZE_H - 4
    points = [(f.x(t), base - n / peak * (SIZE_H - 12)) for t, n in size]
    points.append((f.x(f.x_max), points[-1][1]))
    line = svg.path(svg.polyline_d(svg.step_points(points)), f"ln {side.cls}")
    label = f"workers, peak {peak:.0f}"
    return [
        f'<rect class="lane" x="{f.left}" y="{svg.num(top)}" width="{svg.num(f.inner_w)}" '
        f'height="{svg.num(SIZE_H - 4)}"/>',
        svg.text(
            f.left - 8,
            top + SIZE_H / 2,
            svg.fit(label, f.left - 12, "lab small"),
            "lab small",
            "end",
        ),
        line,
    ]


def _worker_row(
    f: svg.Frame, life: FleetWorker, y: float, cls: str, name: str, end: float
) -> list[str]:
    top, h = y + 1.5, ROW_H - 3
    t0 = 0.0 if life.active else _or(life.decided_s, 0.0)
    started = t0 if life.active else _or(life.started_s, t0)
    polling = t0 if life.active else _or(life.polling_s, started)
    stopping, stopped = _maybe(life.stopping_s), _maybe(life.stopped_s)
    alive_end = stopping if stopping is not None else (stopped if stopped is not None else end)
    idle = [(float(a), min(_or(b, alive_end), alive_end)) for a, b in life.idle if a is not None]

    def bar(a: float, b: float | None) -> svg.Rect:
        b = end if b is None else b
        return (f.x(a), top, max(f.x(b) - f.x(a), 0.5), h)

    busy, at = [], polling
    for a, b in sorted(idle):
        if a > at:
            busy.append(bar(at, a))
        at = max(at, b)
    if alive_end > at:
        busy.append(bar(at, alive_end))
    parts = [
        svg.text(
            f.left - 8, y + ROW_H - 3, svg.fit(name, f.left - 12, "lab small"), "lab small", "end"
        )
    ]
    if not life.active:
        parts.append(svg.path(svg.bars_d([bar(t0, started)]), "fleet-cold"))
        parts.append(svg.path(svg.bars_d([bar(started, polling)]), "fleet-boot"))
    parts.append(svg.path(svg.bars_d(busy), f"busy {cls}"))
    parts.append(
        svg.path(svg.bars_d([bar(a, b) for a, b in idle if b > a]), f"busy held-bar {cls}")
    )
    if stopping is not None:
        parts.append(svg.path(svg.bars_d([bar(stopping, stopped)]), "fleet-stop"))
    return parts


def _maybe(value: float | None) -> float | None:
    return None if value is None else float(value)


def _or(value: float | None, default: float) -> float:
    return default if value is None else float(value)
