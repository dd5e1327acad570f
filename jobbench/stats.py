"""Statistics over raw samples: exact percentiles, fairness, and baseline-vs-candidate tests.

Pure functions, no I/O. Percentiles are computed from the raw samples (never from histograms) so
tables are exact (design.md section 6). Empty input raises ValueError: a figure computed from
nothing would be a silent lie in a report.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

import numpy as np


def _checked_sorted(values: Iterable[float], what: str = "values") -> list[float]:
    ordered = sorted(values)
    if not ordered:
        raise ValueError(f"{what} is empty: a statistic needs at least one sample")
    if any(math.isnan(v) for v in ordered):
        raise ValueError(f"{what} contains NaN")
    return ordered


def _percentile_sorted(ordered: Sequence[float], q: float) -> float:
    """numpy's "linear" method (Hyndman & Fan type 7) on an already sorted, non-empty list."""
    pos = (len(ordered) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    frac = pos - lo
    # Return the sample itself at exact ranks so p100 == max bit for bit.
    if frac == 0.0:
        return float(ordered[lo])
    return float(ordered[lo] + (ordered[hi] - ordered[lo]) * frac)


def percentile(values: Iterable[float], q: float) -> float:
    """The q-th percentile (q in [0, 100]) of values, sorted or not, by linear interpolation."""
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile q must be within [0, 100], got {q}")
    return _percentile_sorted(_checked_sorted(values), q)


def median(values: Iterable[float]) -> float:
    return percentile(values, 50.0)


def summary(values: Iterable[float]) -> dict[str, float]:
    """Median, min, max and count: the across-reps view of one figure."""
    ordered = _checked_sorted(values)
    return {
        "median": _percentile_sorted(ordered, 50.0),
        "min": float(ordered[0]),
        "max": float(ordered[-1]),
        "n": len(ordered),
    }


def phase_stats(values: Iterable[float]) -> dict[str, float]:
    """p50 / p90 / p99 / max of one job phase (seconds in, seconds out); sorts once."""
    ordered = _checked_sorted(values)
    return {
        "p50": _percentile_sorted(ordered, 50.0),
        "p90": _percentile_sorted(ordered, 90.0),
        "p99": _percentile_sorted(ordered, 99.0),
        "max": float(ordered[-1]),
    }


def jain_fairness(counts: Iterable[float]) -> float:
    """Jain's index (sum x)^2 / (n * sum x^2): 1.0 is a perfectly even split, 1/n all on one."""
    xs = list(counts)
    if not xs:
        raise ValueError("counts is empty: fairness needs at least one worker")
    if any(x < 0 for x in xs):
        raise ValueError("counts must not be negative")
    squares = sum(x * x for x in xs)
    if squares == 0:
        raise ValueError("every count is zero: fairness is undefined")
    return float(sum(xs) ** 2 / (len(xs) * squares))


def bootstrap_ratio_ci(
    baseline: Sequence[float],
    candidate: Sequence[float],
    stat: Callable[[Sequence[float]], float] = median,
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile-bootstrap CI for stat(candidate) / stat(baseline), each side resampled alone.

    Seeded so the same inputs always give the same interval (reports must be reproducible).
    """
    base = np.asarray(_checked_sorted(baseline, "baseline"), dtype=float)
    cand = np.asarray(_checked_sorted(candidate, "candidate"), dtype=float)
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be within (0, 1), got {confidence}")
    rng = np.random.default_rng(seed)
    base_rows = base[rng.integers(0, base.size, size=(n_resamples, base.size))]
    cand_rows = cand[rng.integers(0, cand.size, size=(n_resamples, cand.size))]
    if stat is median:  # vectorised fast path; np.median is the same linear-method median
        base_stats = np.median(base_rows, axis=1)
        cand_stats = np.median(cand_rows, axis=1)
    else:
        base_stats = np.array([stat(list(row)) for row in base_rows], dtype=float)
        cand_stats = np.array([stat(list(row)) for row in cand_rows], dtype=float)
    if np.any(base_stats == 0.0):
        raise ValueError("the baseline statistic is zero in a resample: the ratio is undefined")
    ratios = sorted((cand_stats / base_stats).tolist())
    tail = (1.0 - confidence) / 2.0 * 100.0
    return _percentile_sorted(ratios, tail), _percentile_sorted(ratios, 100.0 - tail)


def mann_whitney_p(baseline: Sequence[float], candidate: Sequence[float]) -> float | None:
    """Two-sided Mann-Whitney U p-value; None below 3 samples a side, where it means nothing."""
    base = _checked_sorted(baseline, "baseline")
    cand = _checked_sorted(candidate, "candidate")
    if len(base) < 3 or len(cand) < 3:
        return None
    from scipy.stats import mannwhitneyu  # deferred: scipy costs ~0.3 s to import

    return float(mannwhitneyu(base, cand, alternative="two-sided").pvalue)
