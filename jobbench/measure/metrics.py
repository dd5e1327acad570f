"""Per-rep figures from the fake queue's event log, and their aggregation across reps.

Everything is computed from server timestamps (one clock, docs/metrics.md); event format in
docs/events.md. Raw samples stay raw until here: percentiles are exact, never histogram-based.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from jobbench.measure.stats import jain_fairness, outliers, phase_stats, summary

NS_PER_S = 1e9
# Jobs a worker actually ran to an answer: the ones with a meaningful claim -> done service time.
SERVED = frozenset({"COMPLETED", "FAILED"})
PHASES = ("queue_wait", "service", "e2e")
PHASE_STATS = ("p50", "p90", "p99", "max", "mean")
# Time-to-X% rows: (output key, percent of submitted jobs that must be terminal). None = 1 job.
TIME_TO: tuple[tuple[str, int | None], ...] = (
    ("time_to_first_s", None),
    ("time_to_p50_s", 50),
    ("time_to_p99_s", 99),
    ("time_to_p100_s", 100),
)
SUMMARY_FIGURES = (
    *(key for key, _ in TIME_TO),
    "throughput_jps",
    "utilisation",
    "efficiency",
)


@dataclass(slots=True)
class _Final:
    """A job's last terminal transition (a `retry` after it removes it again)."""

    t: int
    status: str
    worker: str | None
    claim: int | None


@dataclass(slots=True)
class _Scan:
    submitted: dict[str, int] = field(default_factory=dict)
    claim: dict[str, int] = field(default_factory=dict)
    deliver: dict[str, int] = field(default_factory=dict)
    final: dict[str, _Final] = field(default_factory=dict)
    spans: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # worker: deliver, done
    takes: list[tuple[int, int, int, int, str]] = field(default_factory=list)


def ideal_time(
    burst: int, workers: int, slots: int, job_seconds: float, wake_latency_s: float
) -> float:
    """The limit (docs/latency-model.md): first wake, then a job length per full wave of slots."""
    if workers < 1 or slots < 1:
        raise ValueError(f"workers and slots must be >= 1, got workers={workers} slots={slots}")
    if burst < 0:
        raise ValueError(f"burst must be >= 0, got {burst}")
    return wake_latency_s + math.ceil(burst / (workers * slots)) * job_seconds


def _scan(events: Iterable[dict[str, Any]]) -> _Scan:
    """One pass in log order, which is causal per job even where `t` (of takes) is not.

    A COMPLETED/FAILED `done` always follows a fresh claim and deliver (requeue and retry put the
    job back in the queue), so the last claim and deliver seen are the ones of the final run.
    """
    s = _Scan()
    for e in events:
        ev = e["ev"]
        if ev == "claim":
            s.claim[e["job"]] = e["t"]
        elif ev == "deliver":
            s.deliver[e["job"]] = e["t"]
        elif ev == "done":
            job, t, status = e["job"], e["t"], e["status"]
            if job not in s.submitted:  # a straggler from an earlier burst: not this rep's
                continue
            s.final[job] = _Final(t, status, e.get("worker"), s.claim.get(job))
            delivered = s.deliver.get(job)
            if status in SERVED and delivered is not None:  # every run occupied a slot
                s.spans.setdefault(str(e.get("worker")), []).append((delivered, t))
        elif ev == "take":
            s.takes.append((e["t"], e["asked"], e["got"], e["arrived"], e["kind"]))
        elif ev == "retry":  # back in the queue: no longer terminal
            s.final.pop(e["job"], None)
        elif ev == "submit":
            s.submitted[e["job"]] = e["t"]
    return s


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


def _s(ns: int) -> float:
    return round(ns / NS_PER_S, 6)


