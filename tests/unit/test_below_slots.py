"""A worker that runs fewer jobs at once than its declared slots (measure/concurrency.py), over
hand-built event logs: named only when it never held nor asked for its slots while a take of
it left jobs in the queue; a short burst, a worker asking for its free slots mid-drain, or a
take that emptied the queue are not."""

from __future__ import annotations

from jobbench.measure.concurrency import below_slots, below_slots_text, most_at_once
from jobbench.measure.events import Run, scan_events
from jobbench.measure.metrics import rep_measure
from jobbench.results.model import Rep
from tests.unit.test_metrics import Event, done, ev, run, take


def one_at_a_time(jobs: int, worker: str = "w1") -> list[Event]:
    """A worker that asks for one job a take and runs it before asking again (the runpod SDK
    without a concurrency_modifier), a 0.1 s take each time, over a burst of `jobs`."""
    events = [ev("submit", 0.0, job=f"j{i}") for i in range(jobs)]
    for i in range(jobs):
        arrived = 0.2 * i
        kind = "woken" if i == 0 else "queued"
        events += [
            *run(f"j{i}", i, worker, arrived, arrived + 0.1),
            take(i, worker, 1, 1, arrived=arrived - 0.01 * (i == 0), at=arrived + 0.1, kind=kind),
            done(f"j{i}", worker, arrived + 0.15),
        ]
    return events


def test_a_worker_running_one_job_at_a_time_below_its_slots_is_named() -> None:
    (found,) = below_slots(scan_events(one_at_a_time(5)), slots=4)
    assert (found.worker, found.ran_at_most, found.asked_at_most, found.slots) == ("w1", 1, 1, 4)
    assert found.short_takes == 3  # takes 2-4 left jobs queued; the last took the last job
    assert below_slots_text(found.to_json()) == (
        "worker w1 ran at most 1 job at once though --slots is 4: it asked for at most 1 a "
        "take while jobs waited, so its handler's concurrency_modifier (or the worker's own "
        "setting) is 1; give --slots 1 or raise its concurrency"
    )


def test_the_same_worker_at_its_real_concurrency_is_not_named() -> None:
    assert below_slots(scan_events(one_at_a_time(5)), slots=1) == []


def test_a_burst_smaller_than_the_slots_is_not_a_shortfall() -> None:
    """It asked for its 4 slots and got the 2 jobs there were."""
    events = [
        *(ev("submit", 0.0, job=f"j{i}") for i in range(2)),
        *run("j0", 1, "w1", 0.0, 0.05),
        *run("j1", 1, "w1", 0.0, 0.05),
        take(1, "w1", 4, 2, arrived=-0.5, at=0.05, kind="woken"),
        done("j0", "w1", 0.5),
        done("j1", "w1", 0.5),
    ]
    assert below_slots(scan_events(events), slots=4) == []


def test_a_worker_asking_for_its_free_slots_mid_drain_is_not_named() -> None:
    """Its first take asked for all 4 slots; later ones for the slots that had freed, and got
    them while jobs waited: it runs its slots."""
    events = [
        *(ev("submit", 0.0, job=f"j{i}") for i in range(8)),
        *(e for i in range(4) for e in run(f"j{i}", 1, "w1", 0.0, 0.05)),
        take(1, "w1", 4, 4, arrived=-0.5, at=0.05, kind="woken"),
        done("j0", "w1", 0.3),
        done("j1", "w1", 0.3),
        *(e for i in (4, 5) for e in run(f"j{i}", 2, "w1", 0.31, 0.41)),
        take(2, "w1", 2, 2, arrived=0.31, at=0.41, kind="queued"),  # 2 still queued after
        *(done(f"j{i}", "w1", 0.6) for i in (2, 3, 4, 5)),
        *(e for i in (6, 7) for e in run(f"j{i}", 3, "w1", 0.61, 0.71)),
        take(3, "w1", 4, 2, arrived=0.61, at=0.71, kind="queued"),
        *(done(f"j{i}", "w1", 0.9) for i in (6, 7)),
    ]
    assert below_slots(scan_events(events), slots=4) == []


def test_a_take_that_emptied_the_queue_is_no_evidence() -> None:
    """One job at a time, but each take found exactly the one job there was: nothing waited
    that the worker could have taken."""
    events = []
    for i in range(3):
        at = 0.5 * i
        events += [
            ev("submit", at, job=f"j{i}"),
            *run(f"j{i}", i, "w1", at + 0.01, at + 0.11),
            take(i, "w1", 1, 1, arrived=at + 0.01, at=at + 0.11, kind="queued"),
            done(f"j{i}", "w1", at + 0.2),
        ]
    assert below_slots(scan_events(events), slots=4) == []


def test_most_at_once_counts_overlap_and_keeps_open_runs_open() -> None:
    runs = [Run("w", 0, 10), Run("w", 10, 20), Run("w", 5, None), Run("w", 15, 16)]
    assert most_at_once(runs) == 3  # 15-16: the second, the open one and the last
    assert most_at_once([]) == 0


def test_a_rep_keeps_its_workers_below_slots_and_only_then() -> None:
    params = {"workers": 1, "burst": 5, "job_seconds": 0.05, "wake_latency_s": 0.01}
    below = rep_measure(one_at_a_time(5), slots=4, **params).figures
    assert below["below_slots"] == [
        {"worker": "w1", "slots": 4, "ran_at_most": 1, "asked_at_most": 1, "short_takes": 3}
    ]
    assert Rep.model_validate(below).below_slots is not None  # the result's schema reads it
    assert "below_slots" not in rep_measure(one_at_a_time(5), slots=1, **params).figures
