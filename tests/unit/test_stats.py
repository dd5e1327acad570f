from __future__ import annotations

import random

import numpy as np
import pytest

from jobbench.stats import (
    bootstrap_ratio_ci,
    jain_fairness,
    mann_whitney_p,
    median,
    percentile,
    phase_stats,
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
    assert set(stats) == {"p50", "p90", "p99", "max"}
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


def test_bootstrap_constant_samples_give_exact_ratio() -> None:
    assert bootstrap_ratio_ci([2.0, 2.0, 2.0], [1.0, 1.0, 1.0]) == pytest.approx((0.5, 0.5))


def test_bootstrap_interval_brackets_a_clear_halving_and_excludes_one() -> None:
    rng = random.Random(3)
    baseline = [10.0 + rng.uniform(-0.5, 0.5) for _ in range(20)]
    candidate = [5.0 + rng.uniform(-0.25, 0.25) for _ in range(20)]
    low, high = bootstrap_ratio_ci(baseline, candidate)
    assert 0.45 < low <= 0.5 <= high < 0.55


def test_bootstrap_is_seeded_and_fast_path_matches_generic_stat() -> None:
    rng = random.Random(5)
    baseline = [rng.uniform(1, 2) for _ in range(7)]
    candidate = [rng.uniform(1, 3) for _ in range(6)]
    first = bootstrap_ratio_ci(baseline, candidate, seed=1)
    assert bootstrap_ratio_ci(baseline, candidate, seed=1) == first
    assert bootstrap_ratio_ci(baseline, candidate, seed=2) != first
    generic = bootstrap_ratio_ci(baseline, candidate, stat=lambda v: median(v), seed=1)
    assert generic == pytest.approx(first, rel=1e-12)
    assert first[0] < first[1]


def test_bootstrap_custom_stat_is_used() -> None:
    baseline = [1.0, 1.0, 4.0]  # resampled medians are 1 or 4: the default stat would vary
    low, high = bootstrap_ratio_ci(baseline, [2.0, 2.0, 2.0], stat=lambda v: 2.0, n_resamples=50)
    assert (low, high) == (1.0, 1.0)


@pytest.mark.parametrize(
    ("baseline", "candidate", "kwargs"),
    [
        ([], [1.0], {}),
        ([1.0], [], {}),
        ([0.0, 0.0], [1.0], {}),
        ([1.0], [1.0], {"confidence": 1.0}),
        ([1.0], [1.0], {"n_resamples": 0}),
    ],
)
def test_bootstrap_rejects_bad_input(
    baseline: list[float], candidate: list[float], kwargs: dict[str, float]
) -> None:
    with pytest.raises(ValueError):
        bootstrap_ratio_ci(baseline, candidate, **kwargs)  # type: ignore[arg-type]


def test_mann_whitney() -> None:
    # Fully separated 5 vs 5: exact two-sided p = 2 / C(10, 5) = 2 / 252.
    p = mann_whitney_p([1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0])
    assert p == pytest.approx(2 / 252)
    assert mann_whitney_p([1.0, 1.0, 1.0], [1.0, 1.0, 1.0]) == pytest.approx(1.0)
    assert mann_whitney_p([1.0, 2.0], [3.0, 4.0, 5.0]) is None
    assert mann_whitney_p([1.0, 2.0, 3.0], [4.0, 5.0]) is None
    with pytest.raises(ValueError):
        mann_whitney_p([], [1.0, 2.0, 3.0])
