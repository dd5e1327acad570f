"""Per-rep figures from the fake queue's event log, and their aggregation across reps.

Everything is computed from server timestamps (one clock, docs/metrics.md) through the one event
scan (events.py, docs/events.md). Raw samples stay raw until here: percentiles are exact, never
histogram-based.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from jobbench.measure.concurrency import below_slots
from jobbench.measure.events import EventScan, Final, TakeEvent, scan_events
from jobbench.measure.figures import (
    NS_PER_S,
    PHASES,
    TIME_TO,
    PhaseSamples,
    RepMeasure,
    drain_figures,
    round6,
    rounded_phase,
    split_figures,
)
from jobbench.measure.fleet_figures import FLEET_FIGURES, alive_spans, fleet_figures
from jobbench.measure.held import held_cost, holds
from jobbench.measure.requests import request_figures
from jobbench.measure.stats import outliers, summary
from jobbench.measure.steady import Capacity, steady_figures

PHASE_STATS = ("p50", "p90", "p99", "max", "mean")
STEADY_FIGURES = (
    "arrival_rate_jps",
    "completion_rate_jps",
    "e2e_p50_s",
    "e2e_p99_s",
    "ideal_e2e_p99_s",
)
SUMMARY_FIGURES = (
    *(key for key, _ in TIME_TO),
    "throughput_jps",
    "utilisation",
    "efficiency",
)


def ideal_time(
    burst: int, workers: int, slots: int, job_seconds: float, wake_latency_s: float
) -> float:
    """The limit (docs/latency-model.md): first wake, then a job length per full wave of slots."""
    if workers < 1 or slots < 1:
        raise ValueError(f"workers and slots must be >= 1, got workers={workers} slots={slots}")
    if burst < 0:
        raise ValueError(f"burst must be >= 0, got {burst}")
    return wake_latency_s + math.ceil(burst / (workers * slots)) * job_seconds


def busy_slot_ns(spans: dict[str, list[tuple[int, int]]], slots: int) -> int:
    """Slot-time in use: per worker, min(jobs held, slots) integrated over time. A job held in a
    take-ahead buffer waits for a slot; counting its whole deliver-to-done span would report
    more than 100 %."""
    total = 0
    for intervals in spans.values():
        edges = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals])
        held, last = 0, 0
        for t, step in edges:
            total += min(held, slots) * (t - last) if held else 0
            held, last = held + step, t
    return total


def _job_counts(final: dict[str, Final], n: int) -> dict[str, int]:
    counts = {"submitted": n, "completed": 0, "failed": 0, "cancelled": 0, "timed_out": 0}
    for f in final.values():
        key = f.status.lower()
        counts[key] = counts.get(key, 0) + 1
    counts["unfinished"] = n - len(final)
    return counts


def _phase_samples(s: EventScan) -> PhaseSamples:
    served = list(s.completed())
    return PhaseSamples(
        queue_wait=tuple((claim - submit) / NS_PER_S for submit, claim, _ in served),
        service=tuple((done - claim) / NS_PER_S for _, claim, done in served),
        e2e=tuple((done - submit) / NS_PER_S for submit, _, done in served),
    )


def _take_stats(takes: Sequence[TakeEvent], start: int) -> dict[str, Any]:
    kept = [tk for tk in takes if tk.t >= start]
    if not kept:
        return {
            "count": 0,
            "empty": 0,
            "asked_mean": None,
            "got_mean": None,
            "full_fraction": None,
            "latency": None,
        }
    n = len(kept)
    latency = [(tk.t - tk.arrived) / NS_PER_S for tk in kept if tk.got > 0]
    return {
        "count": n,
        "empty": sum(1 for tk in kept if tk.kind == "empty"),
        "asked_mean": round6(sum(tk.asked for tk in kept) / n),
        "got_mean": round6(sum(tk.got for tk in kept) / n),
        # a server-side fix (take_extra) may hand a take more than it asked: that is full too
        "full_fraction": round6(sum(1 for tk in kept if tk.got >= tk.asked) / n),
        "latency": rounded_phase(latency),
    }


def rep_measure(
    events: Iterable[dict[str, Any]],
    *,
    workers: int,
    slots: int,
    burst: int,
    job_seconds: float | None,
    wake_latency_s: float,
    worker_ids: Sequence[str] | None = None,
    atomic_burst: bool = True,
    warmup_s: float | None = None,
    brief: bool = False,
) -> RepMeasure:
    """The docs/metrics.md figures for one rep and its per-job samples; burst start is the
    earliest `submit`. Times in the server's ns. `atomic_burst`: every job was submitted at
    once, the load `ideal_s` is defined for; an arrival profile's rep gets a `steady` block
    instead (after `warmup_s`, or a detected warm-up) whose ideal is the perfect dispatcher's
    steady e2e p99, and its efficiency is that ideal over the measured one. `job_seconds` None:
    the jobs' length is not known (the user's inputs), so neither ideal nor efficiency is
    measured, a burst's or a steady one; every other figure is. `brief`: the figures
    a sweep keeps, the same values, without the per-job samples and phases, the split, the
    utilisation and the held jobs (analysed only where a profile's steady block needs them);
    not for an autoscaled fleet's rep, whose figures need them too (ValueError)."""
    ideal = None
    if atomic_burst and job_seconds is not None:
        ideal = ideal_time(burst, workers, slots, job_seconds, wake_latency_s)
    needs_held = not brief or not atomic_burst
    s = scan_events(events, spans=needs_held)
    if s.fleet and not needs_held:
        raise ValueError("an autoscaled fleet's figures need its held jobs: measure it in full")
    if not s.submitted:
        raise ValueError("the event log has no `submit` event: there is no burst to measure")
    start = min(s.submitted.values())
    n = len(s.submitted)
    jobs = _job_counts(s.final, n)
    drained, _ = drain_figures(s.completed_times(), start, n, jobs["completed"])
    # Slots are busy with every run, a failed one too: utilisation is over the rep until its
    # last job ended, whatever the ending.
    span = (max(f.t for f in s.final.values()) - start) / NS_PER_S if s.final else None
    p99 = drained["time_to_p99_s"]
    samples = PhaseSamples() if brief else _phase_samples(s)
    spans = s.busy_spans() if needs_held else {}
    alive = alive_spans(s.fleet) if s.fleet else None
    held = holds(spans, slots, worker_ids or (), alive) if needs_held else None
    figures: dict[str, Any] = {**drained, "jobs": jobs}
    if not brief:
        figures["phases"] = samples.figures()
    figures["takes"] = _take_stats(s.takes, start)
    figures["requests"] = request_figures(s, start, jobs["completed"])  # requests.py
    if held is not None and not brief:
        served_by = (f.worker for f in s.final.values() if f.served)
        busy_s = busy_slot_ns(spans, slots) / NS_PER_S
        figures["split"] = split_figures(served_by, worker_ids)
        figures["utilisation"] = round6(busy_s / (workers * slots * span)) if span else None
        figures["held"] = held_cost(held)
        if below := below_slots(s, slots):  # a worker that ran fewer jobs at once than told
            figures["below_slots"] = [finding.to_json() for finding in below]
    figures["ideal_s"] = None if ideal is None else round6(ideal)
    figures["efficiency"] = round6(ideal / p99) if p99 and ideal is not None else None
    if not atomic_burst:
        capacity = None
        if job_seconds is not None:  # the ideal dispatcher needs the jobs' length
            capacity = Capacity(workers, slots, job_seconds, wake_latency_s)
        steady = steady_figures(s, held=held, capacity=capacity, warmup_s=warmup_s)
        if steady is not None:
            figures["steady"] = steady
            figures["efficiency"] = steady.get("efficiency")
    if s.fleet:
        figures["fleet"] = fleet_figures(s.fleet, start, s.last, jobs["completed"], held)
    if s.refreshes:
        figures["refreshes"] = s.refreshes
    if s.redelivered:
        jobs["redelivered"] = len(s.redelivered)
    if s.doubled:
        jobs["doubled"] = len(s.doubled)
    if s.faults:
        figures["faults"] = dict(sorted(s.faults.items()))
        jobs["recovered"] = s.recovered()
    return RepMeasure(figures, samples)


def across(values: Iterable[float | None]) -> dict[str, float] | None:
    nums = [v for v in values if v is not None]
    if not nums:
        return None
    stats = summary(nums)
    return {k: round(stats[k], 6) for k in ("median", "min", "max")}


def summarise_reps(reps: Sequence[dict[str, Any]]) -> dict[str, dict[str, float] | None]:
    """Median / min / max across reps of each rep figure (Nones skipped; None if all are)."""
    if not reps:
        raise ValueError("no reps to summarise")
    out = {key: across(rep.get(key) for rep in reps) for key in SUMMARY_FIGURES}
    for phase in PHASES:
        for stat in PHASE_STATS:
            out[f"{phase}_{stat}_s"] = across(
                (rep["phases"][phase] or {}).get(stat) for rep in reps
            )
    for stat in ("count", "got_mean"):
        out[f"takes_{stat}"] = across(rep.get("takes", {}).get(stat) for rep in reps)
    # absent from live reps and from results before it: None
    out["requests_per_job"] = across((rep.get("requests") or {}).get("per_job") for rep in reps)
    for stat in ("jobs", "extra_wait_p99_s"):  # absent before commit dba92ff: None
        out[f"held_{stat}"] = across((rep.get("held") or {}).get(stat) for rep in reps)
    for stat in STEADY_FIGURES:  # a profile's reps only: a burst's are None
        out[f"steady_{stat}"] = across((rep.get("steady") or {}).get(stat) for rep in reps)
    for stat in FLEET_FIGURES:  # an autoscaled fleet's reps only
        out[f"fleet_{stat}"] = across((rep.get("fleet") or {}).get(stat) for rep in reps)
    return out


def pooled_phases(samples: Sequence[PhaseSamples]) -> dict[str, dict[str, float] | None]:
    """Job percentiles over every job of every rep (not a median of per-rep percentiles)."""
    if not samples:
        raise ValueError("no reps to pool")
    pooled = [rep.by_phase() for rep in samples]
    return {phase: rounded_phase([v for rep in pooled for v in rep[phase]]) for phase in PHASES}


# Rep figures whose outliers a result marks (the gate sets them aside, docs/ci.md).
OUTLIER_FIGURES: dict[str, tuple[str, ...]] = {
    "time_to_p99_s": ("time_to_p99_s",),
    "e2e_mean_s": ("phases", "e2e", "mean"),
}


def outlier_reps(reps: Sequence[dict[str, Any]]) -> dict[str, list[int]]:
    """Per figure, the reps (numbered from 1) that are outliers among this scenario's reps:
    modified z-score over 3.5 and over 1 % off the median (stats.outliers)."""
    marked: dict[str, list[int]] = {}
    for name, path in OUTLIER_FIGURES.items():
        numbered = []
        for number, rep in enumerate(reps, start=1):
            value: Any = rep
            for key in path:
                value = value.get(key) if isinstance(value, dict) else None
            if isinstance(value, (int, float)) and math.isfinite(value):
                numbered.append((number, float(value)))
        if len(numbered) >= 3:
            flags = outliers([v for _, v in numbered])
            marked[name] = [n for (n, _), out in zip(numbered, flags) if out]
    return marked
