"""An autoscaled fleet's figures (docs/fleet.md), from its events in the queue's log
(fake_queue/queue/autoscaled_fleet.py): every decision and worker state change, the fleet's size
over time, what it cost (worker-seconds billed from each scale-up decision, a cold start included,
to the worker's stop; the active workers for the whole rep), its cold starts, how soon it scaled up,
and what the scaler saw of the queue beside the jobs take-ahead held out of its sight.

Pure: given the events (each a dict as logged) and the rep's held jobs (measure/held.py)."""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fake_queue.api import worker_index
from jobbench.measure.held import Holds

NS_PER_S = 1e9
# The figures a summary gives across reps (`fleet_<name>`), and what a comparison can gate on.
FLEET_FIGURES = (
    "worker_s",
    "jobs_per_worker_s",
    "cold_starts",
    "peak_workers",
    "first_scale_up_s",
    "scale_up_delay_s",
    "hidden_max",
)


@dataclass
class Life:
    """One worker's life in the rep, ns on the queue's clock (None: not in this rep)."""

    active: bool = False
    decided: int | None = None
    reason: str | None = None
    started: int | None = None
    polling: int | None = None
    stopping: int | None = None
    stopped: int | None = None
    stop_reason: str | None = None
    idle: list[tuple[int, int | None]] = field(default_factory=list)  # (from, to)


def lives(events: Sequence[Mapping[str, Any]]) -> tuple[int | None, dict[str, Life]]:
    """The rep's first submission as the fleet saw it (`fleet_begin`) and each worker's life."""
    begin = None
    by_worker: dict[str, Life] = {}
    for e in events:
        ev, t = e["ev"], int(e["t"])
        if ev == "fleet_begin":
            begin = t
            continue
        worker = e.get("worker")
        if worker is None:
            continue
        life = by_worker.setdefault(str(worker), Life())
        if ev == "scale_up":
            life.decided, life.reason = t, str(e.get("reason"))
        elif ev == "worker_start":
            life.started = t
        elif ev == "worker_polling":
            life.polling = t
        elif ev == "worker_idle":
            life.idle.append((t, None))
        elif ev == "worker_busy" and life.idle and life.idle[-1][1] is None:
            life.idle[-1] = (life.idle[-1][0], t)
        elif ev == "scale_down":
            life.stopping, life.stop_reason = t, str(e.get("reason"))
        elif ev == "worker_stop":
            life.stopped = t
    for life in by_worker.values():
        life.active = life.decided is None  # never scaled up in this rep: it ran all along
    return begin, by_worker


def alive_spans(events: Sequence[Mapping[str, Any]]) -> dict[str, tuple[int | None, int | None]]:
    """When each worker could take jobs: from its first take (None: before the rep) to its
    stop's decision (None: to the end); measure/held.py counts free slots only then."""
    _, by_worker = lives(events)
    return {
        worker: (None if life.active else life.polling, life.stopping or life.stopped)
        for worker, life in by_worker.items()
    }


