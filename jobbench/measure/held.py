"""Take-ahead's cost, from the event log alone: jobs that waited in one worker's
buffer while some other worker had a free slot.

The queue sees a job delivered to a worker and its job-done, not when the worker started it.
A worker runs its jobs first come first served on `slots` slots, each held from its start
until its job-done, so each job's start follows from its worker's deliveries and dones (a
min-heap of the slots' free times): start = max(delivered, the earliest a slot frees). The
time between its delivery and its start it waited in the worker's buffer; the part of that
wait during which another worker had a free slot is the wait a perfect dispatcher would not
have made it wait (it could have run there): its extra wait.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

NS_PER_S = 1e9

Span = tuple[int, int]  # (delivered, done), ns


def slot_starts(spans: Sequence[Span], slots: int) -> list[int]:
    """Each job's start on a worker with `slots` slots, first come first served, in the order
    of `spans` (sorted by delivery): a job holds its slot until its job-done."""
    free = [0] * slots  # when each slot frees
    starts = []
    for delivered, done in spans:
        start = max(delivered, heapq.heappop(free))
        starts.append(start)
        heapq.heappush(free, max(done, start))
    return starts


@dataclass(frozen=True)
class Holds:
    """Each worker's jobs as the queue saw them and as its slots ran them: `spans` (delivered,
    done) sorted by delivery, `starts` (when a slot took each), and `extra` (start, extra wait
    ns) of each job held while another worker had a free slot."""

    spans: dict[str, list[Span]]
    starts: dict[str, list[int]]
    extra: dict[str, list[tuple[int, int]]]
    slots: int  # each worker's

    @property
    def buffered(self) -> list[int]:
        """Each buffered job's wait in its worker's buffer (start - delivered), ns."""
        return [
            start - delivered
            for w, spans in self.spans.items()
            for (delivered, _), start in zip(spans, self.starts[w], strict=True)
            if start > delivered
        ]


Alive = Mapping[str, tuple[int | None, int | None]]  # worker: (from, to); None: the rep's edge


def holds(
    spans_by_worker: Mapping[str, Sequence[Span]],
    slots: int,
    workers: Sequence[str] = (),
    alive: Alive | None = None,
) -> Holds:
    """The Holds of a rep; `workers`: the whole fleet, those that ran no job (free all along)
    included; `alive`: an autoscaled fleet's workers have free slots only while they take jobs
    (measure/fleet_figures.py's alive_spans)."""
    ordered = {w: sorted(spans_by_worker.get(w, ())) for w in (*workers, *spans_by_worker)}
    starts = {w: slot_starts(spans, slots) for w, spans in ordered.items()}
    buffered = any(
        start > delivered
        for w, spans in ordered.items()
        for (delivered, _), start in zip(spans, starts[w], strict=True)
    )
    # No job waited in a buffer (drain never buffers): no timeline of free slots to build.
    nobody, only = (
        _no_free_slot_elsewhere(ordered, starts, slots, alive or {})
        if buffered
        else (Covered([]), {})
    )
    extra: dict[str, list[tuple[int, int]]] = {}
    for worker, spans in ordered.items():
        own = only.get(worker, Covered([]))
        mine = extra.setdefault(worker, [])
        for (delivered, _), start in zip(spans, starts[worker], strict=True):
            if start > delivered:
                covered = nobody.between(delivered, start) + own.between(delivered, start)
                if (gap := start - delivered - covered) > 0:
                    mine.append((start, gap))
    return Holds(ordered, starts, extra, slots)


def held_cost(held: Holds) -> dict[str, Any]:
    """Jobs held while another worker had a free slot: how many, their extra wait (total, p99,
    max, seconds), and per worker; the whole buffer wait is given beside it."""
    extra_all = [gap / NS_PER_S for jobs in held.extra.values() for _, gap in jobs]
    waited_all = [wait / NS_PER_S for wait in held.buffered]
    per_worker = {
        worker: {"jobs": len(jobs), "extra_wait_s": round(sum(g for _, g in jobs) / NS_PER_S, 6)}
        for worker, jobs in held.extra.items()
    }
    return {
        "jobs": len(extra_all),
        "extra_wait_s": round(sum(extra_all), 6),
        "extra_wait_p99_s": _p99(extra_all),
        "extra_wait_max_s": round(max(extra_all), 6) if extra_all else None,
        "buffered_jobs": len(waited_all),
        "buffer_wait_p99_s": _p99(waited_all),
        "per_worker": per_worker,
    }


def _p99(values: list[float]) -> float | None:
    return round(float(np.percentile(values, 99)), 6) if values else None


class Covered:
    """Sorted disjoint intervals, asked how much of [a, b) they cover (prefix sums: log n)."""

    def __init__(self, intervals: list[Span]) -> None:
        self.starts = [lo for lo, _ in intervals]
        self.intervals = intervals
        self.before = [0]  # covered length before each interval
        for lo, hi in intervals:
            self.before.append(self.before[-1] + hi - lo)

    def below(self, x: int) -> int:
        """Covered length below x."""
        k = bisect.bisect_right(self.starts, x)  # intervals starting at or before x
        if k == 0:
            return 0
        lo, hi = self.intervals[k - 1]
        return self.before[k - 1] + min(hi, x) - lo

    def between(self, a: int, b: int) -> int:
        return self.below(b) - self.below(a)


def _no_free_slot_elsewhere(
    spans: Mapping[str, Sequence[Span]],
    starts: Mapping[str, Sequence[int]],
    slots: int,
    alive: Alive,
) -> tuple[Covered, dict[str, Covered]]:
    """When no worker other than a given one had a free slot: the times no worker had one
    (for every worker), and per worker the times it alone had one. A worker's free slots are
    `slots` less its running jobs (one with a job in its buffer has none); one not yet polling
    or already stopping has none (`alive`)."""
    edges: list[tuple[int, int, str]] = []
    running = dict.fromkeys(spans, 0)
    for worker, worker_spans in spans.items():
        for (_, done), start in zip(worker_spans, starts[worker], strict=True):
            edges.append((start, 1, worker))
            edges.append((max(done, start), -1, worker))
        since, until = alive.get(worker, (None, None))
        if since is not None:  # all its slots taken until it polls
            running[worker] = slots
            edges.append((since, -slots, worker))
        if until is not None:
            edges.append((until, slots, worker))
    edges.sort()
    free_workers = {w for w, n in running.items() if n < slots}
    nobody: list[Span] = []
    only: dict[str, list[Span]] = {}
    state: tuple[int, str | None] | None = None  # (since, the lone free worker or None)
    i = 0
    while i < len(edges):
        at = edges[i][0]
        while i < len(edges) and edges[i][0] == at:
            _, step, worker = edges[i]
            running[worker] += step
            if running[worker] >= slots:
                free_workers.discard(worker)
            else:
                free_workers.add(worker)
            i += 1
        now: str | bool | None = False  # False: two or more workers have a free slot
        if not free_workers:
            now = None
        elif len(free_workers) == 1:
            now = next(iter(free_workers))
        if state is not None and (now is False or now != state[1]):
            since, lone = state
            (nobody if lone is None else only.setdefault(lone, [])).append((since, at))
            state = None
        if state is None and now is not False:
            state = (at, now if isinstance(now, str) else None)
    return Covered(nobody), {w: Covered(iv) for w, iv in only.items()}
