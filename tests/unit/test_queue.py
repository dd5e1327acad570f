"""JobQueue in-process (no sockets): claiming, waking, abandoning, cancels, timeouts, ttl, retry,
purge, job-done semantics, reset and the event log; plus a random-operation conservation check.

Every test runs on its own event loop (`asyncio.run`); the queue needs a running loop for its
futures and timers. Where a test needs time to pass (ttl) it injects a fake clock it drives
instead of sleeping; a take's life in time (hold, answer time, done latency, stop hold) runs
on a virtual-time loop (fake_queue.queue.virtual_clock), whose clock jumps to the next timer.
"""

from __future__ import annotations

import ast
import asyncio
import functools
import inspect
import sys
import time
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fake_queue.protocol import (
    CANCELLED,
    COMPLETED,
    FAILED,
    IN_PROGRESS,
    IN_QUEUE,
    TERMINAL,
    TIMED_OUT,
)
from fake_queue.queue import virtual_clock
from fake_queue.queue.clock import MONOTONIC, Clock
from fake_queue.queue.job_queue import Job, JobError, JobQueue, Take
from fake_queue.queue.latency import Distribution, LatencyModel, LatencySampler
from fake_queue.queue.virtual_clock import VirtualTimeLoop

TAKE_S, WAKE_S, HOLD_S = 0.5, 0.05, 20.0
TAKE_NS, WAKE_NS = int(TAKE_S * 1e9), int(WAKE_S * 1e9)


