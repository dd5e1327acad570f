"""Why a rep could not finish (core/real_workers/stuck.py), from the queue's views of the workers as
the runner's watch looks see them: each likely cause is named with its figures, and a rep with
none says so rather than nothing."""

from __future__ import annotations

from typing import Any

from jobbench.core.real_workers.stuck import StuckWatch


def seen(held: int, polling: int = 0) -> dict[str, Any]:
    """A worker as fake_queue.queue.watch shows it to the runner (the fields these rules read)."""
    return {"held": held, "polling": polling, "idle_s": 0.1, "last_work_ns": 1}


def watched(slots: int, looks: list[tuple[dict[str, dict[str, Any]], int]]) -> StuckWatch:
    watch = StuckWatch(slots, sorted({w for view, _ in looks for w in view}))
    for view, queued in looks:
        watch.observe(view, queued)
    return watch


def test_workers_running_one_job_at_a_time_below_their_slots_are_the_cause() -> None:
    """The runpod SDK without a concurrency_modifier at --slots 16: one job each, the rest
    queued; its 1 s re-check leaves a worker idle for a look now and then, which is no idle
    worker."""
    held = [(1, 1), (1, 0), (1, 1), (0, 1)]
    looks = [({"w0": seen(a), "w1": seen(b)}, 40 - i) for i, (a, b) in enumerate(held)]
    (cause,) = watched(16, looks).causes(0.5)
    assert cause.startswith(
        "workers below their declared concurrency: w0, w1 held at most 1 job at once though "
        "--slots is 16, while jobs were queued"
    )
    assert "give --slots as the worker's concurrency or raise it" in cause


def test_jobs_held_by_a_stalled_worker_are_named_with_their_count() -> None:
    looks = [({"w0": seen(4), "w1": seen(4, polling=1)}, 0)] * 3
    (cause,) = watched(4, looks).causes(0.5, stalled={"w0"})
    assert cause.startswith("jobs held by a stalled worker (w0 holds 4)")


def test_a_worker_idle_with_jobs_queued_is_named() -> None:
    """w1 holds nothing and asks for nothing while 10 jobs wait; w0 runs its slots full, and
    then (w1 held jobs before) stops asking for more for 4 looks in a row."""
    said = "held no job and had no take waiting while jobs were queued"
    never = [({"w0": seen(4), "w1": seen(0)}, 10)] * 3
    assert watched(4, never).causes(0.5) == [f"workers idle with jobs queued: w1 {said}"]
    stopped = [({"w0": seen(4), "w1": seen(4)}, 10), *[({"w0": seen(4), "w1": seen(0)}, 10)] * 4]
    assert watched(4, stopped).causes(0.5) == [f"workers idle with jobs queued: w1 {said}"]
    assert "idle" not in " ".join(watched(4, stopped[:-1]).causes(0.5))  # 3 looks: not yet


def test_every_worker_full_with_jobs_queued_points_at_the_job_length() -> None:
    looks = [({"w0": seen(4), "w1": seen(4)}, 10)] * 3
    assert watched(4, looks).causes(0.5) == [
        "every worker ran its 4 slots full while jobs were queued: the jobs take longer than "
        "--job-seconds 0.5, which the timeout is sized from"
    ]


def test_nothing_seen_is_said_with_the_last_look() -> None:
    looks = [({"w0": seen(2, polling=1)}, 0)]
    assert watched(4, looks).causes(0.5) == [
        "none seen (0 jobs queued, 2 held by the workers at the last look)"
    ]
