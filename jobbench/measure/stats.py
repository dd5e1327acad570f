"""Statistics over raw samples: exact percentiles, fairness, and baseline-vs-candidate tests.

Pure functions, no I/O. Percentiles are computed from the raw samples (never from histograms) so
tables are exact (docs/metrics.md). Empty input raises ValueError: a figure computed from
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


def median_interval(values: Iterable[float], confidence: float = 0.95) -> tuple[float, float]:
    """A distribution-free interval for the median: the order statistics k and n + 1 - k whose
    binomial(n, 1/2) coverage is at least `confidence` (the whole range when n is too small to
    reach it: 5 values cover 94 %, 6 values 97 %)."""
    ordered = _checked_sorted(values)
    n = len(ordered)
    k = 0  # 0-based: the interval is ordered[k], ordered[n - 1 - k]
    while k + 1 < n - 1 - k and _binomial_coverage(n, k + 1) >= confidence:
        k += 1
    return float(ordered[k]), float(ordered[n - 1 - k])


def _binomial_coverage(n: int, k: int) -> float:
    """P(ordered[k] <= median <= ordered[n - 1 - k]) for 0-based k: 1 - 2 P(Binomial <= k)."""
    tail = sum(math.comb(n, i) for i in range(k + 1)) / (1 << n)
    return 1.0 - 2.0 * tail


def phase_stats(values: Iterable[float]) -> dict[str, float]:
    """p50 / p90 / p99 / max and mean of one job phase (seconds in, seconds out); sorts once.
    The mean is what a pooled per-job figure is built from (sum = mean x jobs)."""
    ordered = _checked_sorted(values)
    return {
        "p50": _percentile_sorted(ordered, 50.0),
        "p90": _percentile_sorted(ordered, 90.0),
        "p99": _percentile_sorted(ordered, 99.0),
        "max": float(ordered[-1]),
        "mean": math.fsum(ordered) / len(ordered),
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


# ---- two samples of per-rep figures: the gate's statistics (docs/ci.md) ----------------------
# Rank-based throughout: rep figures on a shared machine are skewed and heavy-tailed (a pickup
# tick, a neighbour's burst), so the error rates must not rest on normality.
MAD_TO_SD = 1.482602218505602  # the MAD of a normal sample, times this, estimates its sd
# The mean absolute deviation of a normal sample is sqrt(2 / pi) sd, so this times it estimates
# the sd (tests/unit/test_stats.py derives it).
MEAN_AD_TO_SD = math.sqrt(math.pi / 2)


def robust_spread(values: Sequence[float]) -> float:
    """Rep-to-rep noise as a fraction of the median: 1.4826 x MAD / median (0 for one value)."""
    ordered = _checked_sorted(values)
    mid = _percentile_sorted(ordered, 50.0)
    if mid <= 0:
        raise ValueError("robust_spread needs a positive median")
    return MAD_TO_SD * _percentile_sorted(sorted(abs(v - mid) for v in ordered), 50.0) / mid


def outliers(values: Sequence[float], z_limit: float = 3.5, floor: float = 0.01) -> list[bool]:
    """Which values are outliers: modified z-score |x - median| / robust_sd above `z_limit`
    (Iglewicz and Hoaglin's |0.6745 (x - median) / MAD|), and further than `floor` (a fraction)
    from the median, so that a 0.3 % wobble of a very steady figure is never called one."""
    ordered = _checked_sorted(values)
    mid = _percentile_sorted(ordered, 50.0)
    sd = robust_sd(ordered)
    return [
        abs(v - mid) > floor * abs(mid) and (sd == 0 or abs(v - mid) / sd > z_limit) for v in values
    ]


def robust_sd(values: Sequence[float]) -> float:
    """The sd of normal data, estimated robustly: 1.4826 x the median absolute deviation from
    the median; when over half the values are equal (that MAD is 0), mean_deviation_sd (the
    fallback of Iglewicz and Hoaglin's score as IBM SPSS defines it: 1.253314 x MeanAD)."""
    ordered = _checked_sorted(values)
    mid = _percentile_sorted(ordered, 50.0)
    mad = _percentile_sorted(sorted(abs(v - mid) for v in ordered), 50.0)
    return MAD_TO_SD * mad if mad > 0 else mean_deviation_sd(ordered)


def mean_deviation_sd(values: Sequence[float]) -> float:
    """The sd of normal data from its mean absolute deviation from the median:
    sqrt(pi / 2) x MeanAD (MeanAD is sqrt(2 / pi) = 0.7979 sd for a normal sample)."""
    ordered = _checked_sorted(values)
    mid = _percentile_sorted(ordered, 50.0)
    return MEAN_AD_TO_SD * math.fsum(abs(v - mid) for v in ordered) / len(ordered)


EXACT_UP_TO = 50  # reps a side up to which Mann-Whitney's exact distribution is used
TIED_EXACT_UP_TO = 25  # ...and with ties, where it is counted here (cost ~ N^3 n)


def mann_whitney_p(x: Sequence[float], y: Sequence[float], alternative: str) -> float:
    """One-sided Mann-Whitney U p-value that x is stochastically `greater` or `less` than y.

    Exact up to EXACT_UP_TO values a side without ties, up to TIED_EXACT_UP_TO with them:
    scipy's default switches to the normal approximation past 7 or at any tie, which for 8
    fully separated reps a side gives p = 0.0005 instead of the exact 1 / 12870, and two reps
    of one side equal to the microsecond would cost a gate needless reps. Two point masses
    (every x one value, every y another: a deterministic target) differ for certain: 0 or 1."""
    from scipy.stats import mannwhitneyu  # deferred: scipy costs ~0.3 s to import

    if alternative not in ("greater", "less"):
        raise ValueError(f"alternative must be 'greater' or 'less', not {alternative!r}")
    if len(set(x)) == 1 and len(set(y)) == 1:
        (a,), (b,) = set(x), set(y)
        return 0.0 if (a > b if alternative == "greater" else a < b) else 1.0
    tied = len(set(x) | set(y)) < len(x) + len(y)
    if tied and max(len(x), len(y)) <= TIED_EXACT_UP_TO:
        return _tied_exact_p(x, y, alternative)
    exact = not tied and max(len(x), len(y)) <= EXACT_UP_TO
    method = "exact" if exact else "asymptotic"
    return float(mannwhitneyu(x, y, alternative=alternative, method=method).pvalue)


def _tied_exact_p(x: Sequence[float], y: Sequence[float], alternative: str) -> float:
    """The permutation distribution of x's rank sum over the pooled midranks, counted by
    subset-sum over doubled midranks (integers): the exact test with ties that scipy only has
    by enumeration (PermutationMethod: 30 s at 12 a side; this, under a millisecond)."""
    from scipy.stats import rankdata

    doubled = np.rint(2 * rankdata(np.concatenate([x, y]))).astype(np.int64)
    n, total = len(x), int(doubled.sum())
    ways = np.zeros((n + 1, total + 1))  # ways[k, s]: k-subsets of those seen, summing to s
    ways[0, 0] = 1.0
    for rank in doubled:  # numpy reads overlapping operands as if copied first
        ways[1:, rank:] += ways[:-1, : total + 1 - rank]
    sums, observed = ways[n], int(doubled[:n].sum())
    tail = sums[observed:] if alternative == "greater" else sums[: observed + 1]
    return float(tail.sum() / sums.sum())


def min_p(n_x: int, n_y: int) -> float:
    """The smallest one-sided p-value the exact test can give at these sizes: 1 / C(n+m, n).
    Integer division, since past about 500 reps a side C(n+m, n) is too large for a float."""
    return 1 / math.comb(n_x + n_y, n_x)


def log_ratio_estimate(baseline: Sequence[float], candidate: Sequence[float]) -> float:
    """Hodges-Lehmann estimate of log(candidate / baseline): the median pairwise log ratio."""
    base = np.log(np.asarray(baseline, dtype=float))
    cand = np.log(np.asarray(candidate, dtype=float))
    return float(np.median(np.subtract.outer(cand, base)))


def log_shift(
    baseline: Sequence[float], candidate: Sequence[float], confidence: float = 0.95
) -> tuple[float, float, float]:
    """Hodges-Lehmann estimate of log(candidate / baseline) and its distribution-free interval.

    The estimate is the median of all pairwise log ratios; the interval is every shift the
    one-sided Mann-Whitney tests do not reject at (1 - confidence) / 2 each, found by bisection
    over the sorted pairwise ratios (where the test statistic steps)."""
    base = np.log(np.asarray(_checked_sorted(baseline, "baseline"), dtype=float))
    cand = np.log(np.asarray(_checked_sorted(candidate, "candidate"), dtype=float))
    diffs = np.sort(np.subtract.outer(cand, base).ravel())
    tail = (1.0 - confidence) / 2.0

    def kept(index: int, alternative: str) -> bool:
        return mann_whitney_p(cand - diffs[index], base, alternative) >= tail

    low = _first(len(diffs), lambda i: kept(i, "greater"))  # smallest shift not too low
    high = _first(len(diffs), lambda i: not kept(i, "less")) - 1  # largest not too high
    return (
        float(np.median(diffs)),
        float(diffs[max(low, 0)] if low < len(diffs) else diffs[-1]),
        float(diffs[high] if high >= 0 else diffs[0]),
    )


def _first(n: int, test: Callable[[int], bool]) -> int:
    """The first index in [0, n) where a monotone test turns true (n if it never does)."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if test(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo
