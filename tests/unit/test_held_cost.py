"""Take-ahead's cost from the event log (measure/held.py) on hand-built spans: a job held in one
worker's buffer while another worker had a free slot, and only that, is counted, by its extra
wait; a job held while every other worker was busy costs nothing."""

from __future__ import annotations

import pytest

from jobbench.measure.held import held_cost, holds, slot_starts

S = 1_000_000_000  # ns


def test_a_job_starts_when_a_slot_frees_first_come_first_served() -> None:
    # 2 slots; three jobs delivered at 0: the third starts when the first frees (at 1 s)
    assert slot_starts([(0, 1 * S), (0, 2 * S), (0, 3 * S)], 2) == [0, 0, 1 * S]


def test_a_job_held_while_another_worker_idles_counts_its_extra_wait() -> None:
    # w0 (1 slot) holds two jobs: the second waits 0 -> 1 s; w1 ran nothing: idle all along
    spans = {"w0": [(0, 1 * S), (0, 2 * S)], "w1": [(0, 0)]}
    cost = held_cost(holds(spans, slots=1))
    assert cost["jobs"] == 1 and cost["buffered_jobs"] == 1
    assert cost["extra_wait_s"] == pytest.approx(1.0)
    assert cost["per_worker"]["w0"] == {"jobs": 1, "extra_wait_s": 1.0}
    assert cost["per_worker"]["w1"] == {"jobs": 0, "extra_wait_s": 0.0}


def test_a_job_held_while_every_other_worker_is_busy_costs_nothing() -> None:
    # w1 is busy 0 -> 3 s: w0's held job (waits 0 -> 1 s) had nowhere else to go
    spans = {"w0": [(0, 1 * S), (0, 2 * S)], "w1": [(0, 3 * S)]}
    cost = held_cost(holds(spans, slots=1))
    assert cost["buffered_jobs"] == 1 and cost["jobs"] == 0
    assert cost["extra_wait_s"] == 0 and cost["extra_wait_p99_s"] is None


def test_only_the_part_of_the_wait_with_a_free_slot_elsewhere_counts() -> None:
    # w0's second job waits 0 -> 2 s; w1 is busy until 0.5 s, then free: 1.5 s of extra wait
    spans = {"w0": [(0, 2 * S), (0, 3 * S)], "w1": [(0, S // 2)]}
    cost = held_cost(holds(spans, slots=1))
    assert cost["jobs"] == 1
    assert cost["extra_wait_s"] == pytest.approx(1.5)
    assert cost["extra_wait_max_s"] == pytest.approx(1.5)


def test_no_buffer_no_cost() -> None:
    spans = {"w0": [(0, S), (S, 2 * S)], "w1": [(0, S)]}  # each job delivered to a free slot
    cost = held_cost(holds(spans, slots=1))
    assert cost["jobs"] == 0 and cost["buffered_jobs"] == 0


def test_a_worker_that_ran_nothing_is_free_all_along() -> None:
    spans = {"w0": [(0, 1 * S), (0, 2 * S)]}
    assert held_cost(holds(spans, slots=1))["jobs"] == 0  # alone: nowhere else to go
    cost = held_cost(holds(spans, slots=1, workers=["w0", "w1"]))
    assert cost["jobs"] == 1 and cost["per_worker"]["w1"]["jobs"] == 0
