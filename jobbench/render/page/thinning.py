"""What a pixel cannot show, dropped losslessly before drawing: curve points thinned to each
pixel column's extremes, scatter points on one pixel cell drawn once. Points are in px."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

Point = tuple[float, float]


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
