"""An inline-SVG heatmap: a grid of coloured cells over two axes, each cell's <title> its
tooltip (no script: the report's CSP forbids them), and a legend of its colour scale.

The colour is the cell's own fill (viridis, sampled): one scale is shared by every heatmap of
a page, and its good end is always the same colour, whether lower (seconds) or higher
(efficiency) is better. An empty cell (one the grid skipped) is the panel colour, marked "-".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape

from jobbench.render.page.svg import num

# viridis at 0, 0.25, 0.5, 0.75, 1: bad (dark purple) .. good (yellow)
_STOPS = ((68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37))
LEFT, TOP, BOTTOM, RIGHT = 48, 26, 34, 8
CHAR_W = 7  # px a character of the 11.5 px labels takes, at most (digits are ~6.4)


@dataclass(frozen=True)
class Scale:
    """Figures from `low` to `high`; `lower_is_better` puts the good colour at `low`."""

    low: float
    high: float
    lower_is_better: bool
    show: Callable[[float], str]

    log: bool = False  # colour by the ratio to `low` (seconds spanning 0.1 to 30, say)

    def goodness(self, value: float) -> float:
        low, high = self.low, self.high
        if self.log and low > 0 and value > 0:
            low, high, value = math.log(low), math.log(high), math.log(value)
        span = high - low
        share = 0.5 if span <= 0 else (value - low) / span
        share = min(1.0, max(0.0, share))
        return 1.0 - share if self.lower_is_better else share


@dataclass(frozen=True)
class HeatCell:
    value: float | None  # None: no such cell
    tooltip: str


def colour(goodness: float) -> str:
    """The viridis colour at `goodness` (0 bad .. 1 good), as #rrggbb."""
    at = min(1.0, max(0.0, goodness)) * (len(_STOPS) - 1)
    i = min(int(at), len(_STOPS) - 2)
    t = at - i
    rgb = (round(a + (b - a) * t) for a, b in zip(_STOPS[i], _STOPS[i + 1]))
    return "#" + "".join(f"{c:02x}" for c in rgb)


def heatmap(
    xs: Sequence[str],
    ys: Sequence[str],
    cells: Mapping[tuple[str, str], HeatCell],
    scale: Scale,
    labels: tuple[str, str],
) -> str:
    """`cells[(x, y)]` over x (columns, left to right) and y (rows, bottom to top)."""
    widest_x = max((len(x) for x in xs), default=1)
    cell_w = max(28, CHAR_W * widest_x + 8, min(72, 1100 // max(1, len(xs))))
    cell_w = max(cell_w, -(-CHAR_W * len(labels[0]) // max(1, len(xs))))  # the x title fits
    cell_h = 26
    left = max(LEFT, CHAR_W * max((len(y) for y in ys), default=1) + 12)
    width = max(left + RIGHT + cell_w * len(xs), CHAR_W * len(labels[1]) + 8)
    height = TOP + BOTTOM + cell_h * len(ys)
    parts = [
        f'<svg class="heat" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(labels[1])} by {escape(labels[0])}">'
    ]
    for row, y in enumerate(reversed(ys)):
        top = TOP + row * cell_h
        parts.append(_text(left - 6, top + cell_h / 2 + 4, y, "end"))
        for col, x in enumerate(xs):
            parts.append(_cell(left + col * cell_w, top, cell_w, cell_h, cells.get((x, y)), scale))
    for col, x in enumerate(xs):
        parts.append(_text(left + (col + 0.5) * cell_w, TOP + len(ys) * cell_h + 14, x, "middle"))
    parts.append(_text(left + cell_w * len(xs) / 2, height - 4, labels[0], "middle", "lab"))
    parts.append(_text(4, TOP - 10, labels[1], "start", "lab"))
    parts.append("</svg>")
    return "".join(parts)


def legend(scale: Scale, title: str, steps: int = 10) -> str:
    """A bar of the scale's colours from its good end to its bad end, with both figures."""
    w, h = 24, 14
    width = 120 + steps * w + 120
    parts = [
        f'<svg class="heat-legend" width="{width}" height="{h + 6}" '
        f'viewBox="0 0 {width} {h + 6}" role="img" '
        f'aria-label="{escape(title)} colour scale">'
    ]
    good, bad = (scale.low, scale.high) if scale.lower_is_better else (scale.high, scale.low)
    parts.append(_text(114, h, f"best {scale.show(good)}", "end"))
    for i in range(steps):
        fill = colour(1 - i / (steps - 1))
        parts.append(f'<rect x="{120 + i * w}" y="2" width="{w}" height="{h}" fill="{fill}"/>')
    parts.append(_text(126 + steps * w, h, f"worst {scale.show(bad)}", "start"))
    parts.append("</svg>")
    return "".join(parts)


def _cell(x: float, y: float, w: float, h: float, cell: HeatCell | None, scale: Scale) -> str:
    box = f'x="{num(x)}" y="{num(y)}" width="{num(w - 1)}" height="{num(h - 1)}"'
    if cell is None or cell.value is None:
        tip = f"<title>{escape(cell.tooltip)}</title>" if cell else ""
        return (
            f'<g><rect class="heat-empty" {box}>{tip}</rect>'
            f"{_text(x + w / 2, y + h / 2 + 4, '-', 'middle')}</g>"
        )
    goodness = scale.goodness(cell.value)
    ink = "#000" if goodness > 0.55 else "#fff"
    label = ""
    if w >= 40:
        label = (
            f'<text x="{num(x + w / 2)}" y="{num(y + h / 2 + 4)}" text-anchor="middle" '
            f'fill="{ink}" pointer-events="none">{escape(scale.show(cell.value))}</text>'
        )
    return (
        f'<g><rect {box} fill="{colour(goodness)}"><title>{escape(cell.tooltip)}</title>'
        f"</rect>{label}</g>"
    )


def _text(x: float, y: float, text: str, anchor: str, cls: str = "") -> str:
    klass = f' class="{cls}"' if cls else ""
    return (
        f'<text{klass} x="{num(x)}" y="{num(y)}" text-anchor="{anchor}" '
        f'fill="currentColor">{escape(text)}</text>'
    )
