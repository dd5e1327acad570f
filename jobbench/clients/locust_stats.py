"""Read Locust's `--json-file` stats and judge the JOB rows (no locust import: plain JSON)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jobbench.errors import RunFailed


@dataclass(frozen=True)
class JobStats:
    """Every JOB row of a Locust run together (response times in ms, as Locust keeps them).

    Locust counts each response time rounded to 2 significant digits (1,275 ms lands in the
    1,300 ms bucket) and keeps the max to the ms, so the percentiles here come from those
    buckets and one may lie above the max: each is clamped to it, and `clamped` names those
    whose bucket did, with the bucket, so the summary can say so.
    """

    jobs: int
    failures: int
    p50_ms: float | None
    p99_ms: float | None
    max_ms: float | None
    clamped: tuple[tuple[str, float], ...] = ()  # (percentile, its bucket), bucket over the max

    @property
    def fail_ratio(self) -> float:
        return self.failures / self.jobs if self.jobs else 0.0

    def describe(self) -> str:
        if not self.jobs:
            return "no job finished"
        times = ""
        if self.p50_ms is not None and self.p99_ms is not None and self.max_ms is not None:
            times = (
                f"; end-to-end p50 {self.p50_ms / 1000:.3f} s, p99 {self.p99_ms / 1000:.3f} s, "
                f"max {self.max_ms / 1000:.3f} s ({self._bucket_note()})"
            )
        return f"{self.jobs} jobs, {self.failures} failed ({self.fail_ratio:.2%}){times}"

    def _bucket_note(self) -> str:
        """Why a reader should not take the percentiles to the ms: they are Locust's buckets."""
        note = "p50 and p99 from Locust's buckets, times rounded to 2 significant digits"
        for name, bucket_ms in self.clamped:
            note += (
                f"; {name}'s bucket, {bucket_ms / 1000:.3f} s, is above the max: shown as the max"
            )
        return note


def read_stats(path: Path) -> list[dict[str, Any]]:
    try:
        rows = json.loads(path.read_text())
    except FileNotFoundError:
        raise RunFailed(f"Locust wrote no stats to {path}; see its output above") from None
    except (OSError, ValueError) as exc:
        raise RunFailed(f"{path}: not Locust's JSON stats ({exc})") from None
    if not isinstance(rows, list):
        raise RunFailed(f"{path}: not Locust's JSON stats (expected a list of rows)")
    return [row for row in rows if isinstance(row, dict)]


def _percentile(histogram: dict[float, int], q: float) -> float | None:
    total = sum(histogram.values())
    if not total:
        return None
    needed = max(1, -(-total * q // 1))  # the ceil(q * n)-th sample
    seen = 0
    for value in sorted(histogram):
        seen += histogram[value]
        if seen >= needed:
            return value
    return max(histogram)


def job_stats(rows: list[dict[str, Any]]) -> JobStats:
    """JOB rows pooled: counts add up; percentiles from Locust's rounded response-time counts,
    never above the max (which Locust keeps to the ms, not in a bucket)."""
    jobs = [row for row in rows if row.get("method") == "JOB"]
    histogram: dict[float, int] = {}
    for row in jobs:
        for key, count in (row.get("response_times") or {}).items():
            histogram[float(key)] = histogram.get(float(key), 0) + int(count)
    maxima = [float(row["max_response_time"]) for row in jobs if row.get("max_response_time")]
    max_ms = max(maxima) if maxima else None
    p50_ms, p99_ms = _percentile(histogram, 0.5), _percentile(histogram, 0.99)
    named = (("p50", p50_ms), ("p99", p99_ms))
    return JobStats(
        jobs=sum(int(row.get("num_requests", 0)) for row in jobs),
        failures=sum(int(row.get("num_failures", 0)) for row in jobs),
        p50_ms=_at_most(p50_ms, max_ms),
        p99_ms=_at_most(p99_ms, max_ms),
        max_ms=max_ms,
        clamped=tuple((name, ms) for name, ms in named if ms is not None and _above(ms, max_ms)),
    )


def _above(value: float | None, limit: float | None) -> bool:
    return value is not None and limit is not None and value > limit


def _at_most(value: float | None, limit: float | None) -> float | None:
    return limit if _above(value, limit) else value
