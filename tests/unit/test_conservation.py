"""check_conservation (measure/conservation.py), the check after every rep: submitted =
completed + failed + cancelled + timed out + still queued or running, per the queue's books and
per its event log; no job lost, none counted twice. `state` and `events` come from a real
in-process JobQueue, shaped as /_bench/state and /_bench/events?cursor= return them; then
broken by hand."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fake_queue.protocol import COMPLETED
from fake_queue.queue.job_queue import JobQueue
from jobbench.errors import RunFailed
from jobbench.measure.conservation import check_conservation
from tests.unit.test_queue import FakeClock, in_loop, make_queue

BURST = 8


def state(q: JobQueue) -> dict[str, Any]:
    """What GET /_bench/state answers (fake_queue/http/app.py bench_state)."""
    return {"counts": q.counts(), "conservation": q.conservation_error()}


def rep_events(q: JobQueue, cursor: int) -> list[dict[str, Any]]:
    events, _ = q.events_since(cursor)
    return events


def run_a_rep(q: JobQueue, clock: FakeClock) -> int:
    """A rep as a run drives one: reset (the cursor), a burst, then every way a job can end.
    Leaves 1 job running and 1 queued; returns the rep's cursor."""
    q.reset()
    cursor = q.events_base
    jobs = q.submit_many([{"n": i} for i in range(BURST)], ttl_s=10.0)
    first = q.take("w1", 3).jobs
    q.deliver(first[0].take)  # type: ignore[arg-type]
    q.finish("w1", first[0].id, {"output": 1})
    q.finish("w1", first[1].id, {"error": "boom"})  # FAILED
    q.cancel(first[2].id)  # cancelled while running
    q.cancel(jobs[3].id)  # cancelled while queued
    second = q.take("w2", 2)
    q.deliver(second)
    q.finish("w2", second.jobs[0].id, {"output": 2})  # the other stays IN_PROGRESS
    clock.advance(11)  # past the ttl: the next take times out what is still queued ...
    late = q.submit_many([{"n": "late"}])  # ... except a job submitted now, claimed
    assert q.take("w3", 1).jobs == late
    return cursor


Rep = tuple[JobQueue, int, list[dict[str, Any]]]  # the queue, the rep's cursor, the rep before


@pytest.fixture
def queue_after_a_rep() -> Rep:
    holder: list[Rep] = []

    @in_loop
    async def body() -> None:
        clock = FakeClock()
        q = make_queue(clock=clock)
        q.submit_many(range(3))  # the previous rep: its jobs and events before the cursor
        q.deliver(q.take("w1", 3))
        for job in list(q.jobs.values()):
            q.finish("w1", job.id, {"output": 0})
        before = rep_events(q, 0)
        holder.append((q, run_a_rep(q, clock), before))

    body()
    return holder[0]


def test_a_rep_with_every_ending_balances(queue_after_a_rep: Rep) -> None:
    q, cursor, _ = queue_after_a_rep
    counts = q.counts()
    assert counts == {
        "submitted": BURST + 1,
        "completed": 2,
        "failed": 1,
        "cancelled": 2,
        "timed_out": 2,
        "in_queue": 1,
        "in_progress": 1,
    }
    check_conservation(state(q), rep_events(q, cursor), BURST + 1)


def test_the_previous_reps_events_are_not_this_reps(
    queue_after_a_rep: Rep,
) -> None:
    q, cursor, before = queue_after_a_rep
    events = before + rep_events(q, cursor)  # a log read from the wrong cursor
    with pytest.raises(RunFailed, match="event log has 10 finished jobs, the queue counts 7"):
        check_conservation(state(q), events, BURST + 1)


def test_a_burst_the_queue_did_not_get_whole_is_jobs_lost(
    queue_after_a_rep: Rep,
) -> None:
    q, cursor, _ = queue_after_a_rep
    with pytest.raises(RunFailed, match=f"jobs lost: submitted {BURST + 1} of {BURST + 2}"):
        check_conservation(state(q), rep_events(q, cursor), BURST + 2)


@pytest.mark.parametrize(
    ("key", "by"),
    [
        ("completed", -1),  # a finished job missing from the books
        ("timed_out", +1),  # one counted twice
        ("in_queue", -1),  # a queued job lost
        ("in_progress", +1),  # a running job counted twice
    ],
)
def test_counts_that_do_not_add_up_are_jobs_lost(queue_after_a_rep: Rep, key: str, by: int) -> None:
    q, cursor, _ = queue_after_a_rep
    broken = copy.deepcopy(state(q))
    broken["counts"][key] += by
    with pytest.raises(RunFailed, match="jobs lost"):
        check_conservation(broken, rep_events(q, cursor), BURST + 1)


def test_a_job_finished_twice_in_the_event_log_is_counted_twice(
    queue_after_a_rep: Rep,
) -> None:
    q, cursor, _ = queue_after_a_rep
    events = rep_events(q, cursor)
    done = next(e for e in events if e["ev"] == "done")
    with pytest.raises(RunFailed, match=rf"jobs counted twice: \['{done['job']}'\] \(1 in all\)"):
        check_conservation(state(q), [*events, dict(done)], BURST + 1)


def test_an_event_log_missing_a_finished_job_disagrees_with_the_books(
    queue_after_a_rep: Rep,
) -> None:
    q, cursor, _ = queue_after_a_rep
    events = rep_events(q, cursor)
    dropped = next(i for i, e in enumerate(events) if e["ev"] == "done")
    with pytest.raises(RunFailed, match="event log has 6 finished jobs, the queue counts 7"):
        check_conservation(state(q), events[:dropped] + events[dropped + 1 :], BURST + 1)


def test_books_the_queue_itself_finds_unbalanced_fail_the_rep(
    queue_after_a_rep: Rep,
) -> None:
    q, cursor, _ = queue_after_a_rep
    q.tally[COMPLETED] += 1  # a completion on the books that no job has
    broken = state(q)
    assert broken["conservation"] is not None
    with pytest.raises(RunFailed, match="the queue's books do not balance: status tally"):
        check_conservation(broken, rep_events(q, cursor), BURST + 1)
