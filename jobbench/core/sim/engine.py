"""The simulation engine: one rep of a scenario in virtual time, in this process
(docs/simulation.md).

The unmodified `JobQueue` and the model-worker policies, joined by the in-process link
(workers/queue_link.py), run on a virtual-time loop (fake_queue/queue/virtual_clock.py): the same
queue and policy code the fake target runs in real processes, with no copy of either. A rep
is what the fake target does: every worker polling, the burst submitted at once, run until
every job is terminal, the workers shut down, conservation checked, metrics from the event log.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import time
from asyncio import Future
from collections.abc import Callable, Iterable, Iterator

from fake_queue.api import (
    CompactEvents,
    Event,
    Fleet,
    JobQueue,
    LatencySampler,
    virtual_clock,
    worker_index,
)
from fake_queue.protocol import CANCELLED, COMPLETED, FAILED, TIMED_OUT
from jobbench.core.run.queue_figures import measure_rep
from jobbench.core.run.target_seam import RepOutcome
from jobbench.core.scenario.config import Scenario
from jobbench.core.scenario.watch_bounds import watch_bounds
from jobbench.core.sim.sdk_costs import SdkCosts
from jobbench.core.sim.sim_workers import SimWorkers, process_start_s
from jobbench.errors import RunFailed, UsageError
from jobbench.measure.conservation import check_conservation
from jobbench.workers.policies import NO_TAKE_AHEAD, SDK_112, SDK_BASED, take_ahead_problem
from jobbench.workers.policy_base import Policy
from jobbench.workers.policy_choice import make_policy
from jobbench.workers.policy_sdk112 import AS_THE_LOOP_KEEPS_IT
from jobbench.workers.queue_link import QueueLink
from jobbench.workers.spec import WorkerSpec

RUNPOD_MODEL = SDK_112  # what `--worker runpod` is simulated by: the port of runpod 1.12.0
POLL_S = 0.001  # virtual seconds between "is every worker polling yet?" looks, before the burst
EVENTS_MAX_JOBS = 100_000  # a bigger rep returns no events unless asked: the file would be GBs
PROGRESS_EVERY_S = 0.25  # wall seconds between progress calls
PROGRESS_LOOK_EVERY = 64  # jobs ended between looks at the wall clock for a progress call

RepProgress = Callable[[int, int], None]  # (jobs ended, jobs in the rep)


def simulated_policy(worker: WorkerSpec) -> str:
    """The model policy that stands for `worker` in virtual time; a worker whose code is not
    one of the model's policies is a usage error naming --target sim."""
    if worker.kind == "model":
        assert worker.policy is not None  # worker_spec fills it in
        return worker.policy
    if worker.kind == "command":
        raise UsageError(
            f"--target sim: a --worker command ({worker.command!r}) cannot be simulated, only "
            "the model's policies; use --worker model or runpod, or --target fake"
        )
    if worker.sdk_path is not None:
        raise UsageError(
            f"--target sim: --sdk {worker.sdk_name or worker.sdk_path}: a checkout's own code "
            f"cannot be simulated, only its model {RUNPOD_MODEL}; drop --sdk or use --target fake"
        )
    if take_ahead_problem(RUNPOD_MODEL, worker.take_ahead) == NO_TAKE_AHEAD:
        raise UsageError(
            f"--target sim: --worker runpod is simulated by its model {RUNPOD_MODEL}, which has "
            "no take-ahead; use --worker model --policy sdk-take-ahead (take-ahead on its "
            "loops) or take-ahead (the ideal)"
        )
    return RUNPOD_MODEL


def check_simulable(scenario: Scenario) -> str:
    """The policy the scenario's workers are simulated by, or the usage error why they cannot."""
    if scenario.faults or scenario.worker_faults:
        flag = "--fault" if scenario.faults else "--worker-fault"
        raise UsageError(
            f"--target sim: {flag}: faults are not simulated yet; drop them or use --target fake"
        )
    return simulated_policy(scenario.worker)


