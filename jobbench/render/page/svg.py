"""Inline-SVG plot primitives: a frame with axes, compact paths, markers, legends.

No dependencies and no styling of their own: every mark carries a CSS class and the page's
stylesheet colours it from CSS variables (light and dark), text uses `currentColor`. Coordinates
are rounded to 0.1 px so a 10,000-job plot stays small.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from html import escape

Point = tuple[float, float]
Rect = tuple[float, float, float, float]  # x, y, width, height in px


def num(value: float) -> str:
    """A coordinate, 0.1 px resolution, no trailing zeros."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


@dataclass(frozen=True)
class Frame:
    """Data ranges mapped onto a plot area inside a `width` x `height` picture."""

    width: int
    height: int
    x_max: float
    y_max: float
    x_min: float = 0.0
    y_min: float = 0.0
    left: int = 64
    right: int = 16
    top: int = 30
    bottom: int = 40

    @property
    def inner_w(self) -> float:
        return float(self.width - self.left - self.right)

    @property
    def inner_h(self) -> float:
        return float(self.height - self.top - self.bottom)

    def x(self, value: float) -> float:
        span = (self.x_max - self.x_min) or 1.0
        return self.left + (value - self.x_min) / span * self.inner_w

    def y(self, value: float) -> float:
        span = (self.y_max - self.y_min) or 1.0
        return self.top + self.inner_h - (value - self.y_min) / span * self.inner_h

    def xy(self, points: Iterable[Point]) -> list[Point]:
        return [(self.x(a), self.y(b)) for a, b in points]


def nice_step(span: float, count: int = 6) -> float:
    raw = (span or 1.0) / count
    power = math.pow(10.0, math.floor(math.log10(raw)))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power  # pragma: no cover - the loop always returns


def ticks(lo: float, hi: float, count: int = 6) -> list[float]:
    step = nice_step(hi - lo, count)
    first = math.ceil(lo / step - 1e-9) * step
    out = []
    value = first
    while value <= hi + step * 1e-6:
        out.append(round(value, 10))
        value += step
    return out


def tick_text(value: float, step: float) -> str:
    """Just enough decimals to tell ticks `step` apart (0.25 -> 2, 0.5 -> 1, 5 -> 0)."""
    decimals = 0
    while decimals < 6 and abs(step * 10**decimals - round(step * 10**decimals)) > 1e-6:
        decimals += 1
    return f"{value:.{decimals}f}"


def text(x: float, y: float, body: str, cls: str = "lab", anchor: str = "start") -> str:
    return (
        f'<text x="{num(x)}" y="{num(y)}" class="{cls}" text-anchor="{anchor}">'
        f"{escape(body)}</text>"
    )


# A generous average glyph width (px) at the plots' font sizes (11.5 px, "small" 10.5 px):
# wide enough for DejaVu Sans, the widest of the usual system-ui fonts, so what is laid out by
# these estimates stays inside its picture.
CHAR_W = 6.6
SMALL_CHAR_W = 6.0


def text_width(body: str, cls: str = "lab") -> float:
    return len(body) * (SMALL_CHAR_W if "small" in cls.split() else CHAR_W)


def fit(body: str, px: float, cls: str = "lab") -> str:
    """`body` cut (with an ellipsis) to about `px` wide."""
    if text_width(body, cls) <= px:
        return body
    keep = max(1, int(px / text_width("x", cls)) - 1)
    return body[:keep] + "\u2026"


def fitted_text(
    x: float, y: float, body: str, width: float, cls: str = "lab", anchor: str = "start"
) -> str:
    """A label at `x` that stays inside a picture `width` wide: one that would run past the
    right edge ends at `x` instead, one past the left edge starts there."""
    w = text_width(body, cls)
    start = {"start": x, "middle": x - w / 2, "end": x - w}[anchor]
    if start + w > width - 2:
        if anchor == "start":  # flip to the mark's left side, as a reader expects
            return text(x - 8, y, body, cls, "end")
        return text(width - 2, y, body, cls, "end")
    if start < 2:
        return text(2, y, body, cls, "start")
    return text(x, y, body, cls, anchor)


