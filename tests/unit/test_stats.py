from __future__ import annotations

import random

import numpy as np
import pytest

from jobbench.measure.stats import (
    MEAN_AD_TO_SD,
    jain_fairness,
    log_shift,
    mann_whitney_p,
    mean_deviation_sd,
    median,
    min_p,
    outliers,
    percentile,
    phase_stats,
    robust_sd,
    robust_spread,
    summary,
)


def test_percentile_hand_values_unsorted_input() -> None:
    values = [4.0, 1.0, 3.0, 2.0]
    assert percentile(values, 50) == pytest.approx(2.5)
    assert percentile(values, 90) == pytest.approx(3.7)  # pos 2.7: 3 + 0.7 * (4 - 3)
    assert percentile(values, 0) == 1.0
    assert percentile(values, 100) == 4.0
    assert median([7.0]) == 7.0


@pytest.mark.parametrize("n", [1, 2, 3, 10, 101, 1000])
def test_percentile_matches_numpy_linear(n: int) -> None:
    rng = random.Random(n)
    values = [rng.expovariate(1.0) for _ in range(n)]
    for q in (0, 1, 25, 50, 90, 99, 99.9, 100):
        expected = float(np.percentile(values, q, method="linear"))
        assert percentile(values, q) == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("bad", [[], [1.0, float("nan")]])
