"""The result document, schema `jobbench.result/1` (reports/README.md): these models are its code.

Field order is the order the writer saves keys in. A field with a default may be absent from a
file (model_base.py): written before it existed (phase means, outliers, the gated metric, the
CPU plan), only in live results (submission, follow, health, partial, the extra job counts), or
only once a rep ran (pooled phases, outliers).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Final, Literal

from pydantic import Discriminator, Field, Tag

from jobbench.results.model_base import Doc, Number

RESULT_SCHEMA: Final = "jobbench.result/1"


class PhaseStats(Doc):
    """Seconds of one job phase over a rep's served jobs (or of a take, or a poll gap)."""

    p50: Number
    p90: Number
    p99: Number
    max: Number
    mean: Number | None = None  # absent before the pooled mean (bee567f)


class Phases(Doc):
    """Queue wait (claim - submit), service (done - claim), end-to-end (done - submit); None
    where no job was served."""

    queue_wait: PhaseStats | None
    service: PhaseStats | None
    e2e: PhaseStats | None


class Jobs(Doc):
    submitted: int
    completed: int
    failed: int
    cancelled: int
    timed_out: int
    unfinished: int
    # live only: outcomes a client sees besides the statuses
    unknown: int | None = None
    rejected: int | None = None
    unsent: int | None = None
    lost: int | None = None  # live: never seen again; fake: a worker lost them (lost_jobs)
    cancelled_by_jobbench: int | None = None
    redelivered: int | None = None  # fake: delivered more than once (absent: none)
    recovered: int | None = None  # fake, with faults: jobs a fault hit that still completed
    doubled: int | None = None  # fake: answered again after they had ended (ran twice)


class Takes(Doc):
    """The workers' takes in the rep; every figure None in live mode (not visible to a client)."""

    count: int | None
    empty: int | None
    asked_mean: Number | None
    got_mean: Number | None
    full_fraction: Number | None
    latency: PhaseStats | None


class Requests(Doc):
    """The workers' requests in a fake-queue or simulated rep that the queue's log records
    (measure/requests.py): takes, job-done posts, requests a fault answered instead, and all
    of them per completed job (None: no job completed)."""

    takes: int
    posts: int
    refused: int
    per_job: Number | None


class Split(Doc):
    jobs_per_worker: dict[str, int]
    max_min_ratio: Number | None
    jain: Number | None


class Anomaly(Doc):
    """What disturbed a rep (`{"kind": "stall", ...}`): a gate sets the rep aside. A stall
    (core/fake/watchdog.py): `worker` did no work from `at_s` (s from the rep's start) for `for_s`
    while it held `held` jobs or jobs were queued; `resumed` false: it never came back."""

    kind: str
    worker: str | None = None
    at_s: Number | None = None
    for_s: Number | None = None
    held: int | None = None
    resumed: bool | None = None
    what: str | None = None  # a saturated harness: which part, how busy (procs/harness_cpu.py)
    fix: str | None = None  # and what to change


class WorkerBelowSlots(Doc):
    """A worker that ran fewer jobs at once than its declared slots while jobs waited
    (measure/concurrency.py): the most it held at once and the most one take asked for."""

    worker: str
    slots: int
    ran_at_most: int
    asked_at_most: int
    short_takes: int  # takes that got all they asked for and left jobs queued


class HarnessCpu(Doc):
    """The harness's own CPU over a fake-queue rep (procs/harness_cpu.py): cores used on average
    by the queue process, the driver, each worker's process group, and the machine's others."""

    wall_s: Number
    queue_cores: Number | None  # None: the queue is another machine's (--server)
    driver_cores: Number | None
    worker_cores: dict[str, Number | None]
    others_cores: Number | None
    machine_busy_cores: Number | None
    cpus: int | None
    # On a Ray cluster: the workers' cores summed per node ("node ID (IP)"); absent: local.
    node_worker_cores: dict[str, Number] | None = None


class Submission(Doc):
    """Live: how the burst's /run requests went."""

    span_s: Number | None
    rate_jps: Number | None
    requests: int
    throttled: int
    server_errors: int
    not_sent: int


class Follow(Doc):
    """Live: the /status polling, and how late a client-observed terminal time can be."""

    status_requests: int
    status_errors: int
    terminal_uncertainty: PhaseStats | None
    cancel_requests: int


class Health(Doc):
    """Live: /health about once a second, `samples` rows of `columns`."""

    columns: list[str]
    samples: list[list[Number | None]]
    max_in_queue: int | None
    max_workers_running: int | None


class Machine(Doc):
    """How busy the machine was during a fake-queue rep (procs/machine.py, Linux): every
    process's CPU share from /proc/stat between the rep's start and end, and the 1-minute
    load average at both ends; None where it could not be read."""

    cpu_busy: Number | None  # 0.0-1.0, all CPUs, jobbench's own processes included
    load1_start: Number | None
    load1_end: Number | None
    cpus: int | None


