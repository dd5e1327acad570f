"""Live-mode figures: client-side records of one burst -> a RepMeasure with metrics.rep_measure's
keys, built from the same pieces (figures.py).

There is no server event log at a live endpoint, so (reports/README.md, "live mode"):
queue wait = the platform's delayTime, service = its executionTime, end-to-end = client-observed
terminal time - send time of the accepted /run; time to X % from client-observed terminal times,
counted from the first accepted submit. Figures the client cannot see (takes, utilisation, the
ideal) are None.

An arrival profile's rep runs end-to-end and time to X % from each job's intended time instead
(coordinated omission: a late driver must not hide queueing): end-to-end = terminal time -
intended time, time to X % from the first intended submit. It adds the `arrivals` block (how
late each /run went out) and the `steady` block (measure/steady.py, from client-side times and
the /health queue depth), whose wait runs from the intended time to the claim (claim_ns).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from fake_queue.protocol import CANCELLED, COMPLETED, FAILED, TERMINAL, TIMED_OUT
from jobbench.clients.live_records import BurstRecord, HealthSample, JobRecord
from jobbench.measure.arrival_pacing import pacing_figures
from jobbench.measure.events import SERVED
from jobbench.measure.figures import (
    NS_PER_S,
    PhaseSamples,
    RepMeasure,
    drain_figures,
    round6,
    rounded_phase,
    split_figures,
)
from jobbench.measure.steady import Served, live_steady_figures

NO_TAKES = {
    "count": None,
    "empty": None,
    "asked_mean": None,
    "got_mean": None,
    "full_fraction": None,
    "latency": None,
}


def _job_counts(record: BurstRecord, accepted: Sequence[JobRecord]) -> dict[str, int]:
    outcomes = Counter(job.outcome for job in record.jobs)
    statuses = Counter(job.status for job in accepted if not job.lost)
    terminal = sum(statuses[s] for s in TERMINAL)
    return {
        "submitted": len(accepted),
        "completed": statuses[COMPLETED],
        "failed": statuses[FAILED],
        "cancelled": statuses[CANCELLED],
        "timed_out": statuses[TIMED_OUT],
        "unfinished": len(accepted) - terminal,
        "unknown": outcomes["unknown"],
        "rejected": outcomes["rejected"],
        "unsent": outcomes["unsent"],
        "lost": sum(1 for job in accepted if job.lost),
        "cancelled_by_jobbench": sum(1 for job in accepted if job.cancelled_by_us),
    }


def _samples(accepted: Sequence[JobRecord], profile: bool) -> PhaseSamples:
    """The platform's delayTime and executionTime where it reported them, as it reported them
    (the run table names them so); e2e on our clock, from the intended time under a profile,
    so it holds the driver's lateness."""
    queue_wait: list[float] = []
    service: list[float] = []
    e2e: list[float] = []
    for job in accepted:
        if job.status != COMPLETED or job.done_ns is None or job.sent_ns is None:
            continue
        if job.delay_ms is not None:
            queue_wait.append(job.delay_ms / 1000)
        if job.execution_ms is not None:
            service.append(job.execution_ms / 1000)
        e2e.append((job.done_ns - _origin_ns(job, profile)) / NS_PER_S)
    return PhaseSamples(tuple(queue_wait), tuple(service), tuple(e2e))


def _origin_ns(job: JobRecord, profile: bool) -> int:
    """Where a job's latencies start: its intended time under a profile, else its accepted
    /run's send time."""
    origin = job.intended_ns if profile else job.sent_ns
    assert origin is not None, f"job {job.index} has no {'intended' if profile else 'send'} time"
    return origin


def claim_ns(job: JobRecord) -> int | None:
    """When the platform handed the job to a worker, as near as a client can tell: delayTime
    runs from when RunPod took the accepted /run (its send time here: the intended time plus
    that /run's lateness); without it, the terminal time less executionTime; else unknown."""
    if job.delay_ms is not None and job.sent_ns is not None:
        return job.sent_ns + round(job.delay_ms * 1e6)
    if job.execution_ms is not None and job.done_ns is not None:
        return job.done_ns - round(job.execution_ms * 1e6)
    return None


