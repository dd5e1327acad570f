"""The per-worker slot timeline: busy spans (deliver -> done) per slot row, takes above them.

Each worker gets a take track (a take in flight from `arrived` to its answer `t`, a tick where
it arrived and a triangle where it was answered) over its slot rows, so the gap between a batch
finishing and the next one being delivered (the take gap) is visible as white space.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from jobbench.measure.series import RepSeries, Take
from jobbench.render.page import svg, thinning
from jobbench.render.page.charts import WIDTH, Figure, Plotted
from jobbench.render.page.slot_rows import Row, count_over_time, merge_close, slot_rows

MAX_ROWS = 320  # slot rows drawn at most; past this only the first workers are shown
TRACK = 12.0  # px of a worker's take track
GAP = 8.0  # px between workers
HELD = 22.0  # px of a worker's held band (jobs delivered, waiting for a slot)


@dataclass(frozen=True)
class _Worker:
    name: str
    rows: list[Row]  # `slots` rows of running spans (more if jobs overlapped past the slots)
    held: list[tuple[float, int]]  # jobs delivered while every slot was busy, over time
    takes: list[Take]
    jobs: int

    def height(self, row_h: float) -> float:
        return TRACK + len(self.rows) * row_h + (HELD if self.held else 0.0) + GAP


def short_names(workers: Sequence[str]) -> dict[str, str]:
    """`4w-1024j-0.5s-w3` -> `w3` when the tails stay unique."""
    tails = {w: w.rsplit("-", 1)[-1] for w in workers}
    return tails if len(set(tails.values())) == len(tails) else {w: w for w in workers}


def _workers(series: RepSeries, slots: int, x_max: float) -> list[_Worker]:
    out = []
    for name in series.workers:
        spans = [s for s in series.spans if s.worker == name]
        takes = [t for t in series.takes if t.worker == name and t.answered >= 0]
        rows, held = slot_rows(spans, slots, x_max)
        out.append(_Worker(name, rows, count_over_time(held), takes, len(spans)))
    return out


def _shown(workers: list[_Worker]) -> list[_Worker]:
    shown: list[_Worker] = []
    rows = 0.0
    for worker in workers:
        need = len(worker.rows)
        if shown and rows + need > MAX_ROWS:
            break
        shown.append(worker)
        rows += need
    return shown


def timeline(side: Plotted, slots: int, x_max: float, rep_text: str) -> Figure:
    workers = _workers(side.series, slots, x_max)
    shown = _shown(workers)
    total_rows = sum(len(w.rows) for w in shown) or 1
    row_h = max(1.5, min(10.0, 420 / total_rows))
    height = 34 + sum(w.height(row_h) for w in shown) + 40
    f = svg.Frame(WIDTH, round(height), x_max=x_max, y_max=1.0, left=110, top=34)
    body = [_x_axis(f)]
    names = short_names([w.name for w in workers])
    y = float(f.top)
    merged = False
    for worker in shown:
        parts, y, cut = _worker_block(f, worker, y, row_h, side.cls, names[worker.name])
        body += parts
        merged = merged or cut
    body.append(_legend(f, side, any(w.held for w in shown)))
    notes = [f"{side.label}: {rep_text}"]
    if len(shown) < len(workers):
        notes.append(f"showing the first {len(shown)} of {len(workers)} workers")
    if any(w.held for w in shown):
        notes.append(
            "held: jobs delivered while every slot was busy (take-ahead), waiting for the "
            "earliest slot to free; their slot spans start there (inferred) and end at done"
        )
    if merged:
        notes.append("busy spans of a row less than 1 px apart drawn as one bar")
    title = f"slot timeline of {side.label}: busy spans per slot, takes per worker"
    return Figure(svg.document(f.width, f.height, title, "".join(body)), notes)


def _bars(f: svg.Frame, rows: list[Row], y: float, row_h: float) -> tuple[list[svg.Rect], bool]:
    bars: list[svg.Rect] = []
    gap = (f.x_max - f.x_min) / f.inner_w
    merged = False
    inset = 0.15 * row_h if row_h >= 3 else 0.0
    for index, row in enumerate(rows):
        joined, cut = merge_close(row, gap)
        merged = merged or cut
        top = y + index * row_h + inset
        bars += [(f.x(a), top, f.x(b) - f.x(a), row_h - 2 * inset) for a, b in joined]
    return bars, merged


def _worker_block(
    f: svg.Frame, w: _Worker, y: float, row_h: float, cls: str, name: str
) -> tuple[list[str], float, bool]:
    parts = [_row_label(f, y + TRACK - 2, f"{name} takes")]
    parts += _take_marks(f, w.takes, y + TRACK / 2)
    y += TRACK
    slots_h = len(w.rows) * row_h
    label_y = y + min(slots_h, 24) / 2 + 4
    parts.append(_row_label(f, label_y, f"{w.jobs} jobs"))
    parts.append(
        f'<rect class="lane" x="{f.left}" y="{svg.num(y)}" '
        f'width="{svg.num(f.inner_w)}" height="{svg.num(slots_h)}"/>'
    )
    busy, merged = _bars(f, w.rows, y, row_h)
    parts.append(svg.path(svg.bars_d(busy), f"busy {cls}"))
    if w.held:
        parts += _held_band(f, w.held, y + slots_h, cls)
    return parts, y + w.height(row_h) - TRACK, merged


def _held_band(f: svg.Frame, held: list[tuple[float, int]], top: float, cls: str) -> list[str]:
    """Jobs held in the worker over time, as an area scaled to the band's height."""
    most = max(n for _, n in held) or 1
    base = top + HELD - 3
    points = [(f.x(t), base - n / most * (HELD - 6)) for t, n in held]
    px, _ = thinning.thin(svg.step_points(points))
    d = svg.polyline_d([(px[0][0], base), *px, (px[-1][0], base)]) + "z" if px else ""
    label = _row_label(f, top + HELD / 2 + 4, f"held, max {most}")
    return [label, svg.path(d, f"busy held-bar {cls}")]