def fleet_figures(
    events: Sequence[Mapping[str, Any]], start: int, end: int, completed: int, held: Holds | None
) -> dict[str, Any] | None:
    """The fleet block of a rep whose log has fleet events (None: a fixed fleet). `start`: the
    rep's first submission, `end`: its last event, `completed`: its completed jobs."""
    if not events:
        return None
    begin, by_worker = lives(events)
    begin = start if begin is None else begin
    billed = {
        worker: (min(life.stopped or end, end) - (begin if life.active else life.decided or begin))
        for worker, life in by_worker.items()
    }
    worker_s = sum(billed.values()) / NS_PER_S
    added = [life for life in by_worker.values() if not life.active]
    cold = [
        (life.polling - life.decided) / NS_PER_S for life in added if life.polling and life.decided
    ]
    decided = sorted(life.decided for life in added if life.decided is not None)
    polled = sorted(life.polling for life in added if life.polling is not None)
    views = [e for e in events if e["ev"] == "scaler"]
    hidden = _hidden_at([int(e["t"]) for e in views], held)
    size = size_over_time(by_worker, begin, end)
    return {
        "scaler": _scaler_of(events),
        "peak_workers": max((n for _, n in size), default=0),
        "cold_starts": len(added),
        "worker_s": round(worker_s, 6),
        "jobs_per_worker_s": round(completed / worker_s, 6) if worker_s > 0 else None,
        "first_scale_up_s": _after(decided, begin),
        "scale_up_delay_s": _after(polled, begin),
        "cold_start_s": _spread(cold),
        "rest_s": round((end - begin) / NS_PER_S, 6),
        "hidden_max": max(hidden, default=0),
        "evaluations": [
            {
                "t_s": round((int(e["t"]) - begin) / NS_PER_S, 6),
                "queued": int(e["queued"]),
                "in_progress": int(e["in_progress"]),
                "oldest_s": float(e["oldest_s"]),
                "running": int(e["running"]),
                "add": int(e["add"]),
                "hidden": hidden_now,
            }
            for e, hidden_now in zip(views, hidden, strict=True)
        ],
        "size": [[round((t - begin) / NS_PER_S, 6), n] for t, n in size],
        "workers": {
            worker: _life_json(life, begin, billed[worker])
            for worker, life in sorted(by_worker.items(), key=lambda kv: worker_index(kv[0]))
        },
    }


def size_over_time(by_worker: Mapping[str, Life], begin: int, end: int) -> list[tuple[int, int]]:
    """(t, workers billed then) at each change: a worker counts from its scale-up decision (an
    active one from the start) to its stop."""
    steps: list[tuple[int, int]] = []
    for life in by_worker.values():
        steps.append((begin if life.active else life.decided or begin, 1))
        steps.append((life.stopped if life.stopped is not None else end + 1, -1))
    steps.sort()
    out: list[tuple[int, int]] = []
    n = 0
    for t, step in steps:
        n += step
        if t > end:
            break
        if out and out[-1][0] == t:
            out[-1] = (t, n)
        else:
            out.append((t, n))
    return out


def _hidden_at(times: Sequence[int], held: Holds | None) -> list[int]:
    """At each time, the jobs delivered but not yet started: in a worker's take-ahead buffer,
    out of the queue the scaler counts."""
    if held is None or not times:
        return [0] * len(times)
    delivered, started = [], []
    for worker, spans in held.spans.items():
        for (d, _), s in zip(spans, held.starts[worker], strict=True):
            if s > d:
                delivered.append(d)
                started.append(s)
    delivered.sort()
    started.sort()
    return [bisect.bisect_right(delivered, t) - bisect.bisect_right(started, t) for t in times]


def _scaler_of(events: Sequence[Mapping[str, Any]]) -> str | None:
    return next((str(e.get("scaler")) for e in events if e["ev"] == "fleet_begin"), None)


def _after(times: Sequence[int], begin: int) -> float | None:
    return round((times[0] - begin) / NS_PER_S, 6) if times else None


def _spread(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {
        "median": round(float(np.median(values)), 6),
        "max": round(max(values), 6),
    }


def _life_json(life: Life, begin: int, billed_ns: int) -> dict[str, Any]:
    def rel(t: int | None) -> float | None:
        return None if t is None else round((t - begin) / NS_PER_S, 6)

    return {
        "active": life.active,
        "decided_s": rel(life.decided),
        "reason": life.reason,
        "started_s": rel(life.started),
        "polling_s": rel(life.polling),
        "stopping_s": rel(life.stopping),
        "stopped_s": rel(life.stopped),
        "stop_reason": life.stop_reason,
        "billed_s": round(billed_ns / NS_PER_S, 6),
        "idle": [[rel(a), rel(b)] for a, b in life.idle],
    }