def rep_seed(seed: int | None, rep: int) -> int | None:
    """The latency sampler's seed for rep `rep` of a run seeded `seed` (None: unseeded, a fresh
    draw each time). A hash, so neighbouring seeds and reps give unrelated draws, and stable
    across processes (Python's hash() of a str is not)."""
    if seed is None:
        return None
    digest = hashlib.sha256(f"jobbench-sim/{seed}/{rep}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def simulate_rep(
    scenario: Scenario,
    *,
    seed: int | None,
    rep: int = 1,
    progress: RepProgress | None = None,
    keep_events: bool | None = None,
    brief: bool = False,
) -> RepOutcome:
    """One rep of `scenario` in virtual time: its measure and the queue's events.

    `progress(done, total)`, if given, is told the jobs ended so far, at most every
    PROGRESS_EVERY_S of wall time and once at the end. `keep_events`: return the rep's events
    (as dicts, for the events file); None keeps them for reps of up to EVENTS_MAX_JOBS jobs.
    `brief`: only the figures a sweep keeps (core/run/queue_figures.py; an autoscaled fleet's
    rep is measured in full)."""
    policy = check_simulable(scenario)
    keep = scenario.load.jobs <= EVENTS_MAX_JOBS if keep_events is None else keep_events
    with _collector_paused():
        # A fake-target rep after the first runs on workers the rep before left as they were
        # (an SDK worker's take in flight, its cache): the SDK's models start those warm.
        warm = rep > 1 and policy in SDK_BASED and scenario.fleet is None
        simulated = _rep(scenario, policy, rep_seed(seed, rep), progress, keep, warm)
        events, ids = virtual_clock.run(simulated)
        # Measured once the queue, its jobs and the fleet are gone, their memory the analysis's:
        # the tasks cancelled at the loop's close hold them in cycles (frames, tracebacks), so
        # one collection, of the rep's objects only (older ones are frozen).
        gc.collect()
        measure = measure_rep(scenario, events, ids, brief=brief)
    return RepOutcome(measure, events if isinstance(events, list) else [])


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection during a rep: a million-job rep holds millions of live
    objects (jobs, events, their dicts), and each full collection walks them all, for nothing
    (they stay live until the rep ends). Objects from before the rep are frozen out of later
    collections' walks too; collection resumes as it was once the rep is over."""
    was_enabled = gc.isenabled()
    gc.disable()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()


class _EndWatch:
    """Watches the queue for the rep's end: the instant the last of `burst` jobs ends it
    resolves `all_ended`, and it tells `progress` on the way. One future for the rep instead
    of a watcher per job (a future, its list and a gather callback each: about 200 bytes a
    job, and a loop callback as each ends)."""

    def __init__(
        self, queue: JobQueue, burst: int, progress: RepProgress | None, all_ended: Future[None]
    ) -> None:
        self.tally = queue.tally
        self.burst = burst
        self.progress = progress
        self.all_ended = all_ended
        self.told_at = time.monotonic()
        queue.on_job_end = self.job_ended

    @property
    def ended(self) -> int:
        """Jobs in a terminal state (a retried one is not, again)."""
        # get, not [ ]: a status no job has yet would be a Counter.__missing__ call, three a job
        get = self.tally.get
        return get(COMPLETED, 0) + get(FAILED, 0) + get(CANCELLED, 0) + get(TIMED_OUT, 0)

    def job_ended(self) -> None:
        ended = self.ended
        if ended >= self.burst:
            if not self.all_ended.done():
                self.all_ended.set_result(None)
        elif ended % PROGRESS_LOOK_EVERY:
            return  # the clock is read only every so many jobs: a million reads cost a second
        if self.progress is not None:
            now = time.monotonic()
            if ended >= self.burst or now - self.told_at >= PROGRESS_EVERY_S:
                self.told_at = now
                self.progress(min(ended, self.burst), self.burst)


