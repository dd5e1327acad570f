"""What every model-worker policy (policy_sdk112 and the fixes built on it, policy_drain;
policy_choice picks one) shares: the `Link` protocol the policies reach the queue through, the
timeouts and pauses 1.12.0 guards its calls with, the rate-limited error log, and `Policy`, the
base with the take and stop loops and the shutdown. Stdlib only, and no clock but the running
loop's (virtual on a virtual-time loop).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

Job = dict[str, Any]
T = TypeVar("T")

TAKE_TIMEOUT_S = 90.0  # JobScaler.jobs_fetcher_timeout
STOP_TIMEOUT_S = 90.0  # JobScaler.stop_signals_fetcher_timeout
RATE_LIMIT_S = 5.0  # debounce after a 429
STOP_FLOOR_S = 1.0  # 1.12.0 monitor_stop_signals: floor after an empty poll or an error
ERROR_PAUSE_S = 1.0  # ours (drain, take-ahead): don't spin on a failing job-take


class RateLimited(Exception):
    """job-take or job-stop answered 429."""


class Run(Protocol):
    """A job in a slot: it ends by calling its policy's `on_end(run, body)`, or is stopped."""

    job: Job

    def stop(self) -> None:
        """No job-done: it ends now, without its body (a stopped job)."""


# (the run, its job-done body; None: it failed outside its handler, nothing to post)
OnEnd = Callable[[Run, "dict[str, Any] | None"], None]


class Link(Protocol):
    """The worker-facing protocol, as the policies need it."""

    stop_enabled: bool
    # When the last take's answer reached the worker (loop time), if the link can tell (None:
    # now): its jobs' time runs from then, not from after the answer was read and parsed.
    answer_arrived: float | None

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

    def start_jobs(self, batch: list[tuple[Job, float]], on_end: OnEnd) -> Sequence[Run]:
        """Start (job, when it got its slot) pairs given slots together; each run calls
        `on_end(run, body)` as its handler returns (run_job.start_bench_runs: task-free)."""

    async def post_done(self, job_id: str, result: dict[str, Any]) -> None:
        """Post a job-done body (retries and failures are the link's business)."""

    async def post_done_many(self, results: list[tuple[str, dict[str, Any]]]) -> None:
        """Post (job id, job-done body) pairs, concurrently, as post_done posts each."""


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


log = ErrorLog("policy_worker")


class Policy:
    """What every policy shares: the take and stop loops, and a prompt shutdown."""

    error_pause_s = ERROR_PAUSE_S
    # How a take is bounded: inline (asyncio.timeout), the answer's jobs accepted in the step
    # that reads it; or, for the policies on 1.12.0's loops, through asyncio.wait_for as the
    # SDK bounds it, which on Python 3.11 runs the take as a task of its own, so the taker
    # goes on a loop turn after its answer (docs/fixes.md, "Real branches").
    take_as_a_task = False

    def __init__(self, link: Link, slots: int) -> None:
        self.link = link
        self.slots = slots
        self.stopping = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._taker: asyncio.Task[None] | None = None
        self._stopper: asyncio.Task[None] | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The running loop, looked up once: asyncio.get_running_loop() costs a getpid()
        system call each time, and a policy would call it several times a job."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop

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
        return await self.try_fetch(count, in_progress, on_sent) or []

    async def try_fetch(
        self, count: int, in_progress: bool, on_sent: Callable[[], None] | None = None
    ) -> list[Job] | None:
        """`fetch`, telling an empty answer ([]: 204, or the hold ran out) from a failed take
        (None: an error, a 429 or a timeout), for a policy that backs off after the one only."""
        take = self.link.take(count, in_progress, on_sent)
        jobs = await guarded(
            "job-take", take, TAKE_TIMEOUT_S, self.error_pause_s, self.take_as_a_task
        )
        if jobs is not None:
            await self.answered()
            self.accept(jobs)
        return jobs

    async def answered(self) -> None:
        """Between a take's answer and its jobs' acceptance: nothing, so the ideal policies
        accept an answer's jobs in the step that reads it."""


async def guarded(
    what: str,
    call: Awaitable[list[T]],
    timeout_s: float,
    error_pause_s: float,
    as_a_task: bool = False,
) -> list[T] | None:
    """`call` bounded by `timeout_s`, as 1.12.0 guards job-take and job-stop; `as_a_task`: by
    asyncio.wait_for, as the SDK does (on Python 3.11 a task of its own, a loop turn more),
    else inline. None when it failed: after a 429 it pauses RATE_LIMIT_S, after an error
    (logged) `error_pause_s`."""
    try:
        if as_a_task:
            return await asyncio.wait_for(call, timeout_s)
        async with asyncio.timeout(timeout_s):  # no extra task (and loop turn), unlike wait_for
            return await call
    except RateLimited:
        await asyncio.sleep(RATE_LIMIT_S)
    except TimeoutError:
        pass
    except Exception as exc:
        log(f"{what} failed: {type(exc).__name__}: {exc}")
        await asyncio.sleep(error_pause_s)
    return None


async def post_each(link: Link, results: list[tuple[str, dict[str, Any]]]) -> None:
    """`link.post_done_many` for a link whose posts are requests: one post_done each, all at
    once; an unexpected error is logged, not raised."""
    posts = (link.post_done(job_id, result) for job_id, result in results)
    outcomes = await asyncio.gather(*posts, return_exceptions=True)
    for (job_id, _), outcome in zip(results, outcomes):
        if isinstance(outcome, Exception):
            log(f"job-done for {job_id!r} failed: {type(outcome).__name__}: {outcome}")
        elif isinstance(outcome, BaseException):
            raise outcome


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