def line(x1: float, y1: float, x2: float, y2: float, cls: str) -> str:
    return f'<path class="{cls}" d="M{num(x1)} {num(y1)}L{num(x2)} {num(y2)}"/>'


def axes(f: Frame, x_label: str, y_label: str, y_fmt: Callable[[float], str] | None = None) -> str:
    """Grid, tick labels and axis titles; x is always seconds from burst start."""
    parts = []
    y_ticks = ticks(f.y_min, f.y_max, 4)
    y_step = nice_step(f.y_max - f.y_min, 4)
    for value in y_ticks:
        y = f.y(value)
        parts.append(line(f.left, y, f.width - f.right, y, "grid"))
        label = y_fmt(value) if y_fmt else tick_text(value, y_step)
        parts.append(text(f.left - 6, y + 4, label, anchor="end"))
    x_step = nice_step(f.x_max - f.x_min)
    for value in ticks(f.x_min, f.x_max):
        x = f.x(value)
        parts.append(line(x, f.top, x, f.top + f.inner_h, "grid"))
        label = tick_text(value, x_step)
        parts.append(fitted_text(x, f.top + f.inner_h + 16, label, f.width, anchor="middle"))
    bottom = f.top + f.inner_h
    parts.append(line(f.left, bottom, f.width - f.right, bottom, "ax"))
    parts.append(line(f.left, f.top, f.left, bottom, "ax"))
    parts.append(text(f.left + f.inner_w / 2, f.height - 6, x_label, anchor="middle"))
    parts.append(
        f'<text class="lab" text-anchor="middle" transform="translate(14 '
        f'{num(f.top + f.inner_h / 2)}) rotate(-90)">{escape(y_label)}</text>'
    )
    return "".join(parts)


def x_axis(f: Frame, label: str, bottom: float) -> str:
    """Vertical grid lines and the x axis alone at `bottom` (the timeline, the rep strip)."""
    parts = []
    step = nice_step(f.x_max - f.x_min)
    for value in ticks(f.x_min, f.x_max):
        x = f.x(value)
        parts.append(line(x, f.top, x, bottom, "grid"))
        parts.append(fitted_text(x, bottom + 14, tick_text(value, step), f.width, anchor="middle"))
    parts.append(line(f.left, bottom, f.width - f.right, bottom, "ax"))
    parts.append(text(f.left + f.inner_w / 2, f.height - 6, label, anchor="middle"))
    return "".join(parts)


def polyline_d(points: Sequence[Point]) -> str:
    if not points:
        return ""
    head, *rest = points
    return f"M{num(head[0])} {num(head[1])}" + "".join(f"L{num(x)} {num(y)}" for x, y in rest)


def step_points(points: Sequence[Point]) -> list[Point]:
    """A post-step curve (value holds until the next point) as plain line vertices."""
    out: list[Point] = []
    for index, (x, y) in enumerate(points):
        if index:
            out.append((x, out[-1][1]))
        out.append((x, y))
    return out


def path(d: str, cls: str) -> str:
    return f'<path class="{cls}" d="{d}"/>' if d else ""


def bars_d(spans: Iterable[Rect]) -> str:
    """Rectangles (x, y, width, height) in px as one path: far smaller than <rect> elements."""
    return "".join(
        f"M{num(x)} {num(y)}h{num(max(w, 0.6))}v{num(h)}h{num(-max(w, 0.6))}z"
        for x, y, w, h in spans
    )


def ticks_d(points: Iterable[Point], height: float) -> str:
    """Short vertical marks of `height` px centred on each point."""
    return "".join(f"M{num(x)} {num(y - height / 2)}v{num(height)}" for x, y in points)


def triangles_d(points: Iterable[Point], size: float = 3.5) -> str:
    """Downward triangles whose tip sits on each point."""
    s = num(size)
    return "".join(f"M{num(x)} {num(y)}l{s} -{s}h-{num(2 * size)}z" for x, y in points)


