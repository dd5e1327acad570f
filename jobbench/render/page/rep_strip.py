"""Every rep of a scenario at a glance: a strip plot of the gated metric (a row per side, a mark
per rep) with the reps that do not count marked, and the table beside it: each rep's figure, why
it was set aside, and how busy the machine was while it ran."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

from jobbench.measure.stats import median
from jobbench.render.page import svg
from jobbench.render.page.charts import WIDTH, Figure
from jobbench.render.words.cells import fmt
from jobbench.results.model import Anomaly, ScenarioResult
from jobbench.results.model_result import Machine
from jobbench.results.rep_metrics import METRICS
from jobbench.verdict.behaviour import is_measurement

ROW_H = 36.0
JITTER = (0.0, -6.0, 6.0)  # px up or down, by rep number: equal values stay apart


@dataclass(frozen=True)
class RepMark:
    """One rep on the strip: its gated figure and whatever keeps it from counting."""

    rep: int  # from 1
    value: float | None
    anomalies: tuple[str, ...] = ()  # what disturbed the measurement (a saturated queue...)
    partial: str | None = None  # why it was cut short
    outlier: bool = False
    machine: Machine | None = None
    behaviour: tuple[str, ...] = ()  # what its workers did themselves (a stall...): it counts

    @property
    def counted(self) -> bool:
        return not (self.anomalies or self.partial or self.outlier)

    def flags(self) -> str:
        texts = [f"anomalous: {a}" for a in self.anomalies]
        texts += [f"the workers' own, counted: {b}" for b in self.behaviour]
        texts += [f"partial: {self.partial}"] * (self.partial is not None)
        texts += ["outlier"] * self.outlier
        return "; ".join(texts) or "counted"


@dataclass(frozen=True)
class StripSide:
    """One side's reps of the scenario: `key` names its row (A, B or the label), `cls` colours
    it, `set_aside` holds the gate's reasons by rep (a comparison's), if any."""

    key: str
    cls: str
    entry: ScenarioResult
    set_aside: dict[int, str] = field(default_factory=dict)

    def marks(self, metric: str) -> list[RepMark]:
        outliers = set((self.entry.outliers or {}).get(metric, []))
        outliers |= {n for n, why in self.set_aside.items() if why.startswith("outlier")}
        read = METRICS[metric].read
        return [
            RepMark(
                number,
                _number(read(rep)),
                tuple(anomaly_text(a) for a in rep.anomalies or [] if is_measurement(a.kind)),
                rep.partial,
                number in outliers,
                rep.machine,
                tuple(anomaly_text(a) for a in rep.anomalies or [] if not is_measurement(a.kind)),
            )
            for number, rep in enumerate(self.entry.reps, start=1)
        ]


def _number(value: float | None) -> float | None:
    return None if value is None else float(value)


def anomaly_text(anomaly: Anomaly) -> str:
    if anomaly.kind != "stall":
        return anomaly.kind
    gone = "" if anomaly.resumed else ", never came back"
    return (
        f"stall of {anomaly.worker} for {fmt(anomaly.for_s, 's')} from {fmt(anomaly.at_s, 's')}"
        f"{gone}"
    )


def machine_text(machine: Machine | None) -> str:
    """`52% busy of 2 CPUs, load 0.61 -> 1.12`; `-` for a rep that did not record it."""
    if machine is None:
        return "-"
    cpus = f" of {machine.cpus} CPUs" if machine.cpus else ""
    busy = "-" if machine.cpu_busy is None else f"{machine.cpu_busy:.0%}"
    start, end = (_load(v) for v in (machine.load1_start, machine.load1_end))
    return f"{busy} busy{cpus}, load {start} \u2192 {end}"


def _load(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _range(values: Sequence[float]) -> tuple[float, float]:
    lo, hi = min(values, default=0.0), max(values, default=1.0)
    pad = (hi - lo) * 0.08 or abs(hi) * 0.05 or 1.0
    return max(0.0, lo - pad), hi + pad


def strip(sides: Sequence[StripSide], metric: str) -> Figure:
    """A row per side, a mark per rep at its figure; the counted reps' median as a tick."""
    marks = [side.marks(metric) for side in sides]
    values = [m.value for row in marks for m in row if m.value is not None]
    lo, hi = _range(values)
    counts = _counts([m for row in marks for m in row])
    items = [
        ("pt", f"counted ({counts[0]})", "circle"),
        ("pt ring", f"outlier ({counts[1]})", "circle"),
        ("pt ring", f"partial ({counts[2]})", "diamond"),
        ("anom", f"anomalous ({counts[3]})", "cross"),
        ("med", "median of the counted reps", "tick"),
    ]
    extra = (svg.legend_rows(items, 64, WIDTH - 16) - 1) * svg.LEGEND_ROW
    top = 30 + extra
    bottom = top + ROW_H * len(sides) + 4
    f = svg.Frame(WIDTH, round(bottom + 36), x_max=hi, y_max=1.0, x_min=lo, top=round(top))
    label = f"{METRICS[metric].label}, s, per rep (the axis starts at {lo:.3g} s, not 0)"
    body = [svg.x_axis(f, label, bottom)]
    for index, (side, row) in enumerate(zip(sides, marks)):
        mid = top + ROW_H * index + ROW_H / 2
        body.append(svg.text(f.left - 8, mid + 4, svg.fit(side.key, f.left - 12), anchor="end"))
        body += _row_marks(f, row, mid, side.cls)
    body.append(svg.legend(items, f.left, 16, f.width - f.right))
    title = f"every rep: {METRICS[metric].label}, set-aside reps marked"
    missing = [
        f"{s.key} rep {m.rep}" for s, row in zip(sides, marks) for m in row if m.value is None
    ]
    notes = [f"no figure to draw for {', '.join(missing)}"] if missing else []
    return Figure(svg.document(f.width, f.height, title, "".join(body)), notes)


