"""The watchdog's rules (core/real_workers/watchdog.py) on scripted views of the queue: what is a
stall, when a stall ends, when a worker is given up, which jobs are lost."""

from __future__ import annotations

from typing import Any

import pytest

from fake_queue.queue.latency import LatencyModel
from jobbench.core.real_workers.watchdog import Watchdog, lost_jobs, maybe_lost
from jobbench.core.scenario.config import Scenario
from jobbench.core.scenario.watch_bounds import watch_bounds
from jobbench.workers.spec import WorkerSpec

BOUNDS = watch_bounds(Scenario("s", job_seconds=0.5))


def seen(
    idle_s: float, held: int = 0, polling: int = 0, work_ns: int = 1, **more: Any
) -> dict[str, Any]:
    return {"idle_s": idle_s, "held": held, "polling": polling, "last_work_ns": work_ns, **more}


def test_bounds_follow_the_jobs_and_a_stall_bound_given_sets_the_others() -> None:
    assert (BOUNDS.stall_s, BOUNDS.give_up_s) == (5.0, 20.0)  # the floor, for short jobs
    long_jobs = watch_bounds(Scenario("s", job_seconds=10.0))
    assert long_jobs.stall_s == pytest.approx(2 * 10 + 0.5 + 0.05 + 1)
    assert long_jobs.overdue_s > 2 * 10 * 2  # a full slot round and the buffer's
    ahead = watch_bounds(Scenario("s", job_seconds=1.0, worker=WorkerSpec("model", take_ahead=64)))
    plain = watch_bounds(Scenario("s", job_seconds=1.0))
    assert ahead.overdue_s - plain.overdue_s == pytest.approx(2 * 1.0 * 2)  # two more rounds
    given = watch_bounds(Scenario("s", stall_s=1.0, latency=LatencyModel()))
    assert (given.stall_s, given.give_up_s) == (1.0, 4.0)


def test_a_worker_holding_jobs_silent_past_the_bound_stalls_then_resumes() -> None:
    dog = Watchdog(BOUNDS, ["w0", "w1"], began=100.0)
    assert dog.observe(104.0, {"w0": seen(4.0, held=32)}, queued=0) == []  # not yet
    lines = dog.observe(106.0, {"w0": seen(5.5, held=32), "w1": seen(0.1, held=32)}, queued=0)
    assert lines == ["worker w0 stalled: no take and no job-done for 5.5 s while holding 32 jobs"]
    assert dog.stalled == {"w0"}
    assert dog.observe(107.0, {"w0": seen(6.5, held=32)}, queued=0) == []  # same stall
    lines = dog.observe(110.0, {"w0": seen(0.2, held=31, work_ns=2)}, queued=0)
    assert lines == ["worker w0 resumed after 9.3 s"]
    assert dog.anomalies(111.0) == [
        {"kind": "stall", "worker": "w0", "at_s": 0.5, "for_s": 9.3, "held": 32, "resumed": True}
    ]


def test_a_take_waiting_at_the_queue_or_nothing_to_do_is_not_a_stall() -> None:
    dog = Watchdog(BOUNDS, ["w0", "w1", "w2"], began=0.0)
    view = {
        "w0": seen(30.0, held=4, polling=1),  # take-ahead: holding and asking for more
        "w1": seen(30.0),  # idle, queue empty: nothing to do
        "w2": seen(30.0, polling=1),  # waiting for jobs
    }
    assert dog.observe(30.0, view, queued=0) == []
    assert dog.observe(31.0, {"w1": seen(31.0)}, queued=5) != []  # jobs wait, it does not ask


def test_a_requested_pause_is_no_anomaly_and_never_given_up_while_it_lasts() -> None:
    dog = Watchdog(BOUNDS, ["w0"], began=0.0)
    assert dog.observe(10.0, {"w0": seen(10.0, held=8)}, queued=0, paused={"w0"}) == []
    assert dog.hung(30.0, paused={"w0"}) is None
    assert dog.anomalies(30.0) == []
    hung = dog.hung(30.0)
    assert hung is not None and hung.worker == "w0"  # the pause is over: it should be back


def test_a_worker_silent_past_the_give_up_bound_is_hung() -> None:
    dog = Watchdog(BOUNDS, ["w0"], began=0.0)
    dog.observe(6.0, {"w0": seen(5.0, held=8)}, queued=0)
    assert dog.hung(20.9) is None
    assert dog.hung(21.0) is not None
    assert dog.anomalies(25.0)[0]["resumed"] is False


def test_lost_jobs_are_unlisted_overdue_or_held_by_a_worker_that_is_gone() -> None:
    counts = {
        "w0": seen(0.1, held=3, unlisted=1, overdue=1),
        "w1": seen(0.1, held=5, unlisted=0, overdue=0),
        "w2": seen(9.0, held=2, unlisted=0, overdue=2),
    }
    assert maybe_lost(counts) == 4
    assert maybe_lost(counts, gone={"w1"}) == 9
    assert maybe_lost(counts, stalled={"w2"}) == 2  # a stalled worker may come back
    ids = {
        "w0": {"held_ids": ["a", "b", "c"], "unlisted": ["a"], "overdue": ["b"]},
        "w1": {"held_ids": ["d", "e"], "unlisted": [], "overdue": []},
        "w2": {"held_ids": ["f"], "unlisted": [], "overdue": ["f"]},
    }
    assert lost_jobs(ids) == {"a", "b", "f"}
    assert lost_jobs(ids, gone={"w1"}, stalled={"w2"}) == {"a", "b", "d", "e"}
