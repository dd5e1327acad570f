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
        parts.append(text(x, f.top + f.inner_h + 16, tick_text(value, x_step), anchor="middle"))
    bottom = f.top + f.inner_h
    parts.append(line(f.left, bottom, f.width - f.right, bottom, "ax"))
    parts.append(line(f.left, f.top, f.left, bottom, "ax"))
    parts.append(text(f.left + f.inner_w / 2, f.height - 6, x_label, anchor="middle"))
    parts.append(
        f'<text class="lab" text-anchor="middle" transform="translate(14 '
        f'{num(f.top + f.inner_h / 2)}) rotate(-90)">{escape(y_label)}</text>'
    )
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


def thin(points: Sequence[Point], resolution: float = 1.0) -> tuple[list[Point], bool]:
    """Keep the first, lowest, highest and last point of each `resolution`-px column.

    Points must be in px and sorted by x. Lossless on screen: a column never shows more.
    """
    if len(points) <= 4:
        return list(points), False
    out: list[Point] = []
    column: list[Point] = []
    key = None
    for point in points:
        k = math.floor(point[0] / resolution)
        if k != key and column:
            out.extend(_column_extremes(column))
            column = []
        key = k
        column.append(point)
    out.extend(_column_extremes(column))
    return out, len(out) < len(points)


def _column_extremes(column: list[Point]) -> list[Point]:
    if len(column) <= 4:
        return column
    low = min(column, key=lambda p: p[1])
    high = max(column, key=lambda p: p[1])
    keep = {id(column[0]), id(low), id(high), id(column[-1])}
    return [p for p in column if id(p) in keep]


def dedupe(points: Iterable[Point]) -> tuple[list[Point], bool]:
    """Drop points that land on the same 1 px cell as an earlier one (scatter plots)."""
    seen: set[tuple[int, int]] = set()
    out = []
    total = 0
    for x, y in points:
        total += 1
        cell = (round(x), round(y))
        if cell not in seen:
            seen.add(cell)
            out.append((x, y))
    return out, len(out) < total


SWATCH = {
    "line": "M{x} {y}h14",
    "box": "M{x} {t}h14v8h-14z",
    "tick": "M{m} {t}v8",
    "tri": "M{m} {y}l3.5 -3.5h-7z",
    "dot": "M{d} {e}h4v4h-4z",
}


def legend(items: Sequence[tuple[str, str, str]], x: float, y: float) -> str:
    """A row of (css class, label, swatch shape from SWATCH) starting at (x, y)."""
    parts = []
    for cls, label, shape in items:
        d = SWATCH[shape].format(
            x=num(x), y=num(y - 2), t=num(y - 8), m=num(x + 7), d=num(x + 5.5), e=num(y - 5.5)
        )
        parts.append(path(d, cls))
        parts.append(text(x + 18, y, label))
        x += 30 + 6.2 * len(label)
    return "".join(parts)


def document(width: int, height: int, title: str, body: str) -> str:
    """The <svg> element: scales to the column width, fixed aspect ratio."""
    return (
        f'<svg class="plot" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(title)}" preserveAspectRatio="xMinYMin meet">'
        f"<title>{escape(title)}</title>{body}</svg>"
    )
