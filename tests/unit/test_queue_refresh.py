"""refresh_worker at the queue (JobQueue.refresh): a job-done with `stopPod` is logged once a
worker's life, the worker gets no job from then on (its waiting takes and stop poll answered
now, later takes parked, claiming nothing) until the runner reports the fresh process."""

from __future__ import annotations

import asyncio

from fake_queue.queue.watch import worker_view
from tests.unit.test_queue import (
    events,
    ids,
    in_loop,
    in_virtual_time,
    make_queue,
    never,
    virtual_queue,
)


@in_virtual_time
async def test_stop_pod_logs_a_refresh_answers_the_workers_long_polls_and_parks_its_takes() -> None:
    q, loop = virtual_queue()
    first, second = q.submit_many(range(2))
    q.deliver(q.take("w", 1))  # w holds the first job
    waiting = asyncio.create_task(q.await_answer(q.take("w", 1), never))  # claims the second
    await asyncio.sleep(1.0)
    stop_poll = asyncio.create_task(q.next_stops("w"))
    await asyncio.sleep(0.1)
    assert q.finish("w", first.id, {"output": 1, "stopPod": True}) == "done"
    (refresh,) = events(q, "refresh")
    assert refresh == {"t": loop.now_ns(), "ev": "refresh", "worker": "w", "job": first.id}
    assert q.events.index(refresh) == q.events.index(events(q, "done", job=first.id)[0]) + 1
    assert ids(await waiting or []) == [second.id]  # claimed before the refresh: delivered
    assert await stop_poll == []  # answered now: an SDK told to exit waits for it

    more = q.submit_many(range(2))
    parked = q.take("w", 2)
    answering = asyncio.create_task(q.await_answer(parked, never))
    await asyncio.sleep(5.0)
    assert not parked.jobs and ids(q.queued) == ids(more)  # it claims nothing
    assert worker_view(q)["w"]["polling"] == 1 and worker_view(q)["w"]["refresh"] == first.id
    assert q.finish("w", second.id, {"output": 2, "stopPod": True}) == "done"
    assert len(events(q, "refresh")) == 1  # the same stop, asked again

    assert q.release_long_polls("w") == 1  # the runner stops it
    assert not await answering  # answered now, with nothing
    assert worker_view(q)["w"]["polling"] == 0
    q.refreshed("w", 0)  # and starts a fresh one under the same id
    assert events(q, "refreshed") == [
        {"t": loop.now_ns(), "ev": "refreshed", "worker": "w", "rc": 0}
    ]
    assert "refresh" not in worker_view(q)["w"]
    fresh = q.take("w", 2)
    assert ids(fresh.jobs) == ids(more)
    assert q.conservation_error() is None


@in_virtual_time
async def test_a_parked_take_is_answered_empty_after_the_hold() -> None:
    q, loop = virtual_queue()
    job = q.submit(1)
    q.deliver(q.take("w", 1))
    q.finish("w", job.id, {"output": 1, "stopPod": True})
    q.submit(2)
    take = q.take("w", 1)
    assert await q.await_answer(take, never) is None
    assert loop.now_ns() == take.arrived_ns + int(20.0 * 1e9)
    assert not q.workers["w"].parked and q.workers["w"].waiting_takes == 0
    assert events(q, "take", take=take.id)[0]["kind"] == "empty"


@in_loop
async def test_a_refresh_on_an_ignored_job_done_counts_and_progress_never_does() -> None:
    q = make_queue()
    job = q.submit(1)
    q.deliver(q.take("w", 1))
    assert q.finish("w", job.id, {"status": "IN_PROGRESS", "stopPod": True}) == "progress"
    assert not events(q, "refresh")
    q.cancel(job.id)
    assert q.finish("w", job.id, {"output": 1, "stopPod": True}) == "ignored"
    assert [e["job"] for e in events(q, "refresh")] == [job.id]


@in_loop
async def test_stopping_every_worker_ends_refreshes_in_course_and_a_cancelled_park_unparks() -> (
    None
):
    q = make_queue()
    job = q.submit(1)
    q.deliver(q.take("w", 1))
    q.finish("w", job.id, {"output": 1, "stopPod": True})
    gone = q.take("w", 1)
    q.abandon(gone)  # its client went away
    assert not q.workers["w"].parked
    q.take("w", 1)
    assert q.release_long_polls() == 1
    assert q.workers["w"].refresh_job is None and not q.workers["w"].parked
    q.submit(2)
    assert len(q.take("w", 1).jobs) == 1


@in_loop
async def test_a_refresh_not_carried_out_by_the_next_reps_reset_is_void() -> None:
    q = make_queue()
    job = q.submit(1)
    q.deliver(q.take("w", 1))
    q.finish("w", job.id, {"output": 1, "stopPod": True})
    parked = q.take("w", 1)  # a replacement started another way (a --worker-fault's)
    q.reset()
    assert parked.claimed.done() and not q.workers["w"].parked  # answered: it polls again
    assert "refresh" not in worker_view(q)["w"]
    q.submit(2)
    assert len(q.take("w", 1).jobs) == 1
