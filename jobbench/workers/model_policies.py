"""Scheduling policies of the policy-model worker (docs/latency-model.md, "Policies the model
worker reproduces").

`Sdk112` ports runpod 1.12.0's JobScaler loops (docs/protocol.md section 2); `Drain` is the drain
policy and, with `take_ahead > 0`, take-ahead. Policies reach the queue only through a `Link`
(model_worker.HttpLink over HTTP, queue_link.QueueLink in-process), so this module holds no
HTTP code. Stdlib only, and no clock but the running loop's: on a virtual-time loop
(fake_queue.virtual_clock) the same policies run in virtual time.
"""

from __future__ import annotations

import asyncio
import sys
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from fake_queue.protocol import SDK_112, effective_take_ahead

Job = dict[str, Any]
T = TypeVar("T")

TAKE_TIMEOUT_S = 90.0  # JobScaler.jobs_fetcher_timeout
STOP_TIMEOUT_S = 90.0  # JobScaler.stop_signals_fetcher_timeout
FULL_RECHECK_S = 1.0  # 1.12.0 get_jobs: sleep(1) while no slot is free
PICKUP_S = 0.1  # 1.12.0 run_jobs: FIRST_COMPLETED timeout and idle sleep
RATE_LIMIT_S = 5.0  # debounce after a 429
STOP_FLOOR_S = 1.0  # 1.12.0 monitor_stop_signals: floor after an empty poll or an error
ERROR_PAUSE_S = 1.0  # ours (drain, take-ahead): don't spin on a failing job-take
# Real-time tuning (Drain's defaults): results post once no job has returned for this long...
POST_QUIET_S = 0.0002
POST_HOLD_MAX_S = 0.001  # ...or once the oldest has waited this long


class RateLimited(Exception):
    """job-take or job-stop answered 429."""


class Link(Protocol):
    """The worker-facing protocol, as the policies need it."""

    stop_enabled: bool

    async def take(
        self, count: int, in_progress: bool, on_sent: Callable[[], None] | None = None
    ) -> list[Job]:
        """One job-take; `on_sent` runs once the request is on the wire."""

    async def stops(self) -> list[str]: ...

    async def process(self, job: Job) -> None:
        """Run the handler and post job-done; cancelling it posts nothing."""

    async def handle(self, job: Job, started: float | None = None) -> dict[str, Any]:
        """Run the handler only: the job-done body. `started`: when the job got its slot
        (event loop time), if that was before now."""

    async def post_done(self, job_id: str, result: dict[str, Any]) -> None:
        """Post a job-done body (retries and failures are the link's business)."""


def loop_time() -> float:
    """The running event loop's clock (virtual on a virtual-time loop)."""
    return asyncio.get_running_loop().time()


class ErrorLog:
    """stderr lines, each distinct message at most once per `every_s` of `clock` (default: the
    running loop's, so call it from the loop): retry loops can't flood."""

    def __init__(
        self, prefix: str, every_s: float = 10.0, clock: Callable[[], float] = loop_time
    ) -> None:
        self.prefix = prefix
        self.every_s = every_s
        self.clock = clock
        self._seen: dict[str, tuple[float, int]] = {}  # message -> (last printed, held back)

    def __call__(self, message: str) -> None:
        now = self.clock()
        printed, held = self._seen.get(message, (-self.every_s, 0))
        if now - printed < self.every_s:
            self._seen[message] = (printed, held + 1)
            return
        if len(self._seen) > 1000:  # messages naming jobs are all distinct
            self._seen.clear()
        self._seen[message] = (now, 0)
        more = f" (and {held} more times)" if held else ""
        print(f"{self.prefix}: {message}{more}", file=sys.stderr, flush=True)


log = ErrorLog("model_worker")