def up_triangles_d(points: Iterable[Point], size: float = 4.0) -> str:
    """Upward triangles centred on each point: a value above the axis."""
    s = num(size)
    return "".join(
        f"M{num(x)} {num(y - size)}l{s} {num(2 * size)}h-{num(2 * size)}z" for x, y in points
    )


def dots_d(points: Iterable[Point], size: float = 4.0) -> str:
    """Small squares centred on each point (cheaper than circles, as legible at this size)."""
    h = size / 2
    return "".join(
        f"M{num(x - h)} {num(y - h)}h{num(size)}v{num(size)}h-{num(size)}z" for x, y in points
    )


def circles_d(points: Iterable[Point], r: float = 4.5) -> str:
    """Circles of radius `r` centred on each point, as two arcs each."""
    d, rr = num(2 * r), num(r)
    return "".join(
        f"M{num(x - r)} {num(y)}a{rr} {rr} 0 1 0 {d} 0a{rr} {rr} 0 1 0 -{d} 0" for x, y in points
    )


def diamonds_d(points: Iterable[Point], r: float = 5.5) -> str:
    s = num(r)
    return "".join(f"M{num(x)} {num(y - r)}l{s} {s}l-{s} {s}l-{s} -{s}z" for x, y in points)


def crosses_d(points: Iterable[Point], r: float = 5.0) -> str:
    d = num(2 * r)
    return "".join(
        f"M{num(x - r)} {num(y - r)}l{d} {d}M{num(x - r)} {num(y + r)}l{d} -{d}" for x, y in points
    )


SWATCH = {
    "line": "M{x} {y}h14",
    "box": "M{x} {t}h14v8h-14z",
    "tick": "M{m} {t}v8",
    "tri": "M{m} {y}l3.5 -3.5h-7z",
    "dot": "M{d} {e}h4v4h-4z",
    "circle": "M{d} {c}a3.5 3.5 0 1 0 7 0a3.5 3.5 0 1 0 -7 0",
    "diamond": "M{m} {t}l4 4l-4 4l-4 -4z",
    "cross": "M{d} {t}l7 7M{d} {b}l7 -7",
}
LEGEND_ROW = 15.0  # px between the rows of a legend that wraps


def legend_layout(
    items: Sequence[tuple[str, str, str]], x: float, right: float
) -> list[tuple[float, int]]:
    """Where each legend item goes, (x, row): a row wraps before an item would pass `right`."""
    out = []
    left, row = x, 0
    for _, label, _ in items:
        width = 18 + text_width(label)
        if x > left and x + width > right:
            x, row = left, row + 1
        out.append((x, row))
        x += width + 12
    return out


def legend_rows(items: Sequence[tuple[str, str, str]], x: float, right: float) -> int:
    return 1 + max((row for _, row in legend_layout(items, x, right)), default=0)


def legend(items: Sequence[tuple[str, str, str]], x: float, y: float, right: float = 944.0) -> str:
    """Rows of (css class, label, swatch shape from SWATCH) from (x, y), wrapping at `right`."""
    parts = []
    for (cls, label, shape), (at, row) in zip(items, legend_layout(items, x, right)):
        base = y + row * LEGEND_ROW
        d = SWATCH[shape].format(
            x=num(at),
            y=num(base - 2),
            t=num(base - 8),
            b=num(base - 1),
            c=num(base - 4),
            m=num(at + 7),
            d=num(at + 5.5),
            e=num(base - 5.5),
        )
        parts.append(path(d, cls))
        parts.append(text(at + 18, base, label))
    return "".join(parts)


def document(width: int, height: int, title: str, body: str) -> str:
    """The <svg> element: scales to the column width, fixed aspect ratio."""
    return (
        f'<svg class="plot" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}" preserveAspectRatio="xMinYMin meet">'
        f"<title>{escape(title)}</title>{body}</svg>"
    )
