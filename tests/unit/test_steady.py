"""Steady-state figures of a profile's rep (measure/steady.py) on hand-built event logs: windows
count arrivals and completions, the steady part follows the warm-up, and a queue that grows
without bound is called saturated."""

from __future__ import annotations

from typing import Any

from jobbench.measure.events import scan_events
from jobbench.measure.steady import steady_figures

S = 1_000_000_000


def log(submits: list[int], service_ns: int, every_ns: int) -> list[dict[str, Any]]:
    """One worker serving one job at a time, `service_ns` each, jobs submitted at `submits`."""
    events: list[dict[str, Any]] = []
    free_at = 0
    for i, t in enumerate(submits):
        job = f"j{i}"
        events.append({"t": t, "ev": "submit", "job": job})
        claim = max(t, free_at)
        free_at = claim + service_ns
        events.append({"t": claim, "ev": "claim", "job": job, "take": i, "worker": "w0"})
        events.append({"t": claim, "ev": "deliver", "job": job, "take": i, "worker": "w0"})
        events.append(
            {"t": free_at, "ev": "done", "job": job, "status": "COMPLETED", "worker": "w0"}
        )
    return sorted(events, key=lambda e: e["t"])  # log order: by time (stable)


def test_a_fleet_that_keeps_up_is_steady_with_its_rates_and_latency() -> None:
    submits = [i * S // 10 for i in range(100)]  # 10 jobs/s for 10 s
    steady = steady_figures(scan_events(log(submits, S // 20, S // 10)))  # 50 ms each
    assert steady is not None and not steady["saturated"]
    assert steady["warmup_s"] == 1.0  # at least one window
    assert steady["arrival_rate_jps"] == 10.0
    assert abs(steady["completion_rate_jps"] - 10.0) < 0.2
    assert steady["e2e_p50_s"] == 0.05 and steady["e2e_p99_s"] == 0.05
    first = steady["windows"][0]
    assert first["arrivals"] == 10 and first["completions"] == 10 and first["queue_depth"] == 0


def test_a_rate_beyond_capacity_is_saturated() -> None:
    submits = [i * S // 10 for i in range(100)]  # 10 jobs/s, served at 5 jobs/s
    steady = steady_figures(scan_events(log(submits, S // 5, S // 10)))
    assert steady is not None and steady["saturated"]
    assert steady["queue_growth"] > 30
    assert steady["windows"][-1]["queue_depth"] > 0 or steady["windows"][-1]["arrivals"] == 0