def _row_label(f: svg.Frame, y: float, body: str) -> str:
    """A label left of the rows, cut to the margin (a worker name that is not shortened)."""
    return svg.text(f.left - 8, y, svg.fit(body, f.left - 12, "lab small"), "lab small", "end")


def _take_marks(f: svg.Frame, takes: list[Take], mid: float) -> list[str]:
    flight: list[svg.Rect] = []
    empty: list[svg.Rect] = []
    arrived: list[svg.Point] = []
    answered: list[svg.Point] = []
    for take in takes:
        start = f.x(max(take.arrived, f.x_min))
        end = f.x(min(take.answered, f.x_max))
        (empty if take.got == 0 else flight).append((start, mid - 1.5, end - start, 3.0))
        if take.arrived >= f.x_min:
            arrived.append((start, mid))
        answered.append((end, mid + 1))
    return [
        svg.path(svg.bars_d(flight), "inflight"),
        svg.path(svg.bars_d(empty), "inflight empty"),
        svg.path(svg.ticks_d(arrived, 9), "arrive"),
        svg.path(svg.triangles_d(answered), "answer"),
    ]


def _x_axis(f: svg.Frame) -> str:
    return svg.x_axis(f, "seconds from burst start", f.height - f.bottom + 4)


def _legend(f: svg.Frame, side: Plotted, held: bool) -> str:
    items = [
        (f"busy {side.cls}", "busy: deliver to done", "box"),
        *[(f"busy held-bar {side.cls}", "held, waiting for a slot", "box")] * held,
        ("inflight", "take in flight", "box"),
        ("arrive", "take arrived", "tick"),
        ("answer", "take answered", "tri"),
    ]
    return svg.legend(items, f.left, 20, f.width - f.right)