def served_times(accepted: Sequence[JobRecord]) -> list[Served]:
    """(intended, claim, done) of each completed job of a profile. A job whose claim is unknown
    (the platform gave neither delayTime nor executionTime) is left out: a guessed claim would
    put made-up numbers in the wait and service figures."""
    served: list[Served] = []
    for job in accepted:
        if job.status != COMPLETED or job.done_ns is None or job.intended_ns is None:
            continue
        claim = claim_ns(job)
        if claim is not None:
            served.append((job.intended_ns, claim, job.done_ns))
    return served


def arrivals_block(record: BurstRecord, spec: str) -> dict[str, Any]:
    """The `arrivals` block: each /run is one job's submission, late by its first attempt's
    send time less its intended time (a throttled retry is the endpoint's, counted under
    `submission`); `requests` counts every /run made."""
    lateness = [
        max(job.first_sent_ns - job.intended_ns, 0) / NS_PER_S
        for job in record.jobs
        if job.first_sent_ns is not None and job.intended_ns is not None
    ]
    return pacing_figures(
        spec, lateness, [1] * len(lateness), record.counts["run_requests"], len(record.jobs)
    )


def steady_block(
    record: BurstRecord, accepted: Sequence[JobRecord], warmup_s: float | None
) -> dict[str, Any] | None:
    """The `steady` block from client-side times; the queue depth is /health's `inQueue`."""
    arrivals = [job.intended_ns for job in accepted if job.intended_ns is not None]
    depth = [(s.t_ns, s.in_queue) for s in record.health if s.in_queue is not None]
    return live_steady_figures(served_times(accepted), arrivals, depth, warmup_s)


def _submission(record: BurstRecord, accepted: Sequence[JobRecord]) -> dict[str, Any]:
    sent = sorted(job.sent_ns for job in accepted if job.sent_ns is not None)
    span = (sent[-1] - sent[0]) / NS_PER_S if sent else None
    c = record.counts
    return {
        "span_s": round6(span),
        "rate_jps": round6((len(sent) - 1) / span) if span else None,
        "requests": c["run_requests"],
        "throttled": c["run_throttled"],
        "server_errors": c["run_server_errors"],
        "not_sent": c["run_not_sent"],
    }


def _follow(record: BurstRecord, accepted: Sequence[JobRecord]) -> dict[str, Any]:
    """How late a client-observed terminal time can be: the gap since the last pending answer."""
    gaps = [
        (job.done_ns - job.last_pending_ns) / NS_PER_S
        for job in accepted
        if job.done_ns is not None and job.last_pending_ns is not None
    ]
    c = record.counts
    return {
        "status_requests": c["status_requests"],
        "status_errors": c["status_errors"],
        "terminal_uncertainty": rounded_phase(gaps),
        "cancel_requests": c["cancel_requests"],
    }


def _health(samples: Sequence[HealthSample], start: int) -> dict[str, Any]:
    rows = [
        [round6((s.t_ns - start) / NS_PER_S), s.in_queue, s.in_progress, s.running, s.idle]
        for s in samples
    ]

    def peak(values: list[int | None]) -> int | None:
        known = [v for v in values if v is not None]
        return max(known) if known else None

    return {
        "columns": ["t_s", "in_queue", "in_progress", "workers_running", "workers_idle"],
        "samples": rows,
        "max_in_queue": peak([s.in_queue for s in samples]),
        "max_workers_running": peak([s.running for s in samples]),
    }


