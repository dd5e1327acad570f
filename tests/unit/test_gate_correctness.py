"""Correctness and behaviour before speed (verdict/correctness.py, behaviour.py, row_checks.py):
a candidate that ends jobs badly, or whose own workers stall or spin, is never a pass."""

from __future__ import annotations

from typing import Any

from jobbench.errors import EXIT_INCONCLUSIVE, EXIT_OK, EXIT_REGRESSION
from jobbench.results.model import Anomaly, Result
from jobbench.results.model_result import HarnessCpu
from jobbench.verdict.comparison import compare_docs
from jobbench.verdict.gate import GateConfig, judge
from tests.unit.test_compare_gate import doc, steady


def with_jobs(result: Result, **counts: int) -> Result:
    """Every rep of the result's one scenario ends `counts` of its 512 jobs badly."""
    for rep in result.scenarios[0].reps:
        for way, n in counts.items():
            setattr(rep.jobs, way, n)
        rep.jobs.completed = 512 - sum(counts.values())
    return result


def test_a_faster_candidate_that_fails_jobs_is_a_regression_naming_the_failures() -> None:
    base = doc("a", steady(10.0, 5))
    cand = with_jobs(doc("b", steady(9.0, 5)), failed=6)  # 10 % faster, 6 of 512 fail a rep
    comparison = compare_docs(base, cand)
    assert judge(comparison, GateConfig()) == EXIT_REGRESSION
    row = comparison.rows[0]
    assert row.verdict == comparison.verdict == "regression"
    assert row.reason.startswith("correctness: 30 of 2560 jobs failed, baseline 0")
    assert row.broke is not None and row.broke.startswith("correctness")
    assert "broke in" in comparison.reason and "slower in" not in comparison.reason
    assert row.outcomes is not None and row.outcomes.candidate.bad == {"failed": 30}


def test_one_lost_job_is_enough_where_the_baseline_lost_none() -> None:
    cand = doc("b", steady(10.0, 5))
    cand.scenarios[0].reps[3].jobs.lost = 1
    cand.scenarios[0].reps[3].jobs.unfinished = 1
    cand.scenarios[0].reps[3].jobs.completed = 511
    comparison = compare_docs(doc("a", steady(10.0, 5)), cand)
    assert judge(comparison, GateConfig()) == EXIT_REGRESSION
    assert "correctness: 1 of 2560 jobs were lost, baseline 0" in comparison.rows[0].reason


def test_with_faults_on_both_sides_only_significantly_more_bad_jobs_is_a_regression() -> None:
    def faulted(label: str, failed: int) -> Result:
        result = with_jobs(doc(label, steady(10.0, 5)), failed=failed)
        result.scenarios[0].params.faults = ["job-done:500:0.05"]
        return result

    alike = compare_docs(faulted("a", 25), faulted("b", 27))
    assert judge(alike, GateConfig()) == EXIT_OK
    assert "(not more than the baseline's, p = " in alike.rows[0].reason
    worse = compare_docs(faulted("a", 25), faulted("b", 60))
    assert judge(worse, GateConfig()) == EXIT_REGRESSION
    assert "more, at p = " in worse.rows[0].reason


def test_a_candidates_stall_in_every_rep_is_a_regression_and_in_one_rep_inconclusive() -> None:
    stall = Anomaly(kind="stall", worker="w0", at_s=1.0, for_s=4.0, held=3, resumed=True)
    cand = doc("b", steady(10.0, 8))
    for rep in cand.scenarios[0].reps:
        rep.anomalies = [stall]
    comparison = compare_docs(doc("a", steady(10.0, 8)), cand)
    assert judge(comparison, GateConfig()) == EXIT_REGRESSION
    assert (
        "behaviour: a worker stalled in 8 of 8 reps, baseline 0 of 8" in comparison.rows[0].reason
    )
    # The stalled reps count: nothing was set aside as a disturbed measurement.
    assert not comparison.rows[0].metrics["time_to_p99_s"].excluded
    once = doc("b", steady(10.0, 8))
    once.scenarios[0].reps[0].anomalies = [stall]
    comparison = compare_docs(doc("a", steady(10.0, 8)), once)
    assert judge(comparison, GateConfig()) == EXIT_INCONCLUSIVE
    assert "new, too few reps to be sure" in comparison.rows[0].reason


def test_a_candidate_whose_worker_hung_or_died_is_a_regression_at_once() -> None:
    """One rep its own worker cut short ended the candidate's run: a fact, no test; the same in
    the baseline is judged like any behaviour the two sides share."""
    for partial, words in (("stalled", "a worker hung"), ("worker died", "a worker died")):
        cand = doc("b", steady(10.0, 3))
        cand.scenarios[0].reps[-1].partial = partial
        comparison = compare_docs(doc("a", steady(10.0, 3)), cand)
        assert judge(comparison, GateConfig()) == EXIT_REGRESSION
        assert f"behaviour: {words}" in comparison.rows[0].reason
        assert (
            "in 1 of 3 reps, baseline 0 of 3 (a fact: no test needed)" in comparison.rows[0].reason
        )
    both = [doc(k, steady(10.0, 3)) for k in "ab"]
    for result in both:
        result.scenarios[0].reps[-1].partial = "stalled"
    comparison = compare_docs(*both)
    assert judge(comparison, GateConfig()) != EXIT_REGRESSION
    assert "not significantly more often than the baseline" in comparison.rows[0].reason


