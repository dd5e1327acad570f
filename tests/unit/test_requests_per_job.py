"""The workers' requests per completed job (measure/requests.py, docs/metrics.md "Requests per
job"): counted from hand-built event logs worked out on paper and from a simulated rep, carried
into the result and its summary, and judged by the gate's row check like the workers' CPU."""

from __future__ import annotations

from typing import Any

import pytest

from fake_queue.queue.faults import WORKER_ROUTES
from fake_queue.queue.latency import Distribution, LatencyModel
from jobbench.core.scenario.config import Scenario
from jobbench.core.sim.engine import simulate_rep
from jobbench.measure.events import COUNTED_ROUTES
from jobbench.measure.metrics import rep_measure, summarise_reps
from jobbench.results.model import Rep
from jobbench.results.rep_metrics import requests_per_job
from jobbench.verdict.decision import CHECKS_PER_ROW
from jobbench.verdict.row_checks import FIGURE_RULES, judge_figure
from jobbench.workers.spec import WorkerSpec

T0 = 3_000_000_000  # burst start (ns)
PARAMS: dict[str, Any] = {"workers": 1, "slots": 4, "burst": 4, "job_seconds": 0.5,
                          "wake_latency_s": 0.05}  # fmt: skip


def ev(name: str, at: float, **keys: Any) -> dict[str, Any]:
    return {"t": T0 + round(at * 1e9), "ev": name, **keys}


def take(take_id: int, got: int, at: float, kind: str) -> dict[str, Any]:
    return ev("take", at, take=take_id, worker="w1", asked=4, got=got, kind=kind,
              arrived=T0 + round((at - 0.5) * 1e9))  # fmt: skip


def served(job: str, take_id: int, at: float) -> list[dict[str, Any]]:
    return [ev(k, at, job=job, take=take_id, worker="w1") for k in ("claim", "deliver")]


def every_kind_of_request() -> list[dict[str, Any]]:
    """Before the burst: an empty take and a refused one (not this rep's). Then two takes with
    jobs, one whose client left and one empty; four job-done posts (j3 FAILED, j4 only after a
    refused post and a 429), a progress update and a late second answer; a delayed job-done
    (logged as the post it became), a refused ping and a queue-side cancel (not requests)."""
    return [
        take(1, 0, -1.0, "empty"),
        ev("fault", -0.9, route="job-take-batch", kind="500", worker="w1"),
        *(ev("submit", 0.0, job=f"j{i}") for i in range(1, 6)),
        *served("j1", 2, 0.05), *served("j2", 2, 0.05), *served("j3", 2, 0.05),
        take(2, 3, 0.05, "woken"),
        ev("progress", 0.3, job="j1", worker="w1"),
        ev("done", 0.55, job="j1", status="COMPLETED", worker="w1"),
        ev("fault", 0.55, route="job-done", kind="delay=0.1", worker="w1", job="j2"),
        ev("done", 0.65, job="j2", status="COMPLETED", worker="w1"),
        ev("done", 0.56, job="j3", status="FAILED", worker="w1"),
        ev("done", 0.6, job="j5", status="CANCELLED", worker=None, reason="cancel"),
        *served("j4", 3, 0.6),
        take(3, 1, 0.6, "queued"),
        ev("fault", 1.1, route="job-done", kind="500", worker="w1", job="j4"),
        ev("fault", 1.2, route="job-done", kind="rate-limit", worker="w1", job="j4"),
        ev("done", 1.3, job="j4", status="COMPLETED", worker="w1"),
        ev("ignored", 1.4, job="j4", worker="w1", status="COMPLETED"),
        ev("fault", 1.5, route="ping", kind="500", worker="w1"),
        take(4, 0, 1.6, "gone"),
        take(5, 0, 2.6, "empty"),
    ]  # fmt: skip