class ArrivalPacing(Doc):
    """An arrival profile's submissions (core/fake/submit_pacer.py; live: clients/live_burst.py):
    each sent at its intended time whatever the workers do (the open model), and how late the
    driver was."""

    spec: str
    # the profile's instants sent (jobs due at one instant go together); live: the jobs sent
    submissions: int
    # /_bench/burst requests (a driver behind sends every overdue one in one); live: /run calls
    requests: int
    jobs: int
    lateness_p50_s: Number | None
    lateness_p99_s: Number | None
    lateness_max_s: Number | None
    late_jobs: int  # in submissions sent more than late_bound_s after their intended time
    late_bound_s: Number
    not_sent: int  # jobs whose submission was never made (the rep ended first)
    # The bound on the intended times' error on the queue's clock (half the round trip of
    # the clock reading; the fake queue only, absent before it).
    clock_error_s: Number | None = None
    # The pacer thread's scheduling: fifo (real-time), nice (raised) or normal (not allowed
    # more; the fake queue only, absent before it).
    priority: str | None = None


class WorkerHeld(Doc):
    jobs: int
    extra_wait_s: Number


class HeldCost(Doc):
    """Take-ahead's cost (measure/held.py): jobs that waited in one worker's buffer while
    another worker had a free slot, and that extra wait; every buffered job's wait beside."""

    jobs: int
    extra_wait_s: Number
    extra_wait_p99_s: Number | None
    extra_wait_max_s: Number | None
    buffered_jobs: int
    buffer_wait_p99_s: Number | None
    per_worker: dict[str, WorkerHeld]


class FleetEvaluation(Doc):
    """One look of the scaler (fake_queue/queue/fleet.py): what it saw and what it added; `hidden`:
    jobs in take-ahead buffers then, out of its sight."""

    t_s: Number  # from the rep's first submission
    queued: int
    in_progress: int
    oldest_s: Number
    running: int
    add: int
    hidden: int


class FleetWorker(Doc):
    """One worker's life in the rep (seconds from its first submission; None: not in it)."""

    active: bool
    decided_s: Number | None  # the scale-up decision (billed from here)
    reason: str | None
    started_s: Number | None  # its process started (the cold start's modelled part is over)
    polling_s: Number | None  # its first take
    stopping_s: Number | None  # the scale-down decision
    stopped_s: Number | None  # its process exited
    stop_reason: str | None
    billed_s: Number
    idle: list[list[Number | None]]  # [from, to] spans with no job (to None: until the end)


class FleetFigures(Doc):
    """An autoscaled fleet's rep (measure/fleet.py, docs/fleet.md): its cost, cold starts,
    how soon it scaled, what its scaler saw, its size over time and each worker's life."""

    scaler: str | None
    peak_workers: int
    cold_starts: int
    worker_s: Number  # worker-seconds billed: decision (or the rep's start) to stop
    jobs_per_worker_s: Number | None
    first_scale_up_s: Number | None
    scale_up_delay_s: Number | None  # until the first added worker polled
    cold_start_s: dict[str, Number] | None  # from the decision to its first poll: median and max
    rest_s: Number  # until the fleet was back to its active workers
    hidden_max: int | None  # most jobs in take-ahead buffers at a scaler's look (None: live)
    evaluations: list[FleetEvaluation]
    size: list[list[Number]]  # [t_s, workers billed] at each change
    workers: dict[str, FleetWorker]  # empty at a live endpoint: /health counts, names none
    source: str = "events"  # "health": a live endpoint's, from /health samples


class SteadyWindow(Doc):
    start_s: Number  # from the first intended submit
    arrivals: int
    completions: int
    queue_depth: int  # at the window's end
    wait_p50_s: Number | None = None  # latencies of the jobs that ended in the window
    wait_p99_s: Number | None = None
    service_p50_s: Number | None = None
    service_p99_s: Number | None = None
    e2e_p50_s: Number | None
    e2e_p99_s: Number | None
    # From the queue's log (absent at a live endpoint), per worker in Steady.workers' order:
    busy_slots: list[Number] | None = None  # mean slots running a job
    free_slots: Number | None = None  # the fleet's mean slots running none
    delivered: list[int] | None = None  # jobs handed to it (the spread over time)
    buffered: Number | None = None  # mean jobs waiting in take-ahead buffers, fleet-wide
    held_jobs: int | None = None  # left a buffer after waiting while a slot was free elsewhere