class Policy:
    """What every policy shares: the take and stop loops, and a prompt shutdown."""

    error_pause_s = ERROR_PAUSE_S

    def __init__(self, link: Link, slots: int) -> None:
        self.link = link
        self.slots = slots
        self.stopping = asyncio.Event()
        self._taker: asyncio.Task[None] | None = None
        self._stopper: asyncio.Task[None] | None = None

    # -- per policy ---------------------------------------------------------------------------
    async def take_loop(self) -> None:
        raise NotImplementedError

    def accept(self, jobs: list[Job]) -> None:
        """Take charge of jobs a take brought (synchronous: nothing can come in between)."""
        raise NotImplementedError

    async def run_jobs(self) -> None:
        """Run jobs until the taker has ended and every job is finished."""
        raise NotImplementedError

    def stop_job(self, job_id: str) -> None:
        raise NotImplementedError

    def job_ids(self) -> list[str]:
        """Ids in progress on this worker (the heartbeat's `job_id`)."""
        raise NotImplementedError

    def _wake(self) -> None:
        """Wake anything waiting on the policy's state (shutdown and the taker's end change it)."""

    # -- shared -------------------------------------------------------------------------------
    async def run(self) -> None:
        self._taker = asyncio.create_task(self.take_loop())
        self._taker.add_done_callback(lambda _: self._wake())
        self._stopper = asyncio.create_task(monitor_stops(self.link, self.stop_job))
        try:
            await self.run_jobs()
        finally:
            self._stopper.cancel()
            self._taker.cancel()
            await asyncio.wait([self._stopper, self._taker])
        if not self._taker.cancelled() and self._taker.exception() is not None:
            raise RuntimeError("the take loop failed") from self._taker.exception()

    def shutdown(self) -> None:
        """Stop taking and polling now; running (and held) jobs still finish and post."""
        if self.stopping.is_set():
            return
        self.stopping.set()
        # A long-poll could hold for the server's whole `hold`: cancel it, the server puts back
        # what it claimed. A take whose answer already arrived has handed its jobs to accept().
        for task in (self._taker, self._stopper):
            if task is not None:
                task.cancel()
        self._wake()

    def taker_done(self) -> bool:
        return self._taker is not None and self._taker.done()

    async def fetch(
        self, count: int, in_progress: bool, on_sent: Callable[[], None] | None = None
    ) -> list[Job]:
        """One take, bounded like 1.12.0's wait_for; [] on 204, errors and timeouts."""
        take = self.link.take(count, in_progress, on_sent)
        jobs = await guarded("job-take", take, TAKE_TIMEOUT_S, self.error_pause_s)
        if jobs is None:
            return []
        self.accept(jobs)  # in the same step as the answer's read: nothing comes between
        return jobs


async def guarded(
    what: str, call: Awaitable[list[T]], timeout_s: float, error_pause_s: float
) -> list[T] | None:
    """`call` bounded by `timeout_s`, as 1.12.0 guards job-take and job-stop. None when it
    failed: after a 429 it pauses RATE_LIMIT_S, after an error (logged) `error_pause_s`."""
    try:
        if sys.version_info >= (3, 11):  # no extra task (and loop turn), unlike wait_for
            async with asyncio.timeout(timeout_s):
                return await call
        return await asyncio.wait_for(call, timeout_s)
    except RateLimited:
        await asyncio.sleep(RATE_LIMIT_S)
    except asyncio.TimeoutError:
        pass
    except Exception as exc:
        log(f"{what} failed: {type(exc).__name__}: {exc}")
        await asyncio.sleep(error_pause_s)
    return None


async def run_logged(link: Link, job: Job) -> None:
    """Process one job; an unexpected error is logged, not left in an unawaited task."""
    try:
        await link.process(job)
    except Exception as exc:
        log(f"job {job.get('id')!r} failed outside its handler: {type(exc).__name__}: {exc}")


async def monitor_stops(link: Link, stop_job: Callable[[str], None]) -> None:
    """1.12.0's monitor_stop_signals: long-poll job-stop and stop the listed jobs."""
    if not link.stop_enabled:
        log("the job-take URL has no /job-take/: per-job stop is disabled")
        return
    while True:
        job_ids = await guarded("job-stop", link.stops(), STOP_TIMEOUT_S, STOP_FLOOR_S)
        if job_ids == []:
            await asyncio.sleep(STOP_FLOOR_S)
        for job_id in job_ids or ():
            stop_job(job_id)