def health_fleet(
    samples: Sequence[HealthSample], start: int, completed: int
) -> dict[str, Any] | None:
    """A live endpoint's fleet as /health saw it, in the fake queue's `fleet` shape
    (measure/fleet_figures.py): its size (workers running + idle) over time, the worker-seconds that
    size integrates to (the platform's bill, to a sample's second), the scale-ups it showed
    (each rise in size), and the first. What /health cannot tell is None or empty: each
    worker's life, its cold start, the scaler's own looks."""
    seen = [(s.t_ns, (s.running or 0) + (s.idle or 0)) for s in samples if s.running is not None]
    if not seen:
        return None
    size: list[list[float]] = []
    for t, n in seen:
        if not size or size[-1][1] != n:
            size.append([round((t - start) / NS_PER_S, 6), n])
    worker_ns = sum((b[0] - a[0]) * a[1] for a, b in pairwise(seen))
    worker_s = worker_ns / NS_PER_S
    rises = [(b[0], b[1] - a[1]) for a, b in pairwise(seen) if b[1] > a[1]]
    return {
        "scaler": None,
        "peak_workers": max(n for _, n in seen),
        "cold_starts": sum(n for _, n in rises),
        "worker_s": round6(worker_s),
        "jobs_per_worker_s": round6(completed / worker_s) if worker_s > 0 else None,
        "first_scale_up_s": round6((rises[0][0] - start) / NS_PER_S) if rises else None,
        "scale_up_delay_s": None,
        "cold_start_s": None,
        "rest_s": round6((seen[-1][0] - start) / NS_PER_S),
        "hidden_max": None,
        "evaluations": [],
        "size": size,
        "workers": {},
        "source": "health",
    }


def live_rep_measure(
    record: BurstRecord, load_spec: str | None = None, warmup_s: float | None = None
) -> RepMeasure:
    """The rep's figures; `load_spec` names the arrival profile it ran (None: a burst), whose
    `warmup:D` is `warmup_s` (None: detected)."""
    accepted = [job for job in record.jobs if job.outcome == "accepted"]
    profile = load_spec is not None
    starts = [_origin_ns(job, profile) for job in accepted if job.sent_ns is not None]
    start = min(starts) if starts else 0
    # Times to X % count completed jobs, as on the fake queue (a failed job is not done work).
    done_ts = sorted(
        job.done_ns for job in accepted if job.status == COMPLETED and job.done_ns is not None
    )
    jobs = _job_counts(record, accepted)
    drained, _ = drain_figures(done_ts, start, len(accepted), jobs["completed"])
    samples = _samples(accepted, profile)
    figures: dict[str, Any] = {
        **drained,
        "jobs": jobs,
        "phases": samples.figures(),
        "takes": dict(NO_TAKES),
        "split": split_figures(job.worker for job in accepted if job.status in SERVED),
        "utilisation": None,
        "ideal_s": None,
        "efficiency": None,
        "submission": _submission(record, accepted),
        "follow": _follow(record, accepted),
        "health": _health(record.health, start),
    }
    if (fleet := health_fleet(record.health, start, jobs["completed"])) is not None:
        figures["fleet"] = fleet
    if load_spec is not None:
        figures["arrivals"] = arrivals_block(record, load_spec)
        if (steady := steady_block(record, accepted, warmup_s)) is not None:
            figures["steady"] = steady  # no ideal, no efficiency: the fleet is not ours
    if record.stopped is not None:
        figures["partial"] = record.stopped
    return RepMeasure(figures, samples)


def live_events(record: BurstRecord) -> list[dict[str, Any]]:
    """Client-side records in the event-log shape (submit, done; plus health) for plots."""
    events: list[dict[str, Any]] = []
    for job in record.jobs:
        if job.outcome != "accepted" or job.sent_ns is None:
            continue
        submit: dict[str, Any] = {"ev": "submit", "t": job.sent_ns, "job": job.id}
        if job.intended_ns is not None:  # latencies run from it (docs/events.md)
            submit["intended"] = job.intended_ns
        events.append(submit)
        if job.done_ns is not None:
            events.append(
                {
                    "ev": "done",
                    "t": job.done_ns,
                    "job": job.id,
                    "status": job.status,
                    "worker": job.worker,
                    "delay_ms": job.delay_ms,
                    "execution_ms": job.execution_ms,
                }
            )
    for s in record.health:
        events.append(
            {
                "ev": "health",
                "t": s.t_ns,
                "in_queue": s.in_queue,
                "in_progress": s.in_progress,
                "running": s.running,
                "idle": s.idle,
            }
        )
    events.sort(key=lambda e: e["t"])
    return events