def in_loop(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test body on a fresh event loop."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        asyncio.run(fn(*args, **kwargs))

    return wrapper


def make_queue(
    take: float = TAKE_S,
    wake: float = WAKE_S,
    seed: int = 1,
    clock: Clock = MONOTONIC,
    done: float = 0.0,
) -> JobQueue:
    model = LatencyModel(
        take=Distribution("fixed", take),
        wake=Distribution("fixed", wake),
        hold=Distribution("fixed", HOLD_S),
        done=Distribution("fixed", done),
    )
    return JobQueue(LatencySampler(model, seed), clock)


class FakeClock:
    """A clock the test moves by hand (the queue's timers still run on the real loop)."""

    def __init__(self, start: int = 1_000_000_000_000) -> None:
        self.t = start

    def now_ns(self) -> int:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += int(seconds * 1e9)


def events(q: JobQueue, ev: str | None = None, **match: Any) -> list[dict[str, Any]]:
    return [
        e
        for e in q.events
        if (ev is None or e["ev"] == ev) and all(e.get(k) == v for k, v in match.items())
    ]


def ids(jobs: Any) -> list[str]:
    return [job.id for job in jobs]


# ---- claiming ------------------------------------------------------------------------------


@in_loop
async def test_take_claims_fifo_at_one_instant_and_is_answered_after_take_latency() -> None:
    q = make_queue()
    jobs = q.submit_many([{"n": i} for i in range(5)])
    take = q.take("w1", 3)
    assert take.claimed.done()
    assert take.kind == "queued"
    assert ids(take.jobs) == ids(jobs[:3])
    claims = events(q, "claim", take=take.id)
    assert [e["job"] for e in claims] == ids(jobs[:3])
    assert {e["t"] for e in claims} == {take.arrived_ns}
    assert all(e["worker"] == "w1" for e in claims)
    assert take.answer_at_ns - take.arrived_ns == TAKE_NS
    assert ids(q.queued) == ids(jobs[3:])
    assert all(job.status == IN_QUEUE and job.take is take for job in jobs[:3])
    assert q.conservation_error() is None

    # a take asking for more than is queued claims what there is: min(asked, queued)
    second = q.take("w2", 10)
    assert ids(second.jobs) == ids(jobs[3:])
    assert second.kind == "queued"
    assert not q.queued and not q.waiting


@in_loop
async def test_take_asking_fewer_than_queued_leaves_the_rest_in_order() -> None:
    q = make_queue()
    jobs = q.submit_many(range(4))
    take = q.take("w", 1)
    assert ids(take.jobs) == [jobs[0].id]
    assert ids(q.queued) == ids(jobs[1:])


@in_loop
async def test_take_on_empty_queue_waits_and_is_woken_oldest_first() -> None:
    q = make_queue()
    first = q.take("a", 1)
    second = q.take("b", 1)
    assert not first.claimed.done() and not second.claimed.done()
    assert list(q.waiting) == [first, second]
    job = q.submit({"x": 1})
    submit_t = events(q, "submit", job=job.id)[0]["t"]
    assert first.claimed.done() and ids(first.jobs) == [job.id]
    assert first.kind == "woken"
    assert first.answer_at_ns == submit_t + WAKE_NS
    assert events(q, "claim", job=job.id)[0]["t"] == submit_t
    assert not second.claimed.done() and list(q.waiting) == [second]
    job2 = q.submit({"x": 2})
    assert ids(second.jobs) == [job2.id]
    assert not q.waiting
    assert q.conservation_error() is None


@in_loop
async def test_burst_wakes_as_many_waiters_as_it_can_fill_oldest_first() -> None:
    q = make_queue()
    takes = [q.take(f"w{i}", 2) for i in range(4)]
    jobs = q.submit_many(range(5))
    at = events(q, "submit")[0]["t"]
    assert {e["t"] for e in events(q, "submit")} == {at}  # one instant
    assert [ids(t.jobs) for t in takes[:3]] == [ids(jobs[0:2]), ids(jobs[2:4]), ids(jobs[4:5])]
    assert all(t.kind == "woken" and t.answer_at_ns == at + WAKE_NS for t in takes[:3])
    assert {e["t"] for e in events(q, "claim")} == {at}
    assert not takes[3].claimed.done() and list(q.waiting) == [takes[3]]
    assert not q.queued


@in_loop
async def test_burst_bigger_than_waiters_leaves_the_rest_queued() -> None:
    q = make_queue()
    takes = [q.take(f"w{i}", 1) for i in range(3)]
    jobs = q.submit_many(range(10))
    assert [ids(t.jobs) for t in takes] == [[j.id] for j in jobs[:3]]
    assert ids(q.queued) == ids(jobs[3:])
    assert not q.waiting


@in_loop
async def test_give_up_waiting_logs_an_empty_take() -> None:
    q = make_queue()
    take = q.take("w", 4, job_in_progress=True)
    q.give_up_waiting(take)
    assert not q.waiting
    (ev,) = events(q, "take", take=take.id)
    assert ev["kind"] == "empty" and ev["got"] == 0 and ev["asked"] == 4
    assert ev["in_progress"] is True and ev["arrived"] == take.arrived_ns
    assert q.workers["w"].waiting_takes == 0
    job = q.submit(1)
    assert take.jobs == [] and ids(q.queued) == [job.id]


# ---- a take's life in time (await_answer), on virtual time -----------------------------------


def in_virtual_time(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test body on a fresh virtual-time loop: its timers fire at once, exactly."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        virtual_clock.run(fn(*args, **kwargs), start_s=100.0)

    return wrapper


def virtual_queue(**kwargs: Any) -> tuple[JobQueue, VirtualTimeLoop]:
    loop = asyncio.get_running_loop()
    assert isinstance(loop, VirtualTimeLoop)
    return make_queue(clock=loop, **kwargs), loop


def never() -> bool:
    return False


@in_virtual_time
async def test_a_queued_take_is_delivered_take_latency_after_it_arrived() -> None:
    q, loop = virtual_queue()
    jobs = q.submit_many(range(3))
    take = q.take("w", 2)
    seen: list[tuple[list[str], int]] = []
    answer = await q.await_answer(take, never, lambda js: seen.append((ids(js), loop.now_ns())))
    assert answer is not None and ids(answer) == ids(jobs[:2])
    assert seen == [(ids(jobs[:2]), take.arrived_ns)]  # rendered early, on claiming
    assert loop.now_ns() == take.arrived_ns + TAKE_NS
    (ev,) = events(q, "take", take=take.id)
    assert ev["t"] == ev["due"] == take.arrived_ns + TAKE_NS and ev["kind"] == "queued"
    assert {e["t"] for e in events(q, "deliver", take=take.id)} == {ev["t"]}
    assert all(job.status == IN_PROGRESS for job in answer)


@in_loop
async def test_takes_whose_instants_passed_together_all_answer_before_any_is_booked() -> None:
    # Three takes due 1 ms apart, the loop held past all three: the first instant's timer
    # answers every one of them, each answer going out before any take is booked, so the
    # later answers do not wait behind the earlier ones' bookkeeping.
    q = make_queue(take=0.02)
    q.submit_many(range(6))
    takes = [q.take(f"w{i}", 2) for i in range(3)]
    for i, take in enumerate(takes):
        take.answer_at_ns = takes[0].answer_at_ns + i * 1_000_000
    booked_at_each_send: list[list[str]] = []

    def send(jobs: list[Job]) -> None:
        booked_at_each_send.append([job.status for t in takes for job in t.jobs])

    answering = [asyncio.ensure_future(q.await_answer(t, never, send=send)) for t in takes]
    await asyncio.sleep(0)  # every take's wait begins: three instants, three timers
    time.sleep(max(takes[-1].answer_at_ns - MONOTONIC.now_ns(), 0) / 1e9 + 0.002)
    answers = await asyncio.gather(*answering)

    assert [ids(a or []) for a in answers] == [ids(t.jobs) for t in takes]
    assert booked_at_each_send == [[IN_QUEUE] * 6] * 3
    log = events(q, "take")
    assert [e["take"] for e in log] == [t.id for t in takes]
    assert [e["due"] for e in log] == [t.answer_at_ns for t in takes]
    assert all(e["t"] >= e["due"] for e in log)
    times = [e["t"] for e in q.events]
    assert times == sorted(times)  # the log stays in time order


@in_virtual_time
async def test_a_waiting_take_is_woken_and_answered_wake_latency_after_the_arrival() -> None:
    q, loop = virtual_queue()
    take = q.take("w", 4)
    answering = asyncio.create_task(q.await_answer(take, never))
    await asyncio.sleep(3.0)
    jobs = q.submit_many(range(2))
    submitted = loop.now_ns()
    answer = await answering
    assert answer is not None and ids(answer) == ids(jobs)
    assert loop.now_ns() == submitted + WAKE_NS and take.kind == "woken"


@in_virtual_time
async def test_an_empty_take_is_answered_empty_after_the_hold() -> None:
    q, loop = virtual_queue()
    take = q.take("w", 4)
    assert await q.await_answer(take, never) is None
    assert loop.now_ns() == take.arrived_ns + int(HOLD_S * 1e9)
    (ev,) = events(q, "take", take=take.id)
    assert ev["kind"] == "empty" and ev["got"] == 0 and ev["t"] == loop.now_ns()
    assert not q.waiting and q.workers["w"].waiting_takes == 0


@in_virtual_time
async def test_a_take_whose_client_is_gone_at_its_answer_time_keeps_nothing() -> None:
    q, _ = virtual_queue()
    jobs = q.submit_many(range(3))
    take = q.take("w", 2)
    assert await q.await_answer(take, lambda: True) is None
    assert ids(q.queued) == ids(jobs)  # back at the front, in order
    assert [e["job"] for e in events(q, "requeue", take=take.id)] == ids(jobs[1::-1])
    assert events(q, "take", take=take.id)[0]["kind"] == "gone"
    assert not events(q, "deliver") and q.conservation_error() is None


@in_virtual_time
async def test_a_take_cancelled_while_waiting_or_before_its_answer_is_abandoned() -> None:
    q, _ = virtual_queue()
    waiting = asyncio.create_task(q.await_answer(q.take("a", 1), never))
    await asyncio.sleep(1.0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert not q.waiting
    jobs = q.submit_many(range(2))
    take = q.take("b", 2)
    answering = asyncio.create_task(q.await_answer(take, never))
    await asyncio.sleep(TAKE_S / 2)  # claimed, not yet answered
    answering.cancel()
    with pytest.raises(asyncio.CancelledError):
        await answering
    assert ids(q.queued) == ids(jobs) and take.gone and take.settled
    assert all(job.status == IN_QUEUE and job.take is None for job in jobs)
    assert q.conservation_error() is None


@in_virtual_time
async def test_a_take_whose_claimed_jobs_were_all_cancelled_answers_no_jobs() -> None:
    q, _ = virtual_queue()
    (job,) = q.submit_many(range(1))
    take = q.take("w", 1)
    answering = asyncio.create_task(q.await_answer(take, never))
    await asyncio.sleep(0.1)
    q.cancel(job.id)
    assert await answering == []
    assert events(q, "take", take=take.id)[0]["got"] == 0


@in_virtual_time
async def test_the_stop_poll_holds_for_the_models_hold() -> None:
    q, loop = virtual_queue()
    start = loop.now_ns()
    assert await q.next_stops("w") == []
    assert loop.now_ns() - start == int(HOLD_S * 1e9)


@in_virtual_time
async def test_job_done_counts_on_arrival_and_is_answered_after_the_done_latency() -> None:
    q, loop = virtual_queue(done=0.25)
    job = q.submit(1)
    assert await q.await_answer(q.take("w", 1), never) == [job]
    arrived = loop.now_ns()
    assert await q.job_done("w", job.id, {"output": 1}) == "done"
    assert loop.now_ns() - arrived == 250_000_000
    assert events(q, "done", job=job.id)[0]["t"] == arrived
    with pytest.raises(JobError):  # a 404 is answered at once
        await q.job_done("other", job.id, {"output": 1})
    assert loop.now_ns() - arrived == 250_000_000
    assert await q.job_stream("w", job.id, "chunk") == "ignored"  # already done
    assert loop.now_ns() - arrived == 500_000_000


# ---- deliver / abandon / undeliver ---------------------------------------------------------


@in_loop
async def test_deliver_makes_jobs_in_progress_and_logs_the_take() -> None:
    q = make_queue()
    jobs = q.submit_many([{"a": 1}, {"a": 2}], extra={"webhook": "http://x"})
    take = q.take("w", 5, job_in_progress=True)
    assert q.deliver(take) == jobs
    assert [job.payload() for job in jobs] == [
        {"id": jobs[0].id, "input": {"a": 1}, "webhook": "http://x"},
        {"id": jobs[1].id, "input": {"a": 2}, "webhook": "http://x"},
    ]
    assert all(j.status == IN_PROGRESS and j.worker == "w" and j.take is None for j in jobs)
    assert q.workers["w"].held == set(ids(jobs))
    assert [e["job"] for e in events(q, "deliver", take=take.id)] == ids(jobs)
    (ev,) = events(q, "take", take=take.id)
    assert ev["got"] == 2 and ev["asked"] == 5 and ev["kind"] == "queued"
    assert ev["due"] == take.arrived_ns + TAKE_NS and ev["in_progress"] is True
    assert q.conservation_error() is None


@in_loop
async def test_abandon_of_a_waiting_take_claims_nothing() -> None:
    q = make_queue()
    take = q.take("w", 3)
    q.abandon(take)
    assert take.gone and not q.waiting
    (ev,) = events(q, "take", take=take.id)
    assert ev["kind"] == "gone" and ev["got"] == 0
    job = q.submit(1)
    assert take.jobs == [] and ids(q.queued) == [job.id]
    assert not events(q, "claim") and not events(q, "requeue")
    assert q.conservation_error() is None


@in_loop
async def test_abandon_of_a_claimed_take_requeues_its_jobs_at_the_front_in_order() -> None:
    q = make_queue()
    jobs = q.submit_many(range(3))
    take = q.take("w", 2)
    assert ids(q.queued) == [jobs[2].id]
    q.abandon(take)
    assert ids(q.queued) == ids(jobs)  # back at the front, original order
    assert all(j.take is None and j.status == IN_QUEUE for j in jobs)
    requeues = events(q, "requeue", take=take.id)
    assert sorted(e["job"] for e in requeues) == sorted(ids(jobs[:2]))
    assert all(e["worker"] == "w" for e in requeues)
    (ev,) = events(q, "take", take=take.id)
    assert ev["kind"] == "gone" and ev["got"] == 0
    assert q.conservation_error() is None
    nxt = q.take("w2", 3)
    assert ids(nxt.jobs) == ids(jobs)
    # abandoning twice, or after delivery, changes nothing
    q.abandon(take)
    q.deliver(nxt)
    q.abandon(nxt)
    assert all(j.status == IN_PROGRESS for j in jobs)
    assert len(events(q, "requeue")) == 2


@in_loop
async def test_abandoned_jobs_go_to_the_oldest_waiting_take() -> None:
    q = make_queue()
    job = q.submit(1)
    claimer = q.take("a", 1)
    waiter = q.take("b", 1)
    assert list(q.waiting) == [waiter]
    q.abandon(claimer)
    assert ids(waiter.jobs) == [job.id] and waiter.kind == "woken"
    assert not q.queued and not q.waiting


@in_loop
async def test_undeliver_puts_delivered_jobs_back_and_cancels_their_timeout() -> None:
    q = make_queue()
    jobs = q.submit_many(range(2), execution_timeout_s=0.01)
    other = q.submit(99)
    take = q.take("w", 2)
    q.deliver(take)
    q.undeliver(take, list(jobs))
    assert ids(q.queued) == [*ids(jobs), other.id]
    assert all(j.status == IN_QUEUE and j.worker is None and j.delivered_ns is None for j in jobs)
    assert q.workers["w"].held == set()
    assert len(events(q, "requeue", take=take.id)) == 2
    await asyncio.sleep(0.03)  # the cancelled timeout must not fire
    assert all(j.status == IN_QUEUE for j in jobs)
    assert q.conservation_error() is None


# ---- cancel ----------------------------------------------------------------------------------


@in_loop
async def test_cancel_of_a_queued_job() -> None:
    q = make_queue()
    jobs = q.submit_many(range(2))
    assert q.cancel(jobs[0].id).status == CANCELLED
    assert ids(q.queued) == [jobs[1].id]
    (done,) = events(q, "done", job=jobs[0].id)
    assert done["status"] == CANCELLED and done["reason"] == "cancel"
    take = q.take("w", 2)
    assert ids(take.jobs) == [jobs[1].id]
    assert q.conservation_error() is None


@in_loop
async def test_cancel_of_a_claimed_job_takes_it_off_the_take() -> None:
    q = make_queue()
    jobs = q.submit_many(range(2))
    take = q.take("w", 2)
    q.cancel(jobs[0].id)
    assert ids(take.jobs) == [jobs[1].id]
    assert q.conservation_error() is None
    assert ids(q.deliver(take)) == [jobs[1].id]
    assert jobs[0].status == CANCELLED and jobs[0].id not in q.workers["w"].held


@in_loop
async def test_cancel_of_every_claimed_job_leaves_an_empty_answer() -> None:
    q = make_queue()
    job = q.submit(1)
    take = q.take("w", 1)
    q.cancel(job.id)
    assert q.deliver(take) == []
    assert job.status == CANCELLED
    assert not events(q, "deliver")
    assert q.conservation_error() is None


@in_loop
async def test_cancel_of_an_in_progress_job_signals_the_holding_worker() -> None:
    q = make_queue()
    job = q.submit(1)
    q.deliver(q.take("w", 1))
    q.cancel(job.id)
    assert job.status == CANCELLED
    assert q.workers["w"].held == set()
    assert await q.next_stops("w", 0.5) == [job.id]
    (stop,) = events(q, "stop")
    assert stop["job"] == job.id and stop["worker"] == "w"
    assert await q.next_stops("w", 0.01) == []  # consumed
    assert q.finish("w", job.id, {"output": 1}) == "ignored"
    assert job.status == CANCELLED and job.output is None
    (ign,) = events(q, "ignored")
    assert ign["status"] == CANCELLED
    assert q.conservation_error() is None


@in_loop
async def test_cancel_wakes_a_waiting_stop_poll() -> None:
    q = make_queue()
    job = q.submit(1)
    q.deliver(q.take("w", 1))
    poll = asyncio.create_task(q.next_stops("w", 5.0))
    await asyncio.sleep(0)
    assert not poll.done()
    q.cancel(job.id)
    assert await asyncio.wait_for(poll, 2.0) == [job.id]


@in_loop
async def test_cancel_of_a_terminal_job_changes_nothing() -> None:
    q = make_queue()
    job = q.submit(1)
    q.deliver(q.take("w", 1))
    q.finish("w", job.id, {"output": "ok"})
    assert q.cancel(job.id).status == COMPLETED
    assert len(events(q, "done", job=job.id)) == 1
    assert await q.next_stops("w", 0.01) == []


@in_loop
async def test_cancel_of_an_unknown_job_is_404() -> None:
    q = make_queue()
    with pytest.raises(JobError) as info:
        q.cancel("job-nope")
    assert info.value.status == 404


# ---- executionTimeout and ttl ----------------------------------------------------------------


@in_loop
async def test_execution_timeout_times_out_and_signals_stop() -> None:
    q = make_queue()
    job = q.submit(1, execution_timeout_s=0.02)
    q.deliver(q.take("w", 1))
    await asyncio.sleep(0.1)
    assert job.status == TIMED_OUT
    (done,) = events(q, "done", job=job.id)
    assert done["reason"] == "executionTimeout" and done["worker"] == "w"
    (deliver,) = events(q, "deliver", job=job.id)
    assert done["t"] - deliver["t"] >= 20_000_000
    assert await q.next_stops("w", 0.5) == [job.id]
    assert q.finish("w", job.id, {"output": 1}) == "ignored"
    assert q.workers["w"].held == set()
    assert q.conservation_error() is None


@in_loop
async def test_execution_timeout_does_not_fire_after_completion() -> None:
    q = make_queue()
    job = q.submit(1, execution_timeout_s=0.02)
    q.deliver(q.take("w", 1))
    assert q.finish("w", job.id, {"output": 2}) == "done"
    await asyncio.sleep(0.06)
    assert job.status == COMPLETED
    assert len(events(q, "done", job=job.id)) == 1
    assert await q.next_stops("w", 0.01) == []


@in_loop
async def test_execution_timeout_clock_starts_at_delivery_not_submission() -> None:
    q = make_queue()
    job = q.submit(1, execution_timeout_s=0.05)
    await asyncio.sleep(0.08)  # longer than the timeout, but still queued
    take = q.take("w", 1)
    assert job.status == IN_QUEUE
    q.deliver(take)
    assert job.status == IN_PROGRESS


@in_loop
async def test_ttl_expiry_of_a_queued_job_is_404_and_timed_out() -> None:
    clock = FakeClock()
    q = make_queue(clock=clock)
    job = q.submit(1, ttl_s=10.0)
    fresh = q.submit(2)
    clock.advance(10.5)
    with pytest.raises(JobError) as info:
        q.get(job.id)
    assert info.value.status == 404
    assert job.status == TIMED_OUT
    (done,) = events(q, "done", job=job.id)
    assert done["reason"] == "ttl"
    assert ids(q.queued) == [fresh.id]
    with pytest.raises(JobError) as again:  # expired and terminal: still 404
        q.get(job.id)
    assert again.value.status == 404
    assert q.conservation_error() is None


@in_loop
async def test_ttl_not_yet_expired_is_found() -> None:
    clock = FakeClock()
    q = make_queue(clock=clock)
    job = q.submit(1, ttl_s=10.0)
    clock.advance(9.9)
    assert q.get(job.id) is job
    assert job.status == IN_QUEUE


@in_loop
async def test_take_skips_expired_jobs_and_times_them_out() -> None:
    clock = FakeClock()
    q = make_queue(clock=clock)
    old = q.submit(1, ttl_s=10.0)
    clock.advance(11)
    new = q.submit(2)
    take = q.take("w", 2)
    assert ids(take.jobs) == [new.id]
    assert old.status == TIMED_OUT
    assert events(q, "done", job=old.id)[0]["reason"] == "ttl"
    assert not events(q, "claim", job=old.id)
    assert q.conservation_error() is None


@in_loop
async def test_a_claimed_job_whose_ttl_expires_is_not_delivered_afterwards() -> None:
    """BUG: get() times out a claimed-but-undelivered job (ttl) but leaves it on its take;
    deliver() then flips the TIMED_OUT job to IN_PROGRESS (a terminal job comes back)."""
    clock = FakeClock()
    q = make_queue(clock=clock)
    job = q.submit(1, ttl_s=10.0)
    take = q.take("w", 1)
    clock.advance(11)
    with pytest.raises(JobError):
        q.get(job.id)
    assert job.status == TIMED_OUT
    assert job.id not in ids(take.jobs), "a TIMED_OUT job is still claimed by a take"
    assert q.deliver(take) == []
    assert job.status == TIMED_OUT


@in_loop
async def test_a_waiting_take_stays_waiting_when_only_expired_jobs_arrive() -> None:
    """BUG: _wake_waiting pops the oldest waiting take before claiming; when every queued
    job turns out expired, the take is dropped from `waiting` and never woken again."""
    clock = FakeClock()
    q = make_queue(clock=clock)
    stale = q.submit(1, ttl_s=10.0)
    claimer = q.take("a", 1)  # claims the job
    waiter = q.take("b", 1)  # queue empty: waits
    clock.advance(11)
    q.abandon(claimer)  # the stale job returns to the queue and has expired
    assert stale.status == TIMED_OUT
    assert list(q.waiting) == [waiter], "the waiting take was dropped"
    fresh = q.submit(2)
    assert ids(waiter.jobs) == [fresh.id]


# ---- retry / purge ---------------------------------------------------------------------------


@in_loop
async def test_retry_of_a_failed_job_requeues_it_with_the_same_id() -> None:
    q = make_queue()
    job = q.submit({"x": 1})
    q.deliver(q.take("w", 1))
    assert q.finish("w", job.id, {"error": "boom"}) == "done"
    assert job.status == FAILED
    waiter = q.take("w2", 1)
    assert q.retry(job.id) is job
    assert job.status == IN_QUEUE and job.error is None and job.worker is None
    assert q.retried == 1
    assert events(q, "retry", job=job.id)
    assert ids(waiter.jobs) == [job.id]  # retry wakes a waiting take
    assert ids(q.deliver(waiter)) == [job.id]
    assert q.finish("w2", job.id, {"output": "ok"}) == "done"
    assert job.status == COMPLETED and q.health(HOLD_S)["jobs"]["retried"] == 1
    assert q.conservation_error() is None


@in_loop
async def test_retry_of_a_timed_out_job_works() -> None:
    q = make_queue()
    job = q.submit(1, execution_timeout_s=0.01)
    q.deliver(q.take("w", 1))
    await asyncio.sleep(0.05)
    assert job.status == TIMED_OUT
    q.retry(job.id)
    assert job.status == IN_QUEUE and ids(q.queued) == [job.id]


@pytest.mark.parametrize("state", ["queued", "in_progress", "completed", "cancelled"])
@in_loop
async def test_retry_of_a_job_that_is_not_failed_is_400(state: str) -> None:
    q = make_queue()
    job = q.submit(1)
    if state != "queued":
        q.deliver(q.take("w", 1))
    if state == "completed":
        q.finish("w", job.id, {"output": 1})
    if state == "cancelled":
        q.cancel(job.id)
    with pytest.raises(JobError) as info:
        q.retry(job.id)
    assert info.value.status == 400
    assert q.retried == 0


@in_loop
async def test_purge_removes_only_unclaimed_queued_jobs() -> None:
    q = make_queue()
    jobs = q.submit_many(range(4))
    take = q.take("w", 1)  # claims jobs[0]
    assert q.purge() == 3
    assert [j.status for j in jobs[1:]] == [CANCELLED] * 3
    assert all(e["reason"] == "purge" for e in events(q, "done"))
    assert not q.queued
    assert jobs[0].status == IN_QUEUE
    assert ids(q.deliver(take)) == [jobs[0].id]
    assert q.purge() == 0
    assert q.conservation_error() is None


# ---- job-done ---------------------------------------------------------------------------------


@in_loop
async def test_job_done_for_unknown_id_or_other_worker_is_404() -> None:
    q = make_queue()
    job = q.submit(1)
    with pytest.raises(JobError) as unknown:
        q.finish("w", "job-404", {"output": 1})
    assert unknown.value.status == 404
    with pytest.raises(JobError) as queued:  # never handed to anyone yet
        q.finish("w", job.id, {"output": 1})
    assert queued.value.status == 404
    q.deliver(q.take("w", 1))
    with pytest.raises(JobError) as other:
        q.finish("intruder", job.id, {"output": 1})
    assert other.value.status == 404
    with pytest.raises(JobError) as stream:
        q.add_stream("intruder", job.id, "chunk")
    assert stream.value.status == 404
    assert job.status == IN_PROGRESS


@in_loop
async def test_job_done_for_a_terminal_job_is_ignored() -> None:
    q = make_queue()
    job = q.submit(1)
    q.deliver(q.take("w", 1))
    assert q.finish("w", job.id, {"output": "first"}) == "done"
    assert q.finish("w", job.id, {"output": "second"}) == "ignored"
    assert q.finish("w", job.id, {"status": "IN_PROGRESS", "output": 0.5}) == "ignored"
    assert q.add_stream("w", job.id, "late") == "ignored"
    assert job.output == "first" and job.stream == []
    assert len(events(q, "ignored", job=job.id)) == 3
    assert len(events(q, "done", job=job.id)) == 1


@in_loop
async def test_job_done_from_the_previous_holder_after_a_requeue_is_ignored() -> None:
    q = make_queue()
    job = q.submit(1)
    first = q.take("a", 1)
    q.deliver(first)
    q.undeliver(first, [job])
    q.deliver(q.take("b", 1))
    assert q.finish("a", job.id, {"output": "stale"}) == "ignored"
    assert job.status == IN_PROGRESS and job.worker == "b"
    assert q.finish("b", job.id, {"output": "fresh"}) == "done"
    assert job.output == "fresh"


@in_loop
async def test_progress_update_is_not_completion() -> None:
    q = make_queue()
    job = q.submit(1)
    q.deliver(q.take("w", 1))
    assert q.finish("w", job.id, {"status": "IN_PROGRESS", "output": {"pct": 40}}) == "progress"
    assert job.status == IN_PROGRESS and job.progress == {"pct": 40} and job.output is None
    assert events(q, "progress", job=job.id, worker="w")
    assert not events(q, "done")
    assert q.workers["w"].held == {job.id}
    assert q.finish("w", job.id, {"output": 7}) == "done"
    assert job.status == COMPLETED and job.output == 7


@pytest.mark.parametrize(
    "body",
    [
        {"error": '{"error_type": "ValueError", "error_message": "x"}'},
        {"output": {"partial": 1}, "error": "bad"},
    ],
)
@in_loop
async def test_handler_error_body_fails_the_job(body: dict[str, Any]) -> None:
    q = make_queue()
    job = q.submit(1)
    q.deliver(q.take("w", 1))
    assert q.finish("w", job.id, body) == "done"
    assert job.status == FAILED and job.error == body["error"]
    assert job.output == body.get("output")
    (done,) = events(q, "done", job=job.id)
    assert done["status"] == FAILED and done["worker"] == "w"
    assert q.workers["w"].held == set()


@in_loop
async def test_stream_chunks_are_kept_in_order() -> None:
    q = make_queue()
    job = q.submit(1)
    q.deliver(q.take("w", 1))
    for chunk in ("a", {"b": 2}, 3):
        assert q.add_stream("w", job.id, chunk) == "stream"
    assert job.stream == ["a", {"b": 2}, 3]
    assert job.status == IN_PROGRESS


# ---- health ---------------------------------------------------------------------------------


@in_loop
async def test_health_counts_jobs_and_running_idle_workers() -> None:
    q = make_queue()
    jobs = q.submit_many(range(4))
    q.deliver(q.take("busy", 2))
    q.seen("idle")
    q.finish("busy", jobs[0].id, {"output": 1})
    health = q.health(HOLD_S)
    assert health["jobs"] == {
        "completed": 1,
        "failed": 0,
        "inProgress": 1,
        "inQueue": 2,
        "retried": 0,
    }
    assert health["workers"] == {"idle": 1, "running": 1}


@in_loop
async def test_health_forgets_workers_not_seen_for_hold_plus_grace() -> None:
    clock = FakeClock()
    q = make_queue(clock=clock)
    q.seen("old")
    clock.advance(HOLD_S + 10.5)
    q.seen("new")
    assert q.health(HOLD_S)["workers"] == {"idle": 1, "running": 0}


@in_loop
async def test_a_cancel_does_not_count_as_seeing_the_worker() -> None:
    """BUG (job_queue.py _signal_stop): a stop signal calls self.seen(job.worker), so a cancel or
    an executionTimeout refreshes last_seen of a worker that has not called in; /health then
    counts a long-gone worker as alive (design: workers seen by take or ping)."""
    clock = FakeClock()
    q = make_queue(clock=clock)
    job = q.submit(1)
    q.deliver(q.take("gone", 1))
    clock.advance(HOLD_S + 10.5)  # the worker has not called in since
    assert q.health(HOLD_S)["workers"] == {"idle": 0, "running": 0}
    q.cancel(job.id)
    assert q.health(HOLD_S)["workers"] == {"idle": 0, "running": 0}


# ---- reset and the event log ------------------------------------------------------------------


@in_loop
async def test_reset_forgets_jobs_but_keeps_waiting_takes() -> None:
    q = make_queue()
    q.submit_many(range(3))
    q.deliver(q.take("w", 1))
    waiter = q.take("w2", 5)  # claims the other 2
    q.deliver(waiter)
    late = q.take("w3", 1)  # waits
    q.reset()
    assert q.counts()["submitted"] == 0 and not q.queued and q.retried == 0
    assert q.workers["w"].held == set()
    assert list(q.waiting) == [late]
    job = q.submit("after")
    assert ids(late.jobs) == [job.id] and late.kind == "woken"
    assert q.conservation_error() is None


@in_loop
async def test_reset_while_a_take_holds_claimed_jobs_keeps_conservation() -> None:
    """BUG: reset() clears jobs and queue but not the jobs already claimed by a take that is
    still sleeping to its answer time; deliver() then hands out a job the queue no longer
    knows, the worker 'holds' it, and conservation breaks."""
    q = make_queue()
    q.submit(1)
    take = q.take("w", 1)  # claimed, answer due take_latency later
    q.reset()
    q.deliver(take)
    assert q.conservation_error() is None
    assert q.counts()["in_progress"] == sum(len(r.held) for r in q.workers.values())


@in_loop
async def test_events_since_pages_with_a_cursor() -> None:
    q = make_queue()
    q.submit_many(range(5))
    chunk, nxt = q.events_since(0, limit=2)
    assert [e["ev"] for e in chunk] == ["submit", "submit"] and nxt == 2
    chunk2, nxt2 = q.events_since(nxt, limit=10)
    assert len(chunk2) == 3 and nxt2 == 5
    assert chunk + chunk2 == q.events
    assert q.events_since(nxt2) == ([], 5)
    assert all(isinstance(e["t"], int) for e in q.events)
    assert [e["t"] for e in q.events] == sorted(e["t"] for e in q.events)


@in_loop
async def test_events_since_cursor_semantics_across_reset() -> None:
    q = make_queue()
    q.submit_many(range(3))
    _, cursor = q.events_since(0)
    assert cursor == 3
    q.reset()
    assert q.events_base == 3
    assert q.events_since(cursor) == ([], 3)  # nothing new yet, cursor unchanged
    job = q.submit("new")
    chunk, nxt = q.events_since(cursor)
    assert [(e["ev"], e["job"]) for e in chunk] == [("submit", job.id)]
    assert nxt == 4
    # a stale cursor from before the reset sees only what is still kept, and the cursor
    # it gets back is absolute
    stale, nxt_stale = q.events_since(1)
    assert stale == chunk and nxt_stale == 4
    # job ids are not reused across resets
    assert job.id == "job-4"


@in_loop
async def test_counts_add_up() -> None:
    q = make_queue()
    jobs = q.submit_many(range(6))
    q.deliver(q.take("w", 4))
    q.finish("w", jobs[0].id, {"output": 1})
    q.finish("w", jobs[1].id, {"error": "x"})
    q.cancel(jobs[2].id)
    q.cancel(jobs[4].id)
    c = q.counts()
    assert c == {
        "submitted": 6,
        "completed": 1,
        "failed": 1,
        "cancelled": 2,
        "timed_out": 0,
        "in_queue": 1,
        "in_progress": 1,
    }


# ---- random operation sequences: nothing lost, nothing counted twice --------------------------


def check_placement(q: JobQueue, takes: list[Take]) -> None:
    """Stronger than conservation_error(): every job sits in exactly the one place its status
    says (queue, a pending take, or its worker's held set), and counts add up."""
    assert q.conservation_error() is None
    c = q.counts()
    assert c["submitted"] == sum(
        c[k] for k in ("completed", "failed", "cancelled", "timed_out", "in_queue", "in_progress")
    )
    pending = [job for t in takes if not t.settled for job in t.jobs]
    queued = list(q.queued)
    for job in q.jobs.values():
        in_queue = sum(1 for j in queued if j is job)
        claimed = sum(1 for j in pending if j is job)
        held = [w for w, r in q.workers.items() if job.id in r.held]
        if job.status == IN_QUEUE:
            assert in_queue + claimed == 1 and not held, job
            assert (job.take is not None) == (claimed == 1), job
        elif job.status == IN_PROGRESS:
            assert in_queue + claimed == 0 and held == [job.worker], job
        else:
            assert job.status in TERMINAL
            assert in_queue + claimed == 0 and not held, job
    for take in q.waiting:
        assert not take.jobs and not take.settled
    for take in takes:  # a take that has claimed nothing and is not answered must be waiting
        if not take.settled and not take.claimed.done():
            assert take in q.waiting, f"take {take.id} is neither answered nor waiting"
    assert not (q.waiting and q.queued), "a take waits while jobs sit in the queue"
    # event-level: no job has two deliver events without a requeue in between
    out: dict[str, bool] = {}
    for e in q.events:
        if e["ev"] == "deliver":
            assert not out.get(e["job"]), f"{e['job']} delivered twice"
            out[e["job"]] = True
        elif e["ev"] in ("requeue", "retry"):
            out[e["job"]] = False


WORKERS = ("w1", "w2", "w3")

op_strategy = st.one_of(
    st.tuples(
        st.just("submit"),
        st.integers(1, 4),
        st.sampled_from([None, 10.0]),
        st.sampled_from([None, 0.001]),
    ),
    st.tuples(st.just("take"), st.sampled_from(WORKERS), st.integers(1, 4), st.booleans()),
    st.tuples(st.just("deliver"), st.integers(0, 50)),
    st.tuples(st.just("deliver_fail"), st.integers(0, 50)),
    st.tuples(st.just("abandon"), st.integers(0, 50)),
    st.tuples(st.just("give_up"), st.integers(0, 50)),
    st.tuples(
        st.just("finish"),
        st.integers(0, 50),
        st.sampled_from(["output", "error", "progress"]),
        st.booleans(),
    ),
    st.tuples(st.just("stream"), st.integers(0, 50), st.booleans()),
    st.tuples(st.just("cancel"), st.integers(0, 50)),
    st.tuples(st.just("retry"), st.integers(0, 50)),
    st.tuples(st.just("get"), st.integers(0, 50)),
    st.tuples(st.just("purge")),
    st.tuples(st.just("advance"), st.sampled_from([0.5, 11.0])),
    st.tuples(st.just("tick")),
    st.tuples(st.just("stops"), st.sampled_from(WORKERS)),
)


async def apply_ops(ops: list[tuple[Any, ...]], clock: FakeClock) -> None:
    q = make_queue(clock=clock)
    takes: list[Take] = []
    jobs: list[Job] = []

    def pick(seq: list[Any], i: int) -> Any:
        return seq[i % len(seq)] if seq else None

    for op in ops:
        kind = op[0]
        unsettled = [t for t in takes if not t.settled]
        try:
            if kind == "submit":
                jobs += q.submit_many(range(op[1]), ttl_s=op[2], execution_timeout_s=op[3])
            elif kind == "take":
                takes.append(q.take(op[1], op[2], op[3]))
            elif kind in ("deliver", "deliver_fail"):
                ready = [t for t in unsettled if t.claimed.done()]
                take = pick(ready, op[1])
                if take is not None:
                    claimed = list(take.jobs)
                    q.deliver(take)
                    if kind == "deliver_fail":
                        q.undeliver(take, claimed)
            elif kind == "abandon":
                take = pick(takes, op[1])
                if take is not None:
                    q.abandon(take)
            elif kind == "give_up":
                waiting = [t for t in unsettled if not t.claimed.done()]
                take = pick(waiting, op[1])
                if take is not None:
                    q.give_up_waiting(take)
            elif kind == "finish":
                job = pick(jobs, op[1])
                if job is not None:
                    worker = job.worker if op[3] and job.worker else "w1"
                    bodies: dict[str, dict[str, Any]] = {
                        "progress": {"status": IN_PROGRESS, "output": 1},
                        "error": {"error": "boom"},
                        "output": {"output": 1},
                    }
                    q.finish(worker, job.id, bodies[op[2]])
            elif kind == "stream":
                job = pick(jobs, op[1])
                if job is not None:
                    q.add_stream(job.worker if op[2] and job.worker else "w2", job.id, "c")
            elif kind == "cancel":
                job = pick(jobs, op[1])
                if job is not None:
                    q.cancel(job.id)
            elif kind == "retry":
                job = pick(jobs, op[1])
                if job is not None:
                    q.retry(job.id)
            elif kind == "get":
                job = pick(jobs, op[1])
                if job is not None:
                    q.get(job.id)
            elif kind == "purge":
                q.purge()
            elif kind == "advance":
                clock.advance(op[1])
            elif kind == "tick":
                await asyncio.sleep(0.003)  # lets execution timeouts (1 ms) fire
            elif kind == "stops":
                await q.next_stops(op[1], 0.0)
        except JobError as exc:
            assert exc.status in (400, 404)
        check_placement(q, takes)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op_strategy, min_size=10, max_size=60))
def test_random_operations_conserve_every_job(ops: list[tuple[Any, ...]]) -> None:
    clock = FakeClock()
    asyncio.run(apply_ops(ops, clock))


@pytest.mark.parametrize("seed", range(5))
def test_seeded_random_sequence_without_ttl_conserves_every_job(seed: int) -> None:
    """The same check on long sequences, without ttl expiry (which has known bugs above)."""
    import random

    rng = random.Random(seed)
    ops: list[tuple[Any, ...]] = []
    for _ in range(400):
        choice = rng.choice(
            [
                "submit",
                "take",
                "take",
                "deliver",
                "deliver",
                "deliver_fail",
                "abandon",
                "give_up",
                "finish",
                "finish",
                "stream",
                "cancel",
                "retry",
                "purge",
                "tick",
                "stops",
            ]
        )
        if choice == "submit":
            ops.append((choice, rng.randint(1, 6), None, rng.choice([None, None, 0.001])))
        elif choice == "take":
            ops.append((choice, rng.choice(WORKERS), rng.randint(1, 5), rng.random() < 0.5))
        elif choice == "finish":
            ops.append(
                (
                    choice,
                    rng.randint(0, 99),
                    rng.choice(["output", "error", "progress"]),
                    rng.random() < 0.8,
                )
            )
        elif choice == "stream":
            ops.append((choice, rng.randint(0, 99), rng.random() < 0.8))
        elif choice in ("purge", "tick"):
            ops.append((choice,))
        elif choice == "stops":
            ops.append((choice, rng.choice(WORKERS)))
        else:
            ops.append((choice, rng.randint(0, 99)))
    clock = FakeClock()
    asyncio.run(apply_ops(ops, clock))


# ---- the queue's layers --------------------------------------------------------------------

QUEUE_LAYERS = (
    "fake_queue.queue.job_queue",
    "fake_queue.queue.takes",
    "fake_queue.queue.running",
    "fake_queue.queue.ledger",
)


def test_one_queue_object_in_layers_none_of_which_reads_a_wall_clock_or_speaks_http() -> None:
    """JobQueue is built from layer classes, one module each; in none of them may time come
    from anywhere but the injected clock (else virtual time breaks), nor HTTP leak in."""
    layers = [cls for cls in JobQueue.__mro__ if cls is not object]
    assert tuple(cls.__module__ for cls in layers) == QUEUE_LAYERS
    for cls in layers:
        tree = ast.parse(inspect.getsource(sys.modules[cls.__module__]))
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        roots = {name.split(".")[0] for name in imported}
        assert not roots & {"time", "datetime", "aiohttp"}, (cls.__module__, roots)
        attributes = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        assert "time" not in attributes, cls.__module__  # nor loop.time(): the clock is injected


@in_loop
async def test_takes_due_together_are_all_sent_before_any_is_booked() -> None:
    """A burst wakes four waiting takes at one instant: at their answer time every answer goes
    out first (its jobs still claimed, not yet IN_PROGRESS), then each is booked at the time
    its answer went out; the event log stays in time order."""
    q = make_queue(wake=0.02)
    sent: list[tuple[str, list[str]]] = []

    def sender(worker: str) -> Callable[[list[Job]], None]:
        return lambda jobs: sent.append((worker, [job.status for job in jobs]))

    takes = [q.take(f"w{i}", 8) for i in range(4)]
    answers = [
        asyncio.create_task(q.await_answer(take, lambda: False, send=sender(take.worker)))
        for take in takes
    ]
    await asyncio.sleep(0)
    q.submit_many([{}] * 32)
    assert len({take.answer_at_ns for take in takes}) == 1
    delivered = await asyncio.gather(*answers)

    assert [worker for worker, _ in sent] == ["w0", "w1", "w2", "w3"]
    assert all(statuses == [IN_QUEUE] * 8 for _, statuses in sent)  # none booked yet
    assert [len(jobs or []) for jobs in delivered] == [8] * 4
    assert all(job.status == IN_PROGRESS for jobs in delivered for job in jobs or [])
    times = [e["t"] for e in q.events]
    assert times == sorted(times)
    answered = events(q, "take")
    assert all(e["t"] >= e["due"] for e in answered)
    assert q.conservation_error() is None


@in_loop
async def test_a_take_whose_client_left_is_abandoned_at_its_answer_time_not_sent() -> None:
    q = make_queue(take=0.01)
    q.submit_many([{}] * 4)
    sent: list[int] = []
    take = q.take("w1", 4)
    got = await q.await_answer(take, lambda: True, send=lambda jobs: sent.append(len(jobs)))
    assert got is None and sent == []
    assert len(q.queued) == 4 and [e["kind"] for e in events(q, "take")] == ["gone"]
