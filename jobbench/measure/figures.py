"""What a rep's figures are made of, shared by fake-queue reps (metrics.py) and live reps
(live_metrics.py), so both report a time to X %, a throughput and a split the same way.

A rep is measured once into a RepMeasure: the figures a result stores, and beside them (never
inside: a result keeps summaries, not every job) the per-job samples that pool across reps.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any

from jobbench.measure.stats import jain_fairness, phase_stats

NS_PER_S = 1e9
# Time-to-X% rows: (output key, percent of submitted jobs that must have COMPLETED). None = 1 job.
# Before results said `time_to_counts: "completed"`, they counted every terminal job.
TIME_TO: tuple[tuple[str, int | None], ...] = (
    ("time_to_first_s", None),
    ("time_to_p50_s", 50),
    ("time_to_p99_s", 99),
    ("time_to_p100_s", 100),
)


@dataclass(frozen=True, slots=True)
class PhaseSamples:
    """Per-job seconds of each phase, completed jobs only: kept raw so that percentiles pooled
    over reps are exact (a median of per-rep percentiles is not a percentile of the jobs)."""

    queue_wait: tuple[float, ...] = ()
    service: tuple[float, ...] = ()
    e2e: tuple[float, ...] = ()

    def by_phase(self) -> dict[str, tuple[float, ...]]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def figures(self) -> dict[str, dict[str, float] | None]:
        """The rep's `phases` figure: rounded stats per phase, None where no job was served."""
        return {phase: rounded_phase(values) for phase, values in self.by_phase().items()}


PHASES = tuple(f.name for f in fields(PhaseSamples))


@dataclass(frozen=True, slots=True)
class RepMeasure:
    """One rep, measured once: `figures` as the result stores them, `samples` for pooling."""

    figures: dict[str, Any]
    samples: PhaseSamples


def round6(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def rounded_phase(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {k: round(v, 6) for k, v in phase_stats(values).items()}


def _s(ns: int) -> float:
    return round(ns / NS_PER_S, 6)


def times_to(done_ts: Sequence[int], start: int, n: int) -> dict[str, float | None]:
    """Time until ceil(pct% of n) jobs completed (`done_ts`: their ends); integer maths so 99%
    of 100 is 99, not 100; None where fewer completed (a rep whose jobs failed never reaches it).
    At least one job: with none submitted (n=0: a live burst that had none accepted), all None.
    Times in ns."""
    out: dict[str, float | None] = {}
    for key, pct in TIME_TO:
        needed = 1 if pct is None else max(1, -(-n * pct // 100))
        out[key] = _s(done_ts[needed - 1] - start) if needed <= len(done_ts) else None
    return out


def drain_figures(
    done_ts: Sequence[int], start: int, n: int, completed: int
) -> tuple[dict[str, float | None], float | None]:
    """Times to X % and the throughput, and the span they were measured over (s): an incomplete
    rep is measured up to its last completed job rather than reported as nothing. Times in ns,
    `done_ts` the completed jobs' ends, sorted."""
    times = times_to(done_ts, start, n)
    span = times["time_to_p100_s"]
    if span is None and done_ts:
        span = _s(done_ts[-1] - start)
    return {**times, "throughput_jps": round6(completed / span) if span else None}, span


def split_figures(
    served_by: Iterable[str | None], worker_ids: Sequence[str] | None = None
) -> dict[str, Any]:
    """How evenly the served jobs spread: `served_by` is the worker of each served job (None:
    unknown, skipped); `worker_ids` adds the workers that got nothing."""
    counts = dict.fromkeys(worker_ids or (), 0)
    for worker in served_by:
        if worker:
            counts[worker] = counts.get(worker, 0) + 1
    values = list(counts.values())
    served = sum(values) > 0
    return {
        "jobs_per_worker": dict(sorted(counts.items())),
        # None, not infinity, when a worker got nothing: JSON has no infinity.
        "max_min_ratio": round6(max(values) / min(values)) if served and min(values) > 0 else None,
        "jain": round6(jain_fairness(values)) if served else None,
    }