class Sdk112(Policy):
    """runpod 1.12.0 JobScaler: re-check every 1 s when full; 0.1 s pickup from a local queue."""

    error_pause_s = 0.0  # 1.12.0 re-takes at once after an error

    def __init__(self, link: Link, slots: int) -> None:
        super().__init__(link, slots)
        self.queue: asyncio.Queue[Job] = asyncio.Queue()
        self.progress: set[str] = set()  # JobsProgress: from take until job-done returned
        self.tasks: dict[str, asyncio.Task[None]] = {}

    def job_ids(self) -> list[str]:
        return sorted(self.progress)

    async def take_loop(self) -> None:
        while not self.stopping.is_set():
            # Taken jobs count twice (queue and progress) until run_jobs picks them up.
            need = self.slots - (self.queue.qsize() + len(self.progress))
            if need <= 0:
                await asyncio.sleep(FULL_RECHECK_S)
                continue
            await self.fetch(need, bool(self.progress))
            await asyncio.sleep(0)

    def accept(self, jobs: list[Job]) -> None:
        for job in jobs:
            self.queue.put_nowait(job)
            self.progress.add(job["id"])

    async def run_jobs(self) -> None:
        tasks: set[asyncio.Task[None]] = set()
        while not self.taker_done() or not self.queue.empty():
            while len(tasks) < self.slots and not self.queue.empty():
                job = self.queue.get_nowait()
                task = asyncio.create_task(self._handle(job))
                tasks.add(task)
                self.tasks[job["id"]] = task
            if tasks:
                done, _ = await asyncio.wait(
                    tasks, timeout=PICKUP_S, return_when=asyncio.FIRST_COMPLETED
                )
                tasks.difference_update(done)
            else:
                await asyncio.sleep(PICKUP_S)
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _handle(self, job: Job) -> None:
        try:
            await run_logged(self.link, job)
        finally:
            self.progress.discard(job["id"])
            self.tasks.pop(job["id"], None)

    def stop_job(self, job_id: str) -> None:
        # As in 1.12.0, only a started job can be stopped; one still queued locally runs later.
        task = self.tasks.get(job_id)
        if task is not None:
            task.cancel()


