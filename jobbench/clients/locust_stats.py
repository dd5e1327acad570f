"""Read Locust's `--json-file` stats and judge the JOB rows (no locust import: plain JSON)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jobbench.errors import RunFailed


@dataclass(frozen=True)
class JobStats:
    """Every JOB row of a Locust run together (response times in ms, as Locust keeps them)."""

    jobs: int
    failures: int
    p50_ms: float | None
    p99_ms: float | None
    max_ms: float | None

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
                f"max {self.max_ms / 1000:.3f} s"
            )
        return f"{self.jobs} jobs, {self.failures} failed ({self.fail_ratio:.2%}){times}"


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
    """JOB rows pooled: counts add up; percentiles from Locust's rounded response-time counts."""
    jobs = [row for row in rows if row.get("method") == "JOB"]
    histogram: dict[float, int] = {}
    for row in jobs:
        for key, count in (row.get("response_times") or {}).items():
            histogram[float(key)] = histogram.get(float(key), 0) + int(count)
    maxima = [float(row["max_response_time"]) for row in jobs if row.get("max_response_time")]
    return JobStats(
        jobs=sum(int(row.get("num_requests", 0)) for row in jobs),
        failures=sum(int(row.get("num_failures", 0)) for row in jobs),
        p50_ms=_percentile(histogram, 0.5),
        p99_ms=_percentile(histogram, 0.99),
        max_ms=max(maxima) if maxima else None,
    )