def test_a_behaviour_the_baseline_shows_too_is_open_only_while_its_excess_is_suspect() -> None:
    """Stalls in 2 of 8 reps against 1 of 8: the baseline's own rate drawn twice, passed; in 7
    of 8 against 1 of 8: significant at 5 % but not at the row's level, inconclusive."""
    stall = Anomaly(kind="stall", worker="w0", at_s=1.0, for_s=4.0, held=3, resumed=True)

    def stalled(label: str, reps: int) -> Result:
        result = doc(label, steady(10.0, 8))
        for rep in result.scenarios[0].reps[:reps]:
            rep.anomalies = [stall]
        return result

    few = compare_docs(stalled("a", 1), stalled("b", 2))
    assert judge(few, GateConfig()) == EXIT_OK
    assert (
        "stalled in 2 of 8 reps, baseline 1 of 8: not significantly more often"
        in few.rows[0].reason
    )
    many = compare_docs(stalled("a", 1), stalled("b", 7))
    assert judge(many, GateConfig()) == EXIT_INCONCLUSIVE
    assert (
        "stalled in 7 of 8 reps, baseline 1 of 8: more often, not yet sure" in many.rows[0].reason
    )


def harness(worker_cores: float, wall_s: float = 10.0) -> dict[str, Any]:
    return {"wall_s": wall_s, "queue_cores": 0.05, "driver_cores": 0.02,
            "worker_cores": {"w0": worker_cores, "w1": worker_cores}, "others_cores": 0.0,
            "machine_busy_cores": 0.1, "cpus": 2}  # fmt: skip


def with_cpu(result: Result, cores: list[float]) -> Result:
    for rep, c in zip(result.scenarios[0].reps, cores, strict=True):
        rep.harness = HarnessCpu.model_validate(harness(c))
    return result


def test_a_candidate_whose_workers_spin_is_a_regression_on_cpu_per_job() -> None:
    quiet = [0.005, 0.0051, 0.0049, 0.005, 0.0052, 0.0048, 0.005, 0.005]
    spin = [0.495, 0.5, 0.49, 0.497, 0.493, 0.499, 0.5, 0.494]  # 100x, below the 0.8 flag
    base = with_cpu(doc("a", steady(10.0, 8)), quiet)
    cand = with_cpu(doc("b", steady(10.3, 8)), spin)  # +3 % on time: within the threshold
    comparison = compare_docs(base, cand)
    metric = comparison.rows[0].metrics["worker_cpu_ms_per_job"]
    assert metric.baseline is not None and metric.candidate is not None
    # 2 workers x 0.4955 cores x 10 s / 512 jobs = 19.4 ms a job, against 0.195
    assert 19 < metric.candidate.median < 19.6 and 0.18 < metric.baseline.median < 0.21
    assert judge(comparison, GateConfig()) == EXIT_REGRESSION
    assert "workers' CPU per job: 19.4 against 0.195" in comparison.rows[0].reason


def test_the_same_cpu_and_an_even_split_say_nothing_and_pass() -> None:
    cores = [0.005, 0.0051, 0.0049, 0.005, 0.0052]
    comparison = compare_docs(
        with_cpu(doc("a", steady(10.0, 5)), cores), with_cpu(doc("b", steady(10.0, 5)), cores)
    )
    assert judge(comparison, GateConfig()) == EXIT_OK
    assert "behaviour" not in comparison.rows[0].reason
    assert "CPU" not in comparison.rows[0].reason


def test_every_job_on_one_worker_is_a_regression_on_the_split() -> None:
    def spread(result: Result, per_worker: list[int]) -> Result:
        for rep in result.scenarios[0].reps:
            rep.split.jobs_per_worker = {f"w{i}": n for i, n in enumerate(per_worker)}
        return result

    even = [128, 128, 128, 128]
    # A little rep-to-rep wobble, as real runs have, keeps the rank test meaningful.
    base = spread(doc("a", steady(10.0, 8)), even)
    for i, rep in enumerate(base.scenarios[0].reps):
        rep.split.jobs_per_worker = {"w0": 128 + i % 3, "w1": 128 - i % 3, "w2": 128, "w3": 128}
    cand = spread(doc("b", steady(10.0, 8)), [512, 0, 0, 0])
    for i, rep in enumerate(cand.scenarios[0].reps):
        rep.split.jobs_per_worker = {"w0": 512 - i % 2, "w1": i % 2, "w2": 0, "w3": 0}
    comparison = compare_docs(base, cand)
    assert judge(comparison, GateConfig()) == EXIT_REGRESSION
    assert "uneven split" in comparison.rows[0].reason