class Steady(Doc):
    """An arrival profile's steady state (measure/steady.py): windows, the part after the
    warm-up, the ideal dispatcher's latency for the same arrivals, and whether the queue grew
    without bound (the offered rate beyond capacity)."""

    window_s: Number
    windows: list[SteadyWindow]
    warmup_s: Number
    warmup: str = "detected"  # "set" by the profile's warmup:D, or "detected" (MSER-5)
    steady_s: Number
    arrival_rate_jps: Number | None
    completion_rate_jps: Number | None
    wait_p50_s: Number | None = None
    wait_p99_s: Number | None = None
    service_p50_s: Number | None = None
    service_p99_s: Number | None = None
    e2e_p50_s: Number | None
    e2e_p99_s: Number | None
    ideal_e2e_p50_s: Number | None = None  # the perfect dispatcher (measure/ideal_dispatch.py)
    ideal_e2e_p99_s: Number | None = None
    efficiency: Number | None = None  # ideal_e2e_p99_s / e2e_p99_s
    queue_growth: int
    queue_trend_jps: Number | None = None  # the depth's fitted slope over the steady windows
    saturated: bool
    workers: list[str] | None = None  # the order of each window's per-worker lists


class Rep(Doc):
    """One rep's figures (docs/metrics.md), as measure/ computes them."""

    time_to_first_s: Number | None
    time_to_p50_s: Number | None
    time_to_p99_s: Number | None
    time_to_p100_s: Number | None
    throughput_jps: Number | None
    jobs: Jobs
    phases: Phases
    takes: Takes
    split: Split
    utilisation: Number | None
    ideal_s: Number | None
    efficiency: Number | None
    submission: Submission | None = None  # live only
    follow: Follow | None = None  # live only
    health: Health | None = None  # live only
    partial: str | None = None  # live: "interrupted", "timeout" or "error" when cut short
    anomalies: list[Anomaly] | None = None  # what the runner flagged; such reps never count
    faults: dict[str, int] | None = None  # injected faults by "route:kind" (absent: none)
    refreshes: int | None = None  # workers replaced at a job's asking (refresh_worker; absent: 0)
    lost_jobs: list[str] | None = None  # ids of the jobs a worker lost (jobs.lost counts them)
    machine: Machine | None = None  # the machine's load in the rep (absent: before commit 776aa86)
    arrivals: ArrivalPacing | None = None  # an arrival profile's pacing (absent: a burst)
    held: HeldCost | None = None  # take-ahead's cost (absent: before commit dba92ff, or live)
    steady: Steady | None = None  # an arrival profile's steady state (absent: a burst)
    fleet: FleetFigures | None = None  # an autoscaled fleet's (absent: a fixed fleet)
    harness: HarnessCpu | None = None  # the harness's CPU (absent: live, sim, before 6d5c4a0)
    # --cluster: each worker's node ("node ID (IP)"), the fleet's scaled-up ones too (absent:
    # the workers ran on jobbench's machine)
    worker_nodes: dict[str, str] | None = None
    below_slots: list[WorkerBelowSlots] | None = None  # fake: workers below --slots (absent: none)
    requests: Requests | None = None  # the workers' requests (absent: live, or older files)
    # Each worker's process group's bytes written to storage over the rep, from /proc/<pid>/io
    # (measure/disk_writes.py; absent: live, sim, not Linux, unreadable, or older files)
    worker_write_bytes: dict[str, int] | None = None


class Spread(Doc):
    """A figure across reps."""

    median: Number
    min: Number
    max: Number

    @classmethod
    def of(cls, figure: Mapping[str, Any] | None) -> Spread | None:
        return None if figure is None else cls.model_validate(dict(figure))


def spreads(summary: Mapping[str, Mapping[str, Any] | None]) -> dict[str, Spread | None]:
    """A `summary` block from measure/'s plain dicts."""
    return {key: Spread.of(figure) for key, figure in summary.items()}


class LatencyDistribution(Doc):
    """A latency that is not fixed: {kind, a, b} or {kind: samples, samples} (fake_queue's
    Distribution.to_json); a fixed one is written as its seconds."""

    kind: str
    a: Number | None = None
    b: Number | None = None
    samples: list[Number] | None = None

    def as_written(self) -> dict[str, Any]:
        return self.model_dump(exclude_unset=True)


def _latency_kind(value: Any) -> str:
    return "distribution" if isinstance(value, (dict, LatencyDistribution)) else "seconds"


# Errors name the reading tried: `latency.take.seconds: ...` or `latency.take.distribution.kind`.
LatencyValue = Annotated[
    Annotated[Number, Tag("seconds")] | Annotated[LatencyDistribution, Tag("distribution")],
    Discriminator(_latency_kind),
]