class Drain(Policy):
    """drain (take_ahead == 0) and take-ahead (take_ahead == K > 0), event-driven.

    One take at a time. Free slots (at start, or after a short take): ask for exactly those, at
    once. All slots busy: drain waits until every slot is free, then asks for a full batch;
    take-ahead, after a take that came back full, asks for K more and holds them, one buffer at
    a time. A job holds its slot until its handler returns; its job-done POST then goes out in
    the background, so result round trips through the queue never delay the next batch (the
    cycle is take + job, docs/latency-model.md). Held jobs move into slots the instant one frees,
    and a take that became due goes out before the results that made it due: on the wire and at
    the queue, the take is on the critical path and the results are not.

    Results post once no job has returned for `post_quiet_s`, or once the oldest has waited
    `post_hold_max_s` (real-time tuning: a batch's returns spread over a few hundred
    microseconds; 0 and 0 post each at once, as in virtual time where nothing spreads).
    """

    def __init__(
        self,
        link: Link,
        slots: int,
        take_ahead: int = 0,
        *,
        post_quiet_s: float = POST_QUIET_S,
        post_hold_max_s: float = POST_HOLD_MAX_S,
    ) -> None:
        super().__init__(link, slots)
        self.take_ahead = take_ahead
        self.post_quiet_s = post_quiet_s
        self.post_hold_max_s = post_hold_max_s
        # Keyed by task, not job id: slot accounting must survive a job id seen twice.
        self.running: dict[asyncio.Task[None], str] = {}
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
        return sorted([*self.running.values(), *(str(job["id"]) for job in self.held)])

    def free(self) -> int:
        return self.slots - len(self.running) - len(self.held)

    async def take_loop(self) -> None:
        last_full = False
        while not self.stopping.is_set():
            count = await self._next_count(last_full)
            if count <= 0:
                continue
            try:
                in_progress = bool(self.running or self.held)
                jobs = await self.fetch(count, in_progress, self._posts_may_go.set)
            finally:
                self._posts_may_go.set()  # also when the take failed before it was sent
            last_full = len(jobs) >= count

    async def _next_count(self, last_full: bool) -> int:
        """How many jobs to ask for next; 0 when it waited for a change: decide again."""
        if self.free() > 0:
            return self.free()  # drained, or the last take came back short: free slots only
        if self.take_ahead and last_full:
            if not self.held:
                return self.take_ahead  # slots busy, buffer empty: take ahead
            await self._park_until(lambda: not self.held)  # one buffer at a time
            return 0
        await self._park_until(lambda: not self.running and not self.held)  # drain
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
        await self._wait_until(self.taker_done, stop=False)
        await self._wait_until(lambda: not self.running and not self.held, stop=False)
        while pending := [t for t in (self._poster, *self.posting) if t and not t.done()]:
            # shutdown: every finished job's result still goes out
            await asyncio.gather(*pending, return_exceptions=True)

    def accept(self, jobs: list[Job]) -> None:
        self.held.extend(jobs)
        self._fill()

    def _fill(self) -> None:
        # A job's time runs from here, when it got its slot, not from when its task first runs:
        # starting a batch's tasks one by one would otherwise stretch the batch by ~10 us a job.
        started = asyncio.get_running_loop().time()
        while self.held and len(self.running) < self.slots:
            job = self.held.popleft()
            self.running[asyncio.create_task(self._run(job, started))] = str(job["id"])
        self._notify()

    async def _run(self, job: Job, started: float) -> None:
        task = asyncio.current_task()
        try:
            result = await self.link.handle(job, started)
        finally:
            # The slot frees as the handler returns (or fails, or is stopped), not in a done
            # callback a loop turn later: a take this makes due must go before this result.
            if task is not None:
                self._finished(task)
        self.unposted.append((str(job["id"]), result))
        self._last_return = asyncio.get_running_loop().time()
        if self._poster is None or self._poster.done():
            self._poster = asyncio.create_task(self._post_unposted())

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
            while self.unposted:
                post = asyncio.create_task(self._post(*self.unposted.popleft()))
                self.posting.add(post)
                post.add_done_callback(self.posting.discard)

    async def _post(self, job_id: str, result: dict[str, Any]) -> None:
        try:
            await self.link.post_done(job_id, result)
        except Exception as exc:
            log(f"job-done for {job_id!r} failed: {type(exc).__name__}: {exc}")

    def _finished(self, task: asyncio.Task[None]) -> None:
        if self.running.pop(task, None) is not None:
            self._fill()  # held jobs start the instant a slot frees

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
        task = next((t for t, running_id in self.running.items() if running_id == job_id), None)
        if task is not None:
            # No job-done. Free the slot now: a task cancelled before its first step never
            # reaches the `finally` in _run.
            task.cancel()
            self._finished(task)
            return
        for job in self.held:
            if job["id"] == job_id:
                self.held.remove(job)  # dropped before it ran: no job-done either
                self._notify()
                return


def make_policy(
    name: str,
    link: Link,
    slots: int,
    take_ahead: int,
    *,
    post_quiet_s: float = POST_QUIET_S,
    post_hold_max_s: float = POST_HOLD_MAX_S,
) -> Policy:
    """The policy `name` (sdk-1.12 | drain | take-ahead); the post timing is Drain's."""
    if name == SDK_112:
        return Sdk112(link, slots)
    return Drain(
        link,
        slots,
        effective_take_ahead(name, take_ahead),
        post_quiet_s=post_quiet_s,
        post_hold_max_s=post_hold_max_s,
    )
