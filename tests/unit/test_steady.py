"""Steady-state figures of a profile's rep (measure/steady.py) on hand-built event logs: windows
count arrivals and completions, the warm-up is detected (MSER-5) or set, a queue that grows
without bound is called saturated, the ideal dispatcher's latency is exact, and the per-window
slot figures follow each worker's slots."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from jobbench.measure.events import scan_events
from jobbench.measure.held import holds
from jobbench.measure.ideal_dispatch import ideal_ends
from jobbench.measure.metrics import ideal_time
from jobbench.measure.steady import Capacity, live_steady_figures, mser_truncation, steady_figures

S = 1_000_000_000


def log(
    submits: list[int], service_ns: int, *, wake_ns: int = 0, free_at: int = 0
) -> list[dict[str, Any]]:
    """One worker serving one job at a time, `service_ns` each, jobs submitted at `submits`,
    each claimed no sooner than `wake_ns` after its submit, the worker free from `free_at`."""
    events: list[dict[str, Any]] = []
    for i, t in enumerate(submits):
        job = f"j{i}"
        events.append({"t": t, "ev": "submit", "job": job})
        claim = max(t + wake_ns, free_at)
        free_at = claim + service_ns
        events.append({"t": claim, "ev": "claim", "job": job, "take": i, "worker": "w0"})
        events.append({"t": claim, "ev": "deliver", "job": job, "take": i, "worker": "w0"})
        events.append(
            {"t": free_at, "ev": "done", "job": job, "status": "COMPLETED", "worker": "w0"}
        )
    return sorted(events, key=lambda e: e["t"])  # log order: by time (stable)


TEN_A_SECOND = [i * S // 10 for i in range(100)]  # 10 jobs/s for 10 s


def test_a_fleet_that_keeps_up_is_steady_from_the_start_with_its_rates_and_latency() -> None:
    steady = steady_figures(scan_events(log(TEN_A_SECOND, S // 20)))  # 50 ms each
    assert steady is not None and not steady["saturated"]
    assert steady["warmup"] == "detected" and steady["warmup_s"] == 0.0  # flat: nothing to cut
    assert steady["arrival_rate_jps"] == 10.0
    assert abs(steady["completion_rate_jps"] - 10.0) < 0.2
    assert steady["e2e_p50_s"] == 0.05 and steady["e2e_p99_s"] == 0.05
    assert steady["wait_p99_s"] == 0.0 and steady["service_p50_s"] == 0.05
    first = steady["windows"][0]
    assert first["arrivals"] == 10 and first["completions"] == 10 and first["queue_depth"] == 0
    assert first["service_p99_s"] == 0.05 and first["wait_p50_s"] == 0.0


def test_a_rate_beyond_capacity_is_saturated() -> None:
    steady = steady_figures(scan_events(log(TEN_A_SECOND, S // 5)))  # served at 5 jobs/s
    assert steady is not None and steady["saturated"]
    assert steady["queue_growth"] > 20
    assert steady["windows"][-1]["queue_depth"] > 0 or steady["windows"][-1]["arrivals"] == 0


def test_a_queue_that_creeps_up_is_saturated_by_its_trend() -> None:
    # 10 jobs/s at 104 ms each (9.6 a second): the queue gains a job every 2.6 s or so, a few
    # per cent of the arrivals; its fitted trend rises all along the steady part.
    arrivals = [i * S // 10 for i in range(300)]
    steady = steady_figures(scan_events(log(arrivals, 104 * S // 1000)))
    assert steady is not None and steady["saturated"]
    assert 0.2 < steady["queue_trend_jps"] < 0.6
    keeps_up = steady_figures(scan_events(log(arrivals, 96 * S // 1000)))
    assert keeps_up is not None and not keeps_up["saturated"]
    assert keeps_up["queue_trend_jps"] == 0.0


def test_a_late_start_is_detected_as_warm_up_and_left_out_of_the_steady_latency() -> None:
    # The worker starts 2 s late: 20 jobs queue, drain at 20 jobs/s, and from about 4 s on
    # every job takes its 50 ms. The backlog must be cut, the steady latency be the 50 ms.
    steady = steady_figures(scan_events(log(TEN_A_SECOND, S // 20, free_at=2 * S)))
    assert steady is not None and steady["warmup"] == "detected"
    assert 2.0 <= steady["warmup_s"] <= 5.0
    assert steady["e2e_p99_s"] == 0.05
    assert steady["windows"][0]["e2e_p99_s"] is None  # nothing ended in the first second
    assert steady["windows"][2]["queue_depth"] > 0


def test_a_warm_up_the_profile_sets_is_used() -> None:
    steady = steady_figures(scan_events(log(TEN_A_SECOND, S // 20, free_at=2 * S)), warmup_s=1.0)
    assert steady is not None and steady["warmup"] == "set" and steady["warmup_s"] == 1.0
    assert steady["e2e_p99_s"] is not None and steady["e2e_p99_s"] > 0.5  # the backlog is in


def test_mser_cuts_a_transient_and_nothing_from_a_flat_series() -> None:
    rng = np.random.default_rng(3)
    noise = rng.normal(0.0, 0.01, 1000)
    assert mser_truncation(1.0 + noise) <= 100  # stationary: little or nothing cut
    transient = np.concatenate((np.linspace(5.0, 1.0, 200), np.ones(800))) + noise
    assert 150 <= mser_truncation(transient) <= 260
    assert mser_truncation(np.ones(1000)) == 0
    assert mser_truncation(np.ones(12)) == 0  # too few batches to judge


def test_the_ideal_dispatcher_is_the_bursts_ideal_and_exact_for_spread_arrivals() -> None:
    # One atomic burst: the last end is the burst's ideal (docs/latency-model.md).
    burst = ideal_ends([0] * 1000, 64, 100, 5)
    assert max(burst) == round(ideal_time(1000, 8, 8, 100, 5))
    # Two slots, jobs of 10, wake 1: arrivals at 0, 0, 0, 4, 30 by hand.
    assert ideal_ends([0, 0, 0, 4, 30], 2, 10, 1) == [11, 11, 21, 21, 41]
    with pytest.raises(ValueError, match="capacity"):
        ideal_ends([0], 0, 1, 1)


def test_the_ideal_and_the_efficiency_of_a_profile() -> None:
    # Measured: one server, 50 ms jobs, 10 ms wake: every job 60 ms, exactly the ideal.
    capacity = Capacity(workers=1, slots=1, job_s=0.05, wake_s=0.01)
    events = log(TEN_A_SECOND, S // 20, wake_ns=S // 100)
    steady = steady_figures(scan_events(events), capacity=capacity)
    assert steady is not None
    assert steady["ideal_e2e_p99_s"] == steady["e2e_p99_s"] == 0.06
    assert steady["efficiency"] == 1.0
    # 150 ms jobs at 10 a second on one server saturate; two slots keep up: the ideal (on the
    # fleet's two slots) is the 160 ms of every job, the measured p99 far above it.
    two = Capacity(workers=2, slots=1, job_s=0.15, wake_s=0.01)
    saturated = steady_figures(
        scan_events(log(TEN_A_SECOND, 3 * S // 20, wake_ns=S // 100)), capacity=two
    )
    assert saturated is not None and saturated["saturated"]
    assert saturated["ideal_e2e_p99_s"] == saturated["ideal_e2e_p50_s"] == 0.16
    assert saturated["efficiency"] == pytest.approx(0.16 / saturated["e2e_p99_s"], abs=1e-6)
    assert saturated["efficiency"] < 0.2


def test_each_windows_slots_deliveries_buffer_and_held_jobs_per_worker() -> None:
    # w0 (one slot) is handed two 1 s jobs at 0 and runs them one after the other; w1 has a
    # free slot all along: the second job waits its whole first second in w0's buffer, held
    # while a slot was free elsewhere, and leaves the buffer at 1 s.
    events = [
        {"t": 0, "ev": "submit", "job": "a"},
        {"t": 0, "ev": "submit", "job": "b"},
        {"t": 0, "ev": "claim", "job": "a", "worker": "w0"},
        {"t": 0, "ev": "claim", "job": "b", "worker": "w0"},
        {"t": 0, "ev": "deliver", "job": "a", "worker": "w0"},
        {"t": 0, "ev": "deliver", "job": "b", "worker": "w0"},
        {"t": S, "ev": "done", "job": "a", "status": "COMPLETED", "worker": "w0"},
        {"t": 2 * S, "ev": "done", "job": "b", "status": "COMPLETED", "worker": "w0"},
    ]
    s = scan_events(events)
    held = holds(s.busy_spans(), 1, ["w0", "w1"])
    steady = steady_figures(s, held=held)
    assert steady is not None and steady["workers"] == ["w0", "w1"]
    first, second = steady["windows"]
    assert first["busy_slots"] == [1.0, 0.0] and second["busy_slots"] == [1.0, 0.0]
    assert first["free_slots"] == second["free_slots"] == 1.0  # w1's, all along
    assert first["delivered"] == [2, 0] and second["delivered"] == [0, 0]
    assert first["buffered"] == 1.0 and second["buffered"] == 0.0
    assert first["held_jobs"] == 0 and second["held_jobs"] == 1


def test_a_live_reps_steady_block_from_client_times_and_sampled_depth() -> None:
    served = [(t, t + S // 10, t + S // 5) for t in TEN_A_SECOND]  # 100 ms wait, 100 ms run
    depth = [(k * S, 1) for k in range(11)]  # /health saw one job queued each second
    steady = live_steady_figures(served, TEN_A_SECOND, depth)
    assert steady is not None and not steady["saturated"]
    assert steady["wait_p99_s"] == 0.1 and steady["service_p99_s"] == 0.1
    assert steady["e2e_p50_s"] == 0.2 and steady["windows"][3]["queue_depth"] == 1
    assert "busy_slots" not in steady["windows"][0] and "ideal_e2e_p99_s" not in steady
    assert math.isclose(steady["arrival_rate_jps"], 10.0)
