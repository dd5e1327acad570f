"""The figures of a rep a comparison can compare, by name (`METRICS`): how each is read from a
saved rep, what it is called, and how the judgement treats it (verdict/comparison.py). They are
names of the documents' own fields, so they live with the documents: a suite's `metric =`
(core/scenario/project.py) and every table are checked against this one list."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from jobbench.measure.disk_writes import write_kib_per_job
from jobbench.results.model import Rep


def _e2e_p50(rep: Rep) -> float | None:
    return rep.phases.e2e.p50 if rep.phases.e2e else None


def _e2e_p99(rep: Rep) -> float | None:
    return rep.phases.e2e.p99 if rep.phases.e2e else None


def _e2e_mean(rep: Rep) -> float | None:
    return rep.phases.e2e.mean if rep.phases.e2e else None


@dataclass(frozen=True)
class Metric:
    read: Callable[[Rep], float | None]  # one rep's figure
    label: str  # what it is, for headers and legends
    pooled: bool = False  # the side's figure is over every job of every rep, not a median
    # Compared only where a rep of the baseline has it (the workers' CPU and disk writes: not
    # live or simulated; the split: two workers or more; the requests: not live), so rows that
    # cannot have it do not list it.
    where_measured: bool = False
    # Reps far from the others are set aside as outliers (a disturbed measurement); a figure of
    # the workers' own (their CPU, the split) is judged whole: a far rep is their doing too.
    outliers: bool = True


def _steady_e2e_p99(rep: Rep) -> float | None:
    return None if rep.steady is None else rep.steady.e2e_p99_s


def _worker_seconds(rep: Rep) -> float | None:
    return None if rep.fleet is None else rep.fleet.worker_s


def worker_cpu_ms_per_job(rep: Rep) -> float | None:
    """The workers' CPU (every worker's process group) per completed job, in ms: what the
    candidate's own processes spend, spin and idle loops included. None where the harness
    was not measured (live, simulated, files written before commit 6d5c4a0) or no job
    completed."""
    harness = rep.harness
    if harness is None or not rep.jobs.completed:
        return None
    cores = [c for c in harness.worker_cores.values() if c is not None]
    if not cores:
        return None
    return sum(cores) * harness.wall_s / rep.jobs.completed * 1000


def worker_write_kib_per_job(rep: Rep) -> float | None:
    """The workers' bytes written to storage (every worker's process group, from /proc/<pid>/io)
    per completed job, in KiB: their log lines, and any state they write on every job. None
    where it was not read (live, simulated, a Ray cluster's node that cannot read it, not
    Linux, files before it) or no job completed."""
    return write_kib_per_job(rep.worker_write_bytes, rep.jobs.completed)


def requests_per_job(rep: Rep) -> float | None:
    """The workers' requests the queue logged per completed job (measure/requests.py): what
    the candidate's own loops ask of the platform. None where the queue's log was not read
    (live, files before it) or no job completed."""
    return None if rep.requests is None else rep.requests.per_job


def split_imbalance(rep: Rep) -> float | None:
    """The busiest worker's jobs over the mean (1 is an even split; with n workers, n is every
    job on one). None with fewer than two workers or no job served."""
    counts = list(rep.split.jobs_per_worker.values())
    if len(counts) < 2 or not sum(counts):
        return None
    return max(counts) / (sum(counts) / len(counts))


METRICS: dict[str, Metric] = {
    "time_to_p99_s": Metric(lambda rep: rep.time_to_p99_s, "time to 99 % done"),
    "time_to_p100_s": Metric(lambda rep: rep.time_to_p100_s, "time to 100 % done"),
    "e2e_p50_s": Metric(_e2e_p50, "job end-to-end p50"),
    "e2e_p99_s": Metric(_e2e_p99, "job end-to-end p99"),
    "e2e_mean_s": Metric(_e2e_mean, "mean job end-to-end, pooled", pooled=True),
    "steady_e2e_p99_s": Metric(_steady_e2e_p99, "steady-state end-to-end p99"),
    "fleet_worker_s": Metric(_worker_seconds, "worker-seconds billed (an autoscaled fleet)"),
    "worker_cpu_ms_per_job": Metric(
        worker_cpu_ms_per_job,
        "workers' CPU per completed job, ms",
        where_measured=True,
        outliers=False,
    ),
    "worker_write_kib_per_job": Metric(
        worker_write_kib_per_job,
        "workers' disk writes per completed job, KiB",
        where_measured=True,
        outliers=False,
    ),
    "split_imbalance": Metric(
        split_imbalance,
        "busiest worker's jobs / the mean (1 = even)",
        where_measured=True,
        outliers=False,
    ),
    "requests_per_job": Metric(
        requests_per_job,
        "workers' requests per completed job",
        where_measured=True,
        outliers=False,
    ),
}
# An autoscaled fleet's cost: compared on its rows, gated with --max-cost-regression.
COST_METRIC = "fleet_worker_s"
# An arrival profile's rows are judged on their steady-state latency: a drain's time to 99 %
# says little of a steady rate's jobs, which end as they arrive (docs/load-profiles.md).
PROFILE_METRIC = "steady_e2e_p99_s"
