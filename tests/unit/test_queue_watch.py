"""What the queue tells the runner's watchdog (fake_queue.queue.watch): work vs heartbeats, jobs a
heartbeat stopped listing, overdue jobs, and injected faults as events. JobQueue in-process on
a clock the test moves."""

from __future__ import annotations

import asyncio

from fake_queue.queue.watch import worker_view
from tests.unit.test_queue import FakeClock, events, in_loop, make_queue


@in_loop
async def test_takes_and_job_done_are_work_a_heartbeat_is_not() -> None:
    clock = FakeClock()
    q = make_queue(clock=clock)
    job = q.submit_many([1])[0]
    take = q.take("w", 1)
    q.deliver(take)
    clock.advance(3)
    q.heartbeat("w", {job.id})
    view = worker_view(q)["w"]
    assert (view["idle_s"], view["last_seen_s"], view["held"], view["polling"]) == (3.0, 0.0, 1, 0)
    q.finish("w", job.id, {"output": 1})
    assert worker_view(q)["w"]["idle_s"] == 0.0 and worker_view(q)["w"]["held"] == 0


@in_loop
async def test_a_held_job_missing_from_two_heartbeats_is_unlisted() -> None:
    clock = FakeClock()
    q = make_queue(clock=clock)
    kept, dropped = q.submit_many([1, 2])
    q.deliver(q.take("w", 2))
    q.heartbeat("w", set())  # at the delivery instant: too soon to say anything
    clock.advance(2)
    q.heartbeat("w", {kept.id})
    assert worker_view(q, ids=True)["w"]["unlisted"] == []  # one miss: maybe in flight
    clock.advance(10)
    q.heartbeat("w", {kept.id})
    view = worker_view(q, ids=True)["w"]
    assert view["unlisted"] == [dropped.id] and view["held_ids"] == sorted([kept.id, dropped.id])
    assert worker_view(q)["w"]["unlisted"] == 1  # without ids: a count


@in_loop
async def test_pings_that_never_list_jobs_say_nothing_about_held_ones() -> None:
    clock = FakeClock()
    q = make_queue(clock=clock)
    q.submit_many([1])
    q.deliver(q.take("w", 1))
    for _ in range(3):
        clock.advance(10)
        q.heartbeat("w", set())
    assert worker_view(q)["w"]["unlisted"] == 0


@in_loop
async def test_jobs_held_longer_than_the_bound_asked_for_are_overdue() -> None:
    clock = FakeClock()
    q = make_queue(clock=clock)
    old = q.submit_many([1])[0]
    q.deliver(q.take("w", 1))
    clock.advance(8)
    q.submit_many([2])
    q.deliver(q.take("w", 1))
    clock.advance(3)
    assert worker_view(q, overdue_s=10, ids=True)["w"]["overdue"] == [old.id]
    assert worker_view(q)["w"]["overdue"] == 0  # no bound asked for: none


@in_loop
async def test_an_injected_fault_is_an_event_naming_route_worker_and_job() -> None:
    q = make_queue()
    q.note_fault("job-done", "drop", "w1", "job-7")
    q.note_fault("run", "429", None, None)
    await asyncio.sleep(0)
    assert [(e["route"], e["kind"], e.get("worker"), e.get("job")) for e in events(q, "fault")] == [
        ("job-done", "drop", "w1", "job-7"),
        ("run", "429", None, None),
    ]


@in_loop
async def test_release_answers_every_waiting_take_and_stop_poll_at_once() -> None:
    q = make_queue()
    take = q.take("w", 4)
    answer = asyncio.ensure_future(q.await_answer(take, lambda: False))
    stops = asyncio.ensure_future(q.next_stops("w", hold_s=60))
    await asyncio.sleep(0.01)
    assert not answer.done() and not stops.done()  # long-polls, held up to the 20 s hold
    assert q.release_long_polls() == 2
    assert await asyncio.wait_for(answer, 1) == [] and await asyncio.wait_for(stops, 1) == []
    assert not q.waiting and worker_view(q)["w"]["polling"] == 0
    q.submit_many([1])  # nothing claims it: the released take is over
    assert q.counts()["in_queue"] == 1


@in_loop
async def test_renewing_answers_the_waiting_takes_empty_and_the_next_ones_claim() -> None:
    q = make_queue()
    stale = q.take("w", 12, job_in_progress=True)  # sent while the rep before was ending
    answer = asyncio.ensure_future(q.await_answer(stale, lambda: False))
    stops = asyncio.ensure_future(q.next_stops("w", hold_s=60))
    await asyncio.sleep(0.01)
    assert q.renew_takes() == 1
    assert worker_view(q)["w"]["polling"] == 0  # at once, so the runner waits for a fresh take
    assert await asyncio.wait_for(answer, 1) == []
    assert not stops.done()  # the job-stop poll is not a take: it stays
    fresh = q.take("w", 50)
    q.submit_many(list(range(60)))
    assert len(fresh.jobs) == 50 and not stale.jobs
    assert [(e["asked"], e["got"], e["kind"]) for e in events(q, "take")] == [(12, 0, "empty")]
    stops.cancel()