async def _rep(
    scenario: Scenario,
    policy: str,
    seed: int | None,
    progress: RepProgress | None,
    keep_events: bool,
    warm: bool = False,
) -> tuple[Iterable[Event], list[str]]:
    """The rep run, its conservation checked: its events (a list of dicts if kept, else read
    from the compact log) and the worker ids."""
    loop = asyncio.get_running_loop()
    assert isinstance(loop, virtual_clock.VirtualTimeLoop)
    queue = JobQueue(LatencySampler(scenario.latency, seed), clock=loop)
    burst = scenario.load.jobs
    # Kept, the events end up as dicts anyway: a plain list holds them as the queue logs them,
    # with no columns to fill and read back. Not kept (a big rep), the compact log's columns
    # are all the memory they take.
    log: list[Event] | CompactEvents = [] if keep_events else CompactEvents()
    queue.events = log
    watch = _EndWatch(queue, burst, progress, loop.create_future())
    ids = scenario.worker_ids()  # the fake target's, so a simulated split pairs with a real one
    fleet = None
    if scenario.fleet is not None:
        fleet = queue.fleet = Fleet(queue, scenario.fleet, seed)

    # An SDK-based policy stands for a real SDK worker: its loop's timing and its CPU are
    # added (core/sim/sdk_costs.py); the ideal policies run without either.
    sdk = SdkCosts(seed) if policy in SDK_BASED else None

    def make(worker: str) -> Policy:
        costs = sdk.worker(worker) if sdk else None
        # The drain and take-ahead policies' post tuning (post_quiet_s, post_hold_max_s) waits
        # out a batch's returns spreading over real milliseconds of scheduling; in virtual time
        # a batch's returns land at one instant, so the wait would only add time the model does
        # not have.
        return make_policy(
            policy,
            QueueLink(queue, worker, costs),
            scenario.slots,
            scenario.worker.take_ahead,
            post_quiet_s=0,
            post_hold_max_s=0,
            timing=costs or AS_THE_LOOP_KEEPS_IT,
        )

    crew = SimWorkers(make, fleet, process_start_s(policy))
    for worker in ids:
        crew.run(worker)
    give_up_s = watch_bounds(scenario).give_up_s
    try:
        await _all_polling(queue, ids)
        if warm and sdk is not None:
            await _warm_up(queue, scenario, give_up_s, sdk.between_reps_s(), ids)
            log = queue.events = [] if keep_events else CompactEvents()
            watch = _EndWatch(queue, burst, progress, loop.create_future())
            await _all_polling(queue, ids)
        await _submit_on_time(queue, scenario)
        await _until_all_ended(watch, give_up_s)
        # An autoscaled fleet's rep ends once it is back to its active workers: the idle
        # workers' tail is billed, so it is the rep's.
        await crew.at_rest(give_up_s + (fleet.settings.idle_timeout_s if fleet else 0))
        # The rep's events end as its last job does (or its fleet rests), as the fake target
        # reads them: the next takes, already waiting, and their end at the shutdown are no
        # part of this rep.
        events: Iterable[Event] = log[: len(log)] if isinstance(log, list) else log.head()
        check_conservation(
            {"counts": queue.counts(), "conservation": queue.conservation_error()}, events, burst
        )
        seen = ids if fleet is None else sorted(fleet.members, key=worker_index)  # before the reset
    finally:
        await crew.shut_down()
        # The rep's jobs go now, freed by reference counting as the queue forgets them,
        # rather than by the collection after the loop's close walking every one of them.
        queue.reset()
    return events, seen


async def _all_polling(queue: JobQueue, ids: list[str]) -> None:
    """Until every worker has a take waiting: a rep starts then, as on the fake target."""
    while len(queue.waiting) < len(ids):
        await asyncio.sleep(POLL_S)


async def _warm_up(
    queue: JobQueue, scenario: Scenario, give_up_s: float, gap_s: float, ids: list[str]
) -> None:
    """The rep before, run and forgotten: its load, until its last job ends, then the pause
    before the next rep, the takes still waiting answered and sent again, and the queue's
    reset between reps (what the fake target's `renew_takes()` and `reset()` do: jobs and
    events go, the workers' fresh takes stay)."""
    loop = asyncio.get_running_loop()
    await _submit_on_time(queue, scenario)
    await _until_all_ended(
        _EndWatch(queue, scenario.load.jobs, None, loop.create_future()), give_up_s
    )
    await asyncio.sleep(gap_s)
    queue.renew_takes()
    await _all_polling(queue, ids)
    queue.reset()


async def _submit_on_time(queue: JobQueue, scenario: Scenario) -> None:
    """The load's waves, each at its time (virtual: exactly on time), the jobs' inputs cycled
    across the whole rep as the fake target cycles them."""
    loop = asyncio.get_running_loop()
    began = loop.time()
    inputs = scenario.job_inputs()
    sent = 0
    for wave in scenario.load.waves():
        if (wait := began + wave.at_s - loop.time()) > 0:
            await asyncio.sleep(wait)
        queue.submit_many(inputs[(sent + i) % len(inputs)] for i in range(wave.jobs))
        sent += wave.jobs


async def _until_all_ended(watch: _EndWatch, give_up_s: float) -> None:
    """Until the instant the last job ends; no job ending for `give_up_s` of virtual time is a
    model bug (the fake target's watchdog bound), named rather than simulated forever."""
    while True:
        before = watch.ended
        try:
            await asyncio.wait_for(asyncio.shield(watch.all_ended), give_up_s)
            return
        except TimeoutError:
            if watch.ended == before:
                raise RunFailed(
                    f"simulation: {watch.burst - before} of {watch.burst} jobs did not end within "
                    f"{give_up_s:g} virtual seconds of the last one; a model policy hangs"
                ) from None