def test_percentile_rejects_empty_and_nan(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        percentile(bad, 50)


@pytest.mark.parametrize("q", [-0.1, 100.1])
def test_percentile_rejects_q_out_of_range(q: float) -> None:
    with pytest.raises(ValueError, match="within"):
        percentile([1.0, 2.0], q)


def test_summary() -> None:
    assert summary([3.0, 1.0, 2.0, 10.0]) == {"median": 2.5, "min": 1.0, "max": 10.0, "n": 4}
    with pytest.raises(ValueError, match="empty"):
        summary([])


def test_phase_stats_one_to_hundred() -> None:
    stats = phase_stats(float(v) for v in range(100, 0, -1))
    assert stats["p50"] == pytest.approx(50.5)
    assert stats["p90"] == pytest.approx(90.1)
    assert stats["p99"] == pytest.approx(99.01)
    assert stats["max"] == 100.0
    assert set(stats) == {"p50", "p90", "p99", "max", "mean"}
    with pytest.raises(ValueError):
        phase_stats([])


def test_jain_fairness() -> None:
    assert jain_fairness([256, 256, 256, 256]) == pytest.approx(1.0)
    assert jain_fairness([4, 0, 0, 0]) == pytest.approx(0.25)
    assert jain_fairness([1, 3]) == pytest.approx(16 / 20)


@pytest.mark.parametrize("bad", [[], [0, 0], [1, -1]])
def test_jain_fairness_rejects_undefined(bad: list[int]) -> None:
    with pytest.raises(ValueError):
        jain_fairness(bad)


def test_robust_spread_is_mad_over_median_scaled_to_a_normal_sd() -> None:
    assert robust_spread([10.0, 10.0, 10.0]) == 0.0
    # median 10, absolute deviations 0, 1, 1, 2, 2 -> MAD 1 -> 1.4826 / 10
    assert robust_spread([8.0, 9.0, 10.0, 11.0, 12.0]) == pytest.approx(0.14826, rel=1e-4)
    rng = np.random.default_rng(2)
    assert robust_spread(list(100 + rng.normal(0, 2, 4000))) == pytest.approx(0.02, rel=0.05)
    with pytest.raises(ValueError):
        robust_spread([0.0, 0.0])


def test_outliers_need_a_large_modified_z_and_a_real_distance() -> None:
    steady = [10.0, 10.01, 9.99, 10.02, 9.98, 10.0]
    assert outliers([*steady, 35.0]) == [False] * 6 + [True]
    # 0.8 % off a very steady median: a large z, but under the 1 % floor
    assert outliers([*steady, 10.08]) == [False] * 7
    assert outliers([*steady, 10.08], floor=0.001) == [False] * 6 + [True]
    assert outliers([5.0, 5.0, 5.0, 5.0, 9.0]) == [False] * 4 + [True]  # MAD 0: mean dev
    # a uniform spread has no outliers, however wide
    assert not any(outliers([0.55 + 0.01 * i for i in range(11)]))


def test_the_mean_deviation_fallback_is_consistent_for_the_sd_of_normal_data() -> None:
    """The constant that turns a mean absolute deviation into an sd, derived twice: E|Z| of a
    standard normal is the half-normal's mean, sqrt(2 / pi) = 0.7979, so sd = MeanAD / 0.7979;
    and the ratio sd / MeanAD of a large seeded normal sample."""
    from scipy.stats import halfnorm

    assert 1 / halfnorm.mean() == pytest.approx(MEAN_AD_TO_SD, rel=1e-12)
    sample = np.random.default_rng(35).normal(50.0, 2.0, 100_000)
    derived = sample.std() / np.mean(np.abs(sample - np.median(sample)))
    assert derived == pytest.approx(MEAN_AD_TO_SD, rel=0.01)
    # the code's estimates of the sd agree with the sample's, by either deviation
    assert mean_deviation_sd(list(sample)) == pytest.approx(2.0, rel=0.01)
    assert robust_sd(list(sample)) == pytest.approx(2.0, rel=0.01)


def test_over_half_the_values_equal_judges_outliers_by_the_mean_deviation() -> None:
    # median 10, MAD 0; MeanAD (0.9 + 1.0) / 9, so robust_sd = 1.2533 x 0.2111 = 0.2646:
    # 10.9 is 3.40 of those off (kept; 3.60 with the sd 6 % too small), 9.0 is 3.78 (out)
    values = [10.0] * 7 + [10.9, 9.0]
    assert robust_sd(values) == pytest.approx(MEAN_AD_TO_SD * 1.9 / 9)
    assert outliers(values) == [False] * 8 + [True]


def test_mann_whitney_one_sided_and_its_smallest_p() -> None:
    low, high = [1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0]
    assert mann_whitney_p(high, low, "greater") == pytest.approx(1 / 252) == min_p(5, 5)
    assert mann_whitney_p(high, low, "less") == pytest.approx(1.0)
    assert min_p(6, 6) == pytest.approx(1 / 924)


def test_mann_whitney_with_ties_is_the_exact_permutation_test() -> None:
    from scipy.stats import PermutationMethod, mannwhitneyu

    rng = np.random.default_rng(7)
    for _ in range(20):  # small integer samples: ties within and across the sides
        x = list(rng.integers(0, 5, int(rng.integers(3, 7))).astype(float))
        y = list(rng.integers(0, 5, int(rng.integers(3, 7))).astype(float))
        if len(set(x)) == 1 and len(set(y)) == 1:
            continue
        for side in ("greater", "less"):
            enumerated = mannwhitneyu(
                x, y, alternative=side, method=PermutationMethod(n_resamples=np.inf)
            ).pvalue
            assert mann_whitney_p(x, y, side) == pytest.approx(enumerated, rel=1e-9)
    # two equal reps of one side do not cost fully separated sides their exact p (the normal
    # approximation gives 0.0009 here: a gate would need reps it does not)
    low, high = [1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0]
    assert mann_whitney_p(high, low, "greater") == pytest.approx(min_p(7, 7)) == 1 / 3432


def test_mann_whitney_of_two_point_masses_is_certain() -> None:
    # a deterministic target repeats its figure exactly: the sides differ or they do not
    assert mann_whitney_p([2.0] * 3, [1.0] * 3, "greater") == 0.0
    assert mann_whitney_p([2.0] * 3, [1.0] * 3, "less") == 1.0
    assert mann_whitney_p([1.0] * 3, [1.0] * 4, "greater") == 1.0
    with pytest.raises(ValueError, match="alternative"):
        mann_whitney_p([1.0, 2.0], [3.0, 4.0], "two-sided")


def test_log_shift_is_hodges_lehmann_with_a_rank_interval() -> None:
    rng = np.random.default_rng(4)
    base = list(10 * np.exp(rng.normal(0, 0.02, 12)))
    cand = [v * 1.2 for v in rng.permutation(base)]  # exactly +20 %, shuffled
    estimate, low, high = log_shift(base, cand)
    assert estimate == pytest.approx(np.log(1.2), abs=1e-9)
    assert low < estimate < high
    # the interval is the set of shifts the tests keep: just inside it neither rejects
    assert mann_whitney_p([c / np.exp(low) for c in cand], base, "greater") >= 0.025
    assert mann_whitney_p([c / np.exp(high) for c in cand], base, "less") >= 0.025
    # and it narrows with more reps
    wide = log_shift(base[:5], cand[:5])
    assert wide[2] - wide[1] > high - low
    with pytest.raises(ValueError):
        log_shift([], [1.0])
