"""An arrival profile's `arrivals` block (results/model_result.py ArrivalPacing): how late the
driver sent each submission after its intended time. Shared by the fake queue's pacer
(core/real_workers/submit_pacer.py) and live reps (live_metrics.py), so both say "late" the same
way."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

LATE_S = 0.002  # a submission sent later than this after its intended time counts as late


def pacing_figures(
    spec: str,
    lateness_s: Sequence[float],
    jobs_per_submission: Sequence[int],
    requests: int,
    jobs: int,
) -> dict[str, Any]:
    """The block for `jobs` jobs of profile `spec`: each submission sent (in the profile's
    order) was `lateness_s` late and carried `jobs_per_submission` jobs, in `requests`
    requests; the jobs of submissions never sent are `not_sent`."""
    late = np.array(lateness_s, dtype=np.float64)
    counts = jobs_per_submission[: len(lateness_s)]

    def pick(q: float) -> float | None:
        return round(float(np.percentile(late, q)), 6) if late.size else None

    return {
        "spec": spec,
        "submissions": len(lateness_s),
        "requests": requests,
        "jobs": jobs,
        "lateness_p50_s": pick(50),
        "lateness_p99_s": pick(99),
        "lateness_max_s": round(float(late.max()), 6) if late.size else None,
        "late_jobs": sum(
            count for late_s, count in zip(lateness_s, counts, strict=True) if late_s > LATE_S
        ),
        "late_bound_s": LATE_S,
        "not_sent": jobs - sum(counts),
    }