def round6(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def times_to(done_ts: Sequence[int], start: int, n: int) -> dict[str, float | None]:
    """Time until ceil(pct% of n) jobs are terminal; integer maths so 99% of 100 is 99, not 100.
    At least one job: with none submitted (n=0: a live burst that had none accepted), all None."""
    out: dict[str, float | None] = {}
    for key, pct in TIME_TO:
        needed = 1 if pct is None else max(1, -(-n * pct // 100))
        out[key] = _s(done_ts[needed - 1] - start) if needed <= len(done_ts) else None
    return out


def _job_counts(final: dict[str, _Final], n: int) -> dict[str, int]:
    counts = {"submitted": n, "completed": 0, "failed": 0, "cancelled": 0, "timed_out": 0}
    for f in final.values():
        key = f.status.lower()
        counts[key] = counts.get(key, 0) + 1
    counts["unfinished"] = n - len(final)
    return counts


def _phase_samples(s: _Scan) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {phase: [] for phase in PHASES}
    for job, f in s.final.items():
        if f.status not in SERVED or f.claim is None:
            continue
        submit = s.submitted[job]
        samples["queue_wait"].append((f.claim - submit) / NS_PER_S)
        samples["service"].append((f.t - f.claim) / NS_PER_S)
        samples["e2e"].append((f.t - submit) / NS_PER_S)
    return samples


def rounded_phase(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {k: round(v, 6) for k, v in phase_stats(values).items()}


def _take_stats(takes: Sequence[tuple[int, int, int, int, str]], start: int) -> dict[str, Any]:
    kept = [tk for tk in takes if tk[0] >= start]
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
    latency = [(t - arrived) / NS_PER_S for t, _, got, arrived, _ in kept if got > 0]
    return {
        "count": n,
        "empty": sum(1 for tk in kept if tk[4] == "empty"),
        "asked_mean": round6(sum(tk[1] for tk in kept) / n),
        "got_mean": round6(sum(tk[2] for tk in kept) / n),
        "full_fraction": round6(sum(1 for tk in kept if tk[2] == tk[1]) / n),
        "latency": rounded_phase(latency),
    }


def _split(final: dict[str, _Final], worker_ids: Sequence[str] | None) -> dict[str, Any]:
    counts = dict.fromkeys(worker_ids or (), 0)
    for f in final.values():
        if f.status in SERVED and f.worker is not None:
            counts[f.worker] = counts.get(f.worker, 0) + 1
    values = list(counts.values())
    served = sum(values) > 0
    return {
        "jobs_per_worker": dict(sorted(counts.items())),
        # None, not infinity, when a worker got nothing: JSON has no infinity.
        "max_min_ratio": round6(max(values) / min(values)) if served and min(values) > 0 else None,
        "jain": round6(jain_fairness(values)) if served else None,
    }


def rep_metrics(
    events: list[dict[str, Any]],
    *,
    workers: int,
    slots: int,
    burst: int,
    job_seconds: float,
    wake_latency_s: float,
    worker_ids: list[str] | None = None,
    keep_samples: bool = False,
) -> dict[str, Any]:
    """The docs/metrics.md figures for one rep; burst start is the earliest `submit`."""
    ideal = ideal_time(burst, workers, slots, job_seconds, wake_latency_s)
    s = _scan(events)
    if not s.submitted:
        raise ValueError("the event log has no `submit` event: there is no burst to measure")
    start = min(s.submitted.values())
    n = len(s.submitted)
    done_ts = sorted(f.t for f in s.final.values())
    times = times_to(done_ts, start, n)
    # An incomplete rep is measured up to its last terminal job rather than reported as nothing.
    span = times["time_to_p100_s"]
    if span is None and done_ts:
        span = _s(done_ts[-1] - start)
    jobs = _job_counts(s.final, n)
    samples = _phase_samples(s)
    p99 = times["time_to_p99_s"]
    out: dict[str, Any] = {
        **times,
        "throughput_jps": round6(jobs["completed"] / span) if span else None,
        "jobs": jobs,
        "phases": {phase: rounded_phase(samples[phase]) for phase in PHASES},
        "takes": _take_stats(s.takes, start),
        "split": _split(s.final, worker_ids),
        "utilisation": (
            round6(busy_slot_ns(s.spans, slots) / NS_PER_S / (workers * slots * span))
            if span
            else None
        ),
        "ideal_s": round6(ideal),
        "efficiency": round6(ideal / p99) if p99 else None,
    }
    if keep_samples:
        out["_samples"] = samples
    return out


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
    return out


def pooled_phases(reps: Sequence[dict[str, Any]]) -> dict[str, dict[str, float] | None]:
    """Job percentiles over every job of every rep (not a median of per-rep percentiles)."""
    if not reps:
        raise ValueError("no reps to pool")
    if any("_samples" not in rep for rep in reps):
        raise ValueError("pooled_phases needs reps from rep_metrics(..., keep_samples=True)")
    return {
        phase: rounded_phase([v for rep in reps for v in rep["_samples"][phase]])
        for phase in PHASES
    }


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
