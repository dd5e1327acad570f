"""One rep's raw events (docs/events.md, times in microseconds from burst start) -> plot series.

Pure data: busy spans per worker, takes, completions, queue depth, end-to-end latencies, all in
seconds from burst start. The same scan rules as metrics.py: log order is causal per job.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fake_queue.protocol import TERMINAL
from jobbench.measure.metrics import SERVED
from jobbench.measure.stats import percentile

US_PER_S = 1e6


@dataclass(frozen=True)
class Span:
    """A job on a worker from `deliver` to `done` (end None: never finished in this rep)."""

    worker: str
    start: float
    end: float | None


@dataclass(frozen=True)
class Take:
    worker: str
    arrived: float
    answered: float
    asked: int
    got: int
    kind: str

    @property
    def latency(self) -> float:
        return self.answered - self.arrived


@dataclass
class RepSeries:
    spans: list[Span] = field(default_factory=list)
    takes: list[Take] = field(default_factory=list)
    done: list[float] = field(default_factory=list)  # sorted terminal times
    e2e: list[float] = field(default_factory=list)  # sorted, served jobs only
    queue: list[tuple[float, int]] = field(default_factory=list)  # (t, depth) after each change
    submitted: int = 0
    end: float = 0.0  # the last event time

    @property
    def workers(self) -> list[str]:
        return sorted({s.worker for s in self.spans} | {t.worker for t in self.takes})

    def p(self, pct: float) -> float | None:
        """Exact end-to-end percentile (linear interpolation), as the summary reports it."""
        return percentile(self.e2e, pct) if self.e2e else None


def _s(us: int | float) -> float:
    return us / US_PER_S


@dataclass
class _Jobs:
    submit: dict[str, int] = field(default_factory=dict)
    deliver: dict[str, tuple[int, str]] = field(default_factory=dict)
    final: dict[str, tuple[int, str]] = field(default_factory=dict)
    queue_deltas: list[tuple[int, int]] = field(default_factory=list)


def rep_series(events: Iterable[dict[str, Any]]) -> RepSeries:
    out = RepSeries()
    jobs = _Jobs()
    last = 0
    for e in events:
        t = int(e.get("t", 0))
        last = max(last, t)
        _scan_one(e, t, jobs, out)
    out.submitted = len(jobs.submit)
    out.end = _s(last)
    for job, (t_done, status) in jobs.final.items():
        out.done.append(_s(t_done))
        delivered = jobs.deliver.pop(job, None)
        if status in SERVED and delivered is not None:
            out.spans.append(Span(delivered[1], _s(delivered[0]), _s(t_done)))
            out.e2e.append(_s(t_done - jobs.submit[job]))
    out.spans.extend(Span(w, _s(t), None) for t, w in jobs.deliver.values())
    out.done.sort()
    out.e2e.sort()
    out.queue = _depth(jobs.queue_deltas)
    return out


def _scan_one(e: dict[str, Any], t: int, jobs: _Jobs, out: RepSeries) -> None:
    ev = e.get("ev")
    job = e.get("job", "")
    if ev == "submit":
        jobs.submit[job] = t
        jobs.queue_deltas.append((t, 1))
    elif ev == "claim":
        jobs.queue_deltas.append((t, -1))
    elif ev in ("requeue", "retry"):
        jobs.queue_deltas.append((t, 1))
        jobs.final.pop(job, None)
    elif ev == "deliver":
        jobs.deliver[job] = (t, str(e.get("worker")))
    elif ev == "done" and job in jobs.submit and e.get("status") in TERMINAL:
        jobs.final[job] = (t, str(e["status"]))
        if e["status"] not in SERVED:
            jobs.deliver.pop(job, None)
    elif ev == "take":
        out.takes.append(
            Take(
                worker=str(e.get("worker")),
                arrived=_s(e.get("arrived", t)),
                answered=_s(t),
                asked=int(e.get("asked", 0)),
                got=int(e.get("got", 0)),
                kind=str(e.get("kind", "")),
            )
        )


def _depth(deltas: list[tuple[int, int]]) -> list[tuple[float, int]]:
    deltas.sort(key=lambda d: d[0])
    out: list[tuple[float, int]] = []
    depth = 0
    for t, change in deltas:
        depth += change
        if out and out[-1][0] == _s(t):
            out[-1] = (out[-1][0], depth)
        else:
            out.append((_s(t), depth))
    return out


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
