"""`DrainPolicy` and `TakeAheadPolicy`, the model worker's two event-driven policies
(docs/latency-model.md, "Policies the model worker reproduces"). Take-ahead is drain with one
more rule, when to ask for K more jobs than the slots hold, so it is a subclass that decides only
that. Stdlib only, no clock but the running loop's."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any

from jobbench.workers.policy_base import Job, Link, Policy, Run, log

# Real-time tuning (the defaults): results post once no job has returned for this long...
POST_QUIET_S = 0.0002
POST_HOLD_MAX_S = 0.001  # ...or once the oldest has waited this long


class DrainPolicy(Policy):
    """The drain policy, event-driven; what take-ahead (TakeAheadPolicy) shares with it.

    One take at a time. Free slots (at start, or after a short take): ask for exactly those, at
    once. All slots busy: wait until every slot is free, then ask for a full batch (take-ahead
    asks for more before that). A job holds its slot until its handler returns; its job-done
    POST then goes out in the background, so result round trips through the queue never delay
    the next batch (the cycle is take + job, docs/latency-model.md). Held jobs move into slots
    the instant one frees, and a take that became due goes out before the results that made it
    due: on the wire and at the queue, the take is on the critical path and the results are not.

    Results post once no job has returned for `post_quiet_s`, or once the oldest has waited
    `post_hold_max_s` (real-time tuning: a batch's returns spread over a few hundred
    microseconds; 0 and 0 post each at once, as in virtual time where nothing spreads).
    """

    def __init__(
        self,
        link: Link,
        slots: int,
        *,
        post_quiet_s: float = POST_QUIET_S,
        post_hold_max_s: float = POST_HOLD_MAX_S,
    ) -> None:
        super().__init__(link, slots)
        self.post_quiet_s = post_quiet_s
        self.post_hold_max_s = post_hold_max_s
        # Keyed by run, not job id: slot accounting must survive a job id seen twice.
        self.running: dict[Run, str] = {}
        # Given a slot, they start in the next loop turn (`_start`, then the link's runs): a
        # take this makes due goes out first, not behind a batch's starts.
        self.starting: list[tuple[Job, float]] = []
        self.held: deque[Job] = deque()
        self.unposted: deque[tuple[str, dict[str, Any]]] = deque()
        self.posting: set[asyncio.Task[None]] = set()
        self._changed = asyncio.Event()
        self._posts_may_go = asyncio.Event()  # cleared while a due take is not yet sent
        self._posts_may_go.set()
        self._taker_waits_for: Callable[[], bool] | None = None
        self._poster: asyncio.Task[None] | None = None
        self._last_return = 0.0

    def job_ids(self) -> list[str]:
        waiting = [job for job, _ in self.starting] + list(self.held)
        return sorted([*self.running.values(), *(str(job["id"]) for job in waiting)])

    def busy(self) -> int:
        """Slots taken: jobs running, or given a slot and about to start."""
        return len(self.running) + len(self.starting)

    def free(self) -> int:
        return self.slots - self.busy() - len(self.held)

    async def take_loop(self) -> None:
        last_full = False
        while not self.stopping.is_set():
            count = await self._next_count(last_full)
            if count <= 0:
                continue
            try:
                in_progress = bool(self.busy() or self.held)
                jobs = await self.fetch(count, in_progress, self._posts_may_go.set)
            finally:
                self._posts_may_go.set()  # also when the take failed before it was sent
            last_full = len(jobs) >= count

    async def _next_count(self, last_full: bool) -> int:
        """How many jobs to ask for next; 0 when it waited for a change: decide again."""
        if self.free() > 0:
            return self.free()  # drained, or the last take came back short: free slots only
        await self._park_until(lambda: not self.busy() and not self.held)  # drain
        return 0

    async def _park_until(self, ready: Callable[[], bool]) -> None:
        """The taker waits for `ready`; results post meanwhile, until `ready` comes true."""
        self._taker_waits_for = ready
        self._posts_may_go.set()
        try:
            await self._wait_until(ready)
        finally:
            self._taker_waits_for = None

    async def run_jobs(self) -> None:
        assert self._taker is not None  # run() starts it first
        # The taker's own end, not every change: waiting on `_changed` here woke this task at
        # each batch's end, a loop turn and a future for nothing.
        await asyncio.wait([self._taker])
        await self._wait_until(lambda: not self.busy() and not self.held, stop=False)
        while pending := [t for t in (self._poster, *self.posting) if t and not t.done()]:
            # shutdown: every finished job's result still goes out
            await asyncio.gather(*pending, return_exceptions=True)

    def accept(self, jobs: list[Job]) -> None:
        self.held.extend(jobs)
        self._fill(self.link.answer_arrived)

    def _fill(self, arrived: float | None = None) -> None:
        # A job's time runs from when it got its slot, not from when it first runs: starting
        # a batch's jobs one by one would otherwise stretch the batch by a few us a job.
        # A job its take's answer put straight into a free slot got it as the answer arrived
        # (`arrived`): reading and parsing 32 jobs after a 0.5 s sleep takes ~0.3 ms on these
        # VMs, the harness's cost, not the job's (benchmarks/NOTES.md, harness overhead).
        if self.held and (free := self.slots - self.busy()) > 0:
            now = self.loop.time()
            started = now if arrived is None else min(arrived, now)
            if not self.starting:
                self.loop.call_soon(self._start)
            held, starting = self.held, self.starting
            for _ in range(min(free, len(held))):
                starting.append((held.popleft(), started))
        self._notify()

    def _start(self) -> None:
        starting, self.starting = self.starting, []
        if starting:
            for run in self.link.start_jobs(starting, self._ended):
                self.running[run] = str(run.job["id"])

    def _ended(self, run: Run, result: dict[str, Any] | None) -> None:
        # The slot frees as the handler returns (or fails), not a loop turn later: a take
        # this makes due must go before this result.
        job_id = self._finished(run)
        if result is None or job_id is None:
            return
        self.unposted.append((job_id, result))
        self._last_return = self.loop.time()
        if self._poster is None or self._poster.done():
            self._poster = self.loop.create_task(self._post_unposted())

    async def _post_unposted(self) -> None:
        loop = asyncio.get_running_loop()
        while self.unposted:
            # A batch's jobs return over a few hundred microseconds: post once they have (and
            # the take they make due is out), not in between, where each POST would delay the
            # returns still to come. At most post_hold_max_s for the returns, then only for a
            # due take to be written (the take loop opens the gate in any case, even on error).
            deadline = loop.time() + self.post_hold_max_s
            quiet = self.post_quiet_s
            while (wait := min(self._last_return + quiet, deadline) - loop.time()) > 0:
                await asyncio.sleep(wait)
            await self._posts_may_go.wait()
            # All returned so far go together, concurrently: one task for the batch (an
            # in-process link answers it in one call), not one per job.
            batch = list(self.unposted)
            self.unposted.clear()
            post = self.loop.create_task(self._post(batch))
            self.posting.add(post)
            post.add_done_callback(self.posting.discard)

    async def _post(self, batch: list[tuple[str, dict[str, Any]]]) -> None:
        try:
            await self.link.post_done_many(batch)
        except Exception as exc:
            ids = ", ".join(repr(job_id) for job_id, _ in batch[:3])
            log(f"job-done for {ids} ({len(batch)} in all) failed: {type(exc).__name__}: {exc}")

    def _finished(self, run: Run) -> str | None:
        """Its slot frees (its job id; None: it had been freed already, a stopped job)."""
        job_id = self.running.pop(run, None)
        if job_id is not None:
            self._fill()  # held jobs start the instant a slot frees
        return job_id

    def _notify(self) -> None:
        """Something changed: wake waiters; results hold back if the taker is now due."""
        if self._taker_waits_for is not None and self._taker_waits_for():
            self._posts_may_go.clear()
        self._changed.set()

    async def _wait_until(self, ready: Callable[[], bool], stop: bool = True) -> None:
        while not ready() and not (stop and self.stopping.is_set()):
            self._changed.clear()
            await self._changed.wait()

    def _wake(self) -> None:
        if self.stopping.is_set():
            self._posts_may_go.set()  # no take follows: nothing holds results back
        self._changed.set()

    def stop_job(self, job_id: str) -> None:
        for entry in self.starting:
            if entry[0]["id"] == job_id:
                self.starting.remove(entry)  # stopped before it began: no job-done
                self._notify()
                return
        run = next((r for r, running_id in self.running.items() if running_id == job_id), None)
        if run is not None:
            run.stop()  # no job-done; its slot frees now, whether it began or not
            self._finished(run)
            return
        for job in self.held:
            if job["id"] == job_id:
                self.held.remove(job)  # dropped before it ran: no job-done either
                self._notify()
                return


class TakeAheadPolicy(DrainPolicy):
    """The take-ahead policy: drain, except that with every slot busy after a take that came
    back full it asks for K (`take_ahead`) more jobs and holds them, one buffer at a time: the
    next take is in flight while the batch runs, so a batch ends every max(take, job) instead of
    every take + job."""

    def __init__(
        self,
        link: Link,
        slots: int,
        take_ahead: int,
        *,
        post_quiet_s: float = POST_QUIET_S,
        post_hold_max_s: float = POST_HOLD_MAX_S,
    ) -> None:
        super().__init__(link, slots, post_quiet_s=post_quiet_s, post_hold_max_s=post_hold_max_s)
        self.take_ahead = take_ahead

    async def _next_count(self, last_full: bool) -> int:
        # Take-ahead differs from drain only with every slot busy after a take that came back
        # full (docs/latency-model.md); free slots, or a short take, are drain's to decide.
        if self.free() > 0 or not (self.take_ahead and last_full):
            return await super()._next_count(last_full)
        if not self.held:
            return self.take_ahead  # slots busy, buffer empty: take ahead
        await self._park_until(lambda: not self.held)  # one buffer at a time
        return 0
