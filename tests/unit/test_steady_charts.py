"""The page's "Steady state over time" charts (render/page/steady_charts.py) from a rep's steady
block: a side from the queue's log draws its buffered and held jobs and the spread across
workers; a live side, which has neither, draws only what it measured."""

from __future__ import annotations

from typing import Any

from jobbench.render.page import steady_charts
from jobbench.render.page.steady_charts import SteadySide
from jobbench.results.model import Steady


def steady(slotted: bool) -> Steady:
    windows: list[dict[str, Any]] = []
    for k in range(4):
        window: dict[str, Any] = {
            "start_s": float(k),
            "arrivals": 10,
            "completions": 10,
            "queue_depth": k,
            "e2e_p50_s": 0.5 + k / 10,
            "e2e_p99_s": 0.6 + k / 10,
        }
        if slotted:
            window |= {"busy_slots": [1.0, 0.5], "delivered": [7, 3], "buffered": 0.5}
            window |= {"free_slots": 0.5, "held_jobs": k}
        windows.append(window)
    return Steady.model_validate(
        {
            "window_s": 1.0,
            "windows": windows,
            "warmup_s": 1.0,
            "steady_s": 3.0,
            "arrival_rate_jps": 10.0,
            "completion_rate_jps": 10.0,
            "e2e_p50_s": 0.6,
            "e2e_p99_s": 0.9,
            "ideal_e2e_p99_s": 0.55 if slotted else None,
            "queue_growth": 3,
            "saturated": False,
        }
    )


def test_a_queue_side_draws_its_buffers_held_jobs_ideal_and_spread() -> None:
    sides = [SteadySide("a", "main", steady(True))]
    latency = steady_charts.latency(sides).svg
    assert "ideal dispatcher: steady p99" in latency and "main: e2e p99" in latency
    depth = steady_charts.depth(sides).svg
    assert "main: in buffers (mean)" in depth and "main: held while a slot was free" in depth
    spread = steady_charts.spread(sides)
    assert spread is not None and "main: most to one worker" in spread.svg


def test_a_live_side_draws_only_what_a_client_sees() -> None:
    sides = [SteadySide("a", "live", steady(False))]
    assert "ideal dispatcher" not in steady_charts.latency(sides).svg
    depth = steady_charts.depth(sides).svg
    assert "live: queued" in depth and "in buffers" not in depth and "held while" not in depth
    assert steady_charts.spread(sides) is None