def test_each_request_a_worker_made_in_the_rep_is_counted_once() -> None:
    figures = rep_measure(every_kind_of_request(), **PARAMS).figures
    # takes 2-5; posts: the progress, four answers and the late one; refused: the two j4 met
    assert figures["requests"] == {"takes": 4, "posts": 6, "refused": 2, "per_job": 4.0}
    assert figures["jobs"]["completed"] == 3  # 12 requests for 3 completed jobs


def test_a_rep_whose_jobs_all_failed_has_no_requests_per_job() -> None:
    log = [
        ev("submit", 0.0, job="j1"),
        *served("j1", 1, 0.05),
        take(1, 1, 0.05, "woken"),
        ev("done", 0.5, job="j1", status="FAILED", worker="w1"),
    ]
    figures = rep_measure(log, **PARAMS).figures
    assert figures["requests"] == {"takes": 1, "posts": 1, "refused": 0, "per_job": None}


def test_the_routes_counted_are_worker_routes_whose_requests_the_log_records() -> None:
    assert set(COUNTED_ROUTES) < set(WORKER_ROUTES)
    assert not {"ping", "job-stop", "job-stream"} & set(COUNTED_ROUTES)


def test_a_simulated_drain_worker_takes_once_a_batch() -> None:
    """One drain worker of 8 slots, 32 jobs: a take a batch of 8 and a job-done a job; its
    next take is still waiting when the last job ends, so it is not in the rep's log."""
    latency = LatencyModel(take=Distribution("fixed", 0.05), wake=Distribution("fixed", 0.005),
                           hold=Distribution("fixed", 2.0))  # fmt: skip
    scenario = Scenario("1w-32j", workers=1, slots=8, burst=32, job_seconds=0.1,
                        worker=WorkerSpec("model", "drain"), latency=latency)  # fmt: skip
    figures = simulate_rep(scenario, seed=1).measure.figures
    assert figures["takes"]["count"] == 4
    assert figures["requests"] == {"takes": 4, "posts": 32, "refused": 0, "per_job": 1.125}


def test_the_summary_and_the_gates_reader_carry_the_figure() -> None:
    reps = [rep_measure(every_kind_of_request(), **PARAMS).figures for _ in range(3)]
    reps[1] = {**reps[1], "requests": {**reps[1]["requests"], "per_job": 5.0}}
    assert summarise_reps(reps)["requests_per_job"] == {"median": 4.0, "min": 4.0, "max": 5.0}
    rep = Rep.model_validate({**reps[0], "phases": reps[0]["phases"]})
    assert requests_per_job(rep) == 4.0
    assert requests_per_job(rep.model_copy(update={"requests": None})) is None


RULE = next(rule for rule in FIGURE_RULES if rule.metric == "requests_per_job")


def test_a_candidate_that_takes_a_job_at_a_time_is_a_regression() -> None:
    base = [1.031 + 0.002 * (i % 3) for i in range(10)]  # a take a 32-job batch
    cand = [2.0 + 0.003 * (i % 4) for i in range(10)]  # a take a job
    finding = judge_figure(base, cand, RULE, 1e-4)
    assert finding is not None and finding.verdict == "regression"
    assert finding.reason.startswith("workers' requests per job: 2 against 1.03 for the baseline")
    early = judge_figure(base[:5], cand[:5], RULE, 1e-4)  # five reps a side cannot show it yet
    assert early is not None and early.verdict == "inconclusive"


@pytest.mark.parametrize("factor", [1.0, 1.15])
def test_requests_within_the_tolerance_are_not_judged(factor: float) -> None:
    base = [1.031 + 0.002 * (i % 3) for i in range(10)]
    assert judge_figure(base, [v * factor for v in base], RULE, 1e-4) is None


def test_the_checks_level_is_shared_by_every_check_of_a_row() -> None:
    checks = 2 + len(FIGURE_RULES)  # correctness and behaviour, then each figure's
    assert checks == CHECKS_PER_ROW
