"""A take's life in time (docs/latency-model.md, "A take's life"), once it arrived and claimed:
hold until it claims (or answer it empty once the hold ran out), sleep until its answer time,
then deliver its jobs, or abandon the take when its client went away. Pure asyncio: the queue
runs this for the HTTP route (worker_routes) and the in-process link alike
(JobQueue.await_answer); every timer is a delay on the running loop from the queue's clock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from fake_queue.clock import Clock, sleep_until
from fake_queue.jobs import Job, Take
from fake_queue.latency import LatencySampler


class TakeDesk(Protocol):
    """What a take's life needs of the queue (JobQueue)."""

    clock: Clock
    sampler: LatencySampler

    def give_up_waiting(self, take: Take) -> None: ...

    def deliver(self, take: Take) -> list[Job]: ...

    def abandon(self, take: Take) -> None: ...


async def await_answer(
    queue: TakeDesk,
    take: Take,
    client_gone: Callable[[], bool],
    on_claimed: Callable[[list[Job]], None] | None = None,
) -> list[Job] | None:
    """Run `take` to its answer: the jobs delivered ([] when every claimed job was cancelled
    meanwhile), or None when it is answered without any: the hold ran out, or `client_gone()`
    said so at the answer time. `on_claimed(jobs)` runs once it has claimed, before the
    answer's wait (to render the answer early). Cancelled (the client went away), it abandons
    the take, whose claimed jobs go back to the front of the queue, and re-raises."""
    try:
        if not take.claimed.done():
            try:
                await asyncio.wait_for(asyncio.shield(take.claimed), queue.sampler.hold())
            except asyncio.TimeoutError:
                if not take.claimed.done():
                    queue.give_up_waiting(take)
                    return None
        if on_claimed is not None:
            on_claimed(take.jobs)
        await sleep_until(queue.clock, take.answer_at_ns)
        if client_gone():
            queue.abandon(take)
            return None
        return queue.deliver(take)
    except BaseException:
        queue.abandon(take)  # a settled (answered) take only notes that its client is gone
        raise