def _counts(marks: Sequence[RepMark]) -> tuple[int, int, int, int]:
    return (
        sum(m.counted for m in marks),
        sum(m.outlier for m in marks),
        sum(m.partial is not None for m in marks),
        sum(bool(m.anomalies) for m in marks),
    )


def _row_marks(f: svg.Frame, row: Sequence[RepMark], mid: float, cls: str) -> list[str]:
    at = {m.rep: (f.x(m.value), mid + JITTER[m.rep % 3]) for m in row if m.value is not None}
    drawn = [m for m in row if m.rep in at]
    counted = [at[m.rep] for m in drawn if m.counted]
    rings = [at[m.rep] for m in drawn if not m.counted and m.partial is None]
    diamonds = [at[m.rep] for m in drawn if m.partial is not None]
    crosses = [at[m.rep] for m in drawn if m.anomalies]
    parts = [
        svg.path(svg.circles_d(counted), f"pt {cls}"),
        svg.path(svg.circles_d(rings), f"pt ring {cls}"),
        svg.path(svg.diamonds_d(diamonds), f"pt ring {cls}"),
        svg.path(svg.crosses_d(crosses), "anom"),
    ]
    values = [m.value for m in drawn if m.counted and m.value is not None]
    if values:
        x = f.x(median(values))
        parts.append(svg.line(x, mid - ROW_H / 2 + 3, x, mid + ROW_H / 2 - 3, f"med {cls}"))
    for m in drawn:  # the reps that do not count are named
        if not m.counted:
            x, y = at[m.rep]
            parts.append(svg.fitted_text(x, y - 8, str(m.rep), f.width, "lab small", "middle"))
    return parts


def rep_table(sides: Sequence[StripSide], metric: str, links: dict[int, str]) -> str:
    """A row per rep number: per side its figure, its flags and the machine's load; the rep
    number links to its plots (`links`: rep -> fragment)."""
    marks = [side.marks(metric) for side in sides]
    count = max((len(row) for row in marks), default=0)
    name = METRICS[metric].label
    groups = "".join(f'<th colspan="3">{escape(side.key)}</th>' for side in sides)
    subs = "".join(f"<th>{escape(name)}</th><th>flags</th><th>machine</th>" for _ in sides)
    rows = []
    for number in range(1, count + 1):
        link = links.get(number)
        rep = f'<a href="#{escape(link)}">{number}</a>' if link else str(number)
        cells = [f"<td>{rep}</td>"]
        for row in marks:
            mark = row[number - 1] if number <= len(row) else None
            cells.append(_side_cells(mark))
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return (
        '<table class="num reps"><caption>every rep: the gated figure, why a rep does not '
        f'count, the machine\'s load while it ran</caption><thead><tr><th rowspan="2">rep</th>'
        f"{groups}</tr><tr>{subs}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _side_cells(mark: RepMark | None) -> str:
    if mark is None:
        return '<td>-</td><td class="txt">-</td><td class="txt">-</td>'
    flag_cls = "txt" if mark.counted else "txt warn"
    return (
        f'<td>{escape(fmt(mark.value, "s"))}</td><td class="{flag_cls}">{escape(mark.flags())}'
        f'</td><td class="txt">{escape(machine_text(mark.machine))}</td>'
    )
