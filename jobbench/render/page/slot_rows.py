"""The slot timeline's geometry: a worker's spans laid out in slot rows, held bands, and spans
closer than a pixel joined. Drawing only: the spans themselves come from measure/series.py."""

from __future__ import annotations

import math
from collections.abc import Sequence

from jobbench.measure.series import Span

Row = list[tuple[float, float]]


def slot_rows(spans: Sequence[Span], slots: int, end: float) -> tuple[list[Row], Row]:
    """One worker's jobs as `slots` rows of running spans, plus the spans jobs were held.

    A job runs from `deliver` to `done` unless every slot was busy when it was delivered (a
    take-ahead buffer): then it is held until the earliest slot frees and runs from there. A job
    that could not have waited (done before that) gets a row of its own past the slots.
    """
    rows: list[Row] = [[] for _ in range(max(slots, 1))]
    free = [-math.inf] * len(rows)
    held: Row = []
    for span in sorted(spans, key=lambda s: s.start):
        stop = span.end if span.end is not None else end
        idle = [i for i, at in enumerate(free) if at <= span.start]
        index = idle[0] if idle else min(range(len(free)), key=free.__getitem__)
        start = max(span.start, free[index])
        if start >= stop:
            rows.append([])
            free.append(-math.inf)
            index, start = len(rows) - 1, span.start
        rows[index].append((start, stop))
        free[index] = stop
        if start > span.start:
            held.append((span.start, start))
    return rows, held


def count_over_time(spans: Sequence[tuple[float, float]]) -> list[tuple[float, int]]:
    """How many spans are open at each instant, as (time, count) after each change."""
    deltas = [(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans]
    deltas.sort()
    out: list[tuple[float, int]] = []
    count = 0
    for t, change in deltas:
        count += change
        if out and out[-1][0] == t:
            out[-1] = (t, count)
        else:
            out.append((t, count))
    return out


def merge_close(
    row: list[tuple[float, float]], gap: float
) -> tuple[list[tuple[float, float]], bool]:
    """Join spans of one row separated by less than `gap` (one pixel of the plot)."""
    out: list[tuple[float, float]] = []
    for start, stop in row:
        if out and start - out[-1][1] < gap:
            out[-1] = (out[-1][0], max(stop, out[-1][1]))
        else:
            out.append((start, stop))
    return out, len(out) < len(row)
