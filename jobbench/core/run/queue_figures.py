"""What a scenario run on a queue of ours makes of its result, the same for both targets that
have one (the fake target's worker processes, core/real_workers/fake_target.py, and the simulator's
virtual time, core/sim/engine.py): the scenario's entry before any rep, and each rep's figures from
the queue's event log, the scenario's parameters passed to measure/metrics.py in one place. A live
endpoint has neither (core/live/live_target.py: no queue log, client-side figures)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from jobbench.core.scenario.config import Scenario
from jobbench.measure import metrics
from jobbench.measure.figures import RepMeasure
from jobbench.results.model import ScenarioResult


def scenario_entry(s: Scenario, sdk: dict[str, Any] | None) -> ScenarioResult:
    """A queue-backed scenario's result entry before any rep: no ideal for an arrival profile
    (its ideal is each rep's steady one) or for jobs of the user's inputs (their length is
    not known)."""
    job_s = s.job_length_s
    ideal = (
        metrics.ideal_time(s.burst, s.workers, s.slots, job_s, s.latency.wake.mean)
        if s.is_burst and job_s is not None
        else None
    )
    return ScenarioResult.model_validate(
        {
            "name": s.name,
            "params": s.params(),
            "ideal_s": ideal,
            "worker": s.worker.describe(),
            "sdk": sdk,
            "gate_metric": s.metric,
            "reps": [],
            "summary": {},
        }
    )


def measure_rep(
    s: Scenario,
    events: Iterable[dict[str, Any]],
    worker_ids: Sequence[str],
    brief: bool = False,
) -> RepMeasure:
    """One rep of `s` measured from the queue's events; `worker_ids`: every worker that ran in
    it (an autoscaled fleet's too). `brief`: only the figures a sweep keeps, except for an
    autoscaled fleet's rep, whose figures need the held jobs (metrics.rep_measure)."""
    return metrics.rep_measure(
        events,
        workers=s.workers,
        slots=s.slots,
        burst=s.load.jobs,
        job_seconds=s.job_length_s,
        wake_latency_s=s.latency.wake.mean,
        worker_ids=worker_ids,
        atomic_burst=s.is_burst,
        warmup_s=s.load.warmup_s,
        brief=brief and s.fleet is None,
    )
