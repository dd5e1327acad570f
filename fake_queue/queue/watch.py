"""What the runner's watchdog sees of each worker (GET /_bench/workers): whether it is polling,
when it last worked (a take or a job-done, not a heartbeat), what it holds, which held jobs
look lost (its heartbeat stopped listing them, or they are older than the runner's bound), and
whether it asked for a refresh the runner has yet to carry out."""

from __future__ import annotations

from typing import Any

from fake_queue.queue.ledger import QueueLedger

# Missing from this many heartbeats in a row (each after the job's delivery): the worker no
# longer has it. Two, not one: a job done between the ids being read and the ping going out.
MISSED_PINGS_LOST = 2


def worker_view(
    queue: QueueLedger, overdue_s: float | None = None, ids: bool = False
) -> dict[str, dict[str, Any]]:
    """Per worker; `unlisted` and `overdue` are counts, or with `ids` the job ids (and
    `held_ids` every job it holds): the runner polls counts and asks for ids only to name them."""
    at = queue.clock.now_ns()
    horizon = None if overdue_s is None else at - int(overdue_s * 1e9)
    view: dict[str, dict[str, Any]] = {}
    for worker, record in queue.workers.items():
        unlisted, overdue = [], []
        for job_id in record.held:
            job = queue.jobs[job_id]
            if job.missed_pings >= MISSED_PINGS_LOST:
                unlisted.append(job_id)
            elif horizon is not None and (job.delivered_ns or at) <= horizon:
                overdue.append(job_id)
        view[worker] = {
            "polling": record.waiting_takes,
            "held": len(record.held),
            "last_seen_s": _seconds(at - record.last_seen_ns),
            "idle_s": _seconds(at - record.last_work_ns) if record.last_work_ns else None,
            "last_work_ns": record.last_work_ns,  # unchanged between looks: no work since
            "unlisted": sorted(unlisted) if ids else len(unlisted),
            "overdue": sorted(overdue) if ids else len(overdue),
        }
        if ids:
            view[worker]["held_ids"] = sorted(record.held)
        if record.refresh_job is not None:  # asked for a refresh, not yet replaced
            view[worker]["refresh"] = record.refresh_job
    return view


def _seconds(ns: int) -> float:
    return round(ns / 1e9, 3)