class Params(Doc):
    """What a scenario ran with; comparisons match on these but for the variants' own."""

    workers: int | None  # None: a live endpoint (no workers of ours)
    slots: int | None
    burst: int
    job_seconds: Number
    take_ahead: int | None
    worker: str | None
    policy: str | None
    latency: dict[str, LatencyValue] | None  # take / wake / hold / done; None: live
    submit_rate: str | None = None  # live only
    inputs: int | None = None  # the user's job inputs (--input, --inputs); None: jobbench's
    faults: list[str] | None = None  # the queue's fault rules in force, when any
    worker_faults: list[str] | None = None  # kill:AT:wN / pause:AT:FOR:wN, when any
    # An autoscaled fleet's settings (fake_queue/queue/fleet.py)
    fleet: dict[str, Any] | None = None


class Sdk(Doc):
    """The runpod SDK the workers imported (workers/kinds.py's probe)."""

    version: str | None
    path: str | None
    take_ahead: bool


class Predicted(Doc):
    """A fake-queue scenario simulated in virtual time (core/sim/predict.py): the model's figures
    for the same scenario, beside which the measured reps show the harness overhead (model
    worker) or the SDK against its model (runpod worker). `draws`: simulated reps, the median
    of each figure (1 for fixed latencies; sampled latencies take a few)."""

    policy: str  # the model policy simulated (sdk-1.12 for a runpod worker)
    time_to_p50_s: Number | None
    time_to_p99_s: Number | None
    time_to_p100_s: Number | None
    throughput_jps: Number | None
    efficiency: Number | None
    takes_count: Number | None
    draws: int


class ScenarioResult(Doc):
    name: str
    params: Params
    ideal_s: Number | None  # None: a live endpoint
    worker: str
    sdk: Sdk | None
    gate_metric: str | None = None  # absent before bee567f, and in live results
    reps: list[Rep]
    summary: dict[str, Spread | None]
    pooled_phases: Phases | None = None  # once a rep ran
    outliers: dict[str, list[int]] | None = None  # reps (from 1); once a rep ran, bee567f on
    simulated: str | None = None  # --target sim: the model policy that ran it; else absent
    predicted: Predicted | None = None  # fake queue, simulable workers: the model's figures


class CpuPlan(Doc):
    queue: list[int]
    workers: list[int]


class ClusterNodeInfo(Doc):
    """One node of the Ray cluster as jobbench found it, and the workers placed on it."""

    id: str
    ip: str
    cpus: Number
    workers: list[str]


class ClusterPlacement(Doc):
    """Where a --cluster run's workers ran (procs/ray_workers.py): the address as given, the
    address the nodes reached the queue at, each worker's CPUs and the nodes."""

    address: str
    queue_host: str
    worker_cpus: Number
    nodes: list[ClusterNodeInfo]

    def joined(self, other: ClusterPlacement) -> ClusterPlacement:
        """This placement with `other`'s workers added to their nodes (another row's)."""
        nodes = {node.id: node for node in self.nodes}
        for node in other.nodes:
            mine = nodes.get(node.id)
            if mine is None:
                nodes[node.id] = node
                continue
            more = [worker for worker in node.workers if worker not in mine.workers]
            nodes[node.id] = mine.model_copy(update={"workers": [*mine.workers, *more]})
        return self.model_copy(update={"nodes": list(nodes.values())})


class Environment(Doc):
    python: str
    platform: str
    cpus: int | None
    runpod: str | None
    git_sha: str | None
    cpu_plan: CpuPlan | None = None  # absent before 7770cb4
    cluster: ClusterPlacement | None = None  # a Ray cluster's run (--cluster); absent: local

    def learn(self, found: Mapping[str, Any]) -> None:
        """Fill in what a session found out (`runpod`, `cpu_plan`) where nothing is known yet;
        a cluster's placement gathers every row's workers (each row places its own)."""
        for key, value in found.items():
            if key == "cluster" and self.cluster is not None and value:
                self.cluster = self.cluster.joined(ClusterPlacement.model_validate(value))
            elif not getattr(self, key, None):
                setattr(self, key, value)


class TargetBlock(Doc):
    """The result's `target` block: where it ran (the Target seam itself is core/run/target.py)."""

    kind: str  # "fake", "live" or "sim" (simulated in virtual time)
    endpoint: str  # "embedded", "virtual time" (sim) or a URL, never a key


class Result(Doc):
    schema_: Literal["jobbench.result/1"] = Field(alias="schema")
    label: str
    created: str  # ISO 8601, seconds
    jobbench: str
    environment: Environment
    target: TargetBlock
    complete: bool
    interrupted: bool
    error: str | None
    scenarios: list[ScenarioResult]
    # What times to X %, throughput and the job phases count as done: "completed" jobs only
    # (a failed job is not done work); absent: "terminal", how files before it counted.
    time_to_counts: Literal["terminal", "completed"] = "terminal"

    def scenario(self, name: str) -> ScenarioResult | None:
        return next((entry for entry in self.scenarios if entry.name == name), None)
