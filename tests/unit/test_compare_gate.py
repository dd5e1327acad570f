"""compare_docs and the gate's verdicts on hand-made result documents (docs/ci.md's rule)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from jobbench.core.scenario.project import SEED_ROWS
from jobbench.errors import EXIT_INCONCLUSIVE, EXIT_OK, EXIT_REGRESSION, ResultsError, UsageError
from jobbench.measure.metrics import ideal_time
from jobbench.render.words.cells import verdict_lines
from jobbench.results.compare import compare_docs
from jobbench.results.decision import (
    CHECKS_PER_ROW,
    CHECKS_SHARE,
    Rule,
    decide,
    look_levels,
    minimum_detectable,
    weigh,
)
from jobbench.results.gate import GateConfig, judge, parse_percent
from jobbench.results.model import Anomaly, Result, ScenarioResult, to_json
from jobbench.results.model_result import FleetFigures
from jobbench.results.store import SCHEMA, parse_result

PARAMS = {"workers": 1, "slots": 32, "burst": 512, "job_seconds": 0.5, "latency": {"take": 0.5}}
WAKE_S = 0.05  # the reference latencies' wake, in every ideal below


def rep(v: float, ideal_s: float = 8.05, jobs: int = 512) -> dict[str, Any]:
    """A whole rep whose gated figures follow `v`; the figures nothing here compares are
    plausible constants (time to 100 % is left out, null, as a rep that did not finish)."""
    return {
        "time_to_first_s": 0.5,
        "time_to_p50_s": v / 2,
        "time_to_p99_s": v,
        "time_to_p100_s": None,
        "throughput_jps": None,
        "jobs": {"submitted": jobs, "completed": jobs, "failed": 0, "cancelled": 0}
        | {"timed_out": 0, "unfinished": 0},
        "phases": {"queue_wait": None, "service": None}
        | {"e2e": {"p50": v / 2, "p90": v, "p99": v, "max": v, "mean": v / 2}},
        "takes": {"count": 16, "empty": 0, "asked_mean": 32, "got_mean": 32, "full_fraction": 1}
        | {"latency": None},
        "split": {"jobs_per_worker": {"w0": jobs}, "max_min_ratio": 1.0, "jain": 1.0},
        "utilisation": None,
        "ideal_s": ideal_s,
        "efficiency": ideal_s / v,
    }


# A seed row's own shape by its name, so a document holds what a run of that row would.
SEED_PARAMS = {name: {"workers": w, "burst": b, "job_seconds": j} for name, w, b, j, _ in SEED_ROWS}


def entry(name: str, values: list[float], **param_changes: Any) -> ScenarioResult:
    params = {**PARAMS, **SEED_PARAMS.get(name, {}), "worker": "model", "policy": "p"}
    params |= {"take_ahead": 0, **param_changes}
    ideal = ideal_time(params["burst"], params["workers"], params["slots"],
                       params["job_seconds"], WAKE_S)  # fmt: skip
    eff = ideal / sorted(values)[len(values) // 2]
    return ScenarioResult.model_validate(
        {
            "name": name,
            "params": params,
            "ideal_s": ideal,
            "worker": "model worker (p)",
            "sdk": None,
            "reps": [rep(v, ideal, params["burst"]) for v in values],
            "summary": {"efficiency": {"median": eff, "min": eff, "max": eff}},
        }
    )


def suite_doc(label: str, rows: dict[str, list[float]]) -> Result:
    return Result.model_validate(
        {
            "schema": SCHEMA,
            "label": label,
            "created": "2026-11-29T08:00:00+00:00",
            "jobbench": "0.1.0",
            "environment": {"python": "3.11.7", "platform": "Linux", "cpus": 4}
            | {"runpod": None, "git_sha": None, "cpu_plan": None},
            "target": {"kind": "fake", "endpoint": "embedded"},
            "complete": True,
            "interrupted": False,
            "error": None,
            "scenarios": [entry(name, values).model_dump() for name, values in rows.items()],
        }
    )


def doc(label: str, p99s: list[float], **param_changes: Any) -> Result:
    result = suite_doc(label, {})
    result.scenarios.append(entry("deep", p99s, **param_changes))
    return result


def steady(center: float, n: int, wobble: float = 0.001) -> list[float]:
    """n reps around `center`, +-`wobble` (a fraction), deterministic."""
    return [center * (1 + wobble * math.sin(1.7 * i)) for i in range(n)]


def test_change_is_hodges_lehmann_with_interval_and_one_sided_p_values() -> None:
    comparison = compare_docs(doc("main", steady(15.6, 6)), doc("pr", steady(8.05, 6)))
    metric = comparison.rows[0].metrics["time_to_p99_s"]
    assert metric.change == pytest.approx(8.05 / 15.6 - 1, abs=0.002)
    assert metric.ci is not None and metric.spread is not None
    low, high = metric.ci
    assert low <= metric.change <= high < 0
    assert metric.p_faster == pytest.approx(1 / 924)  # fully separated, 6 vs 6, exact
    assert metric.p_slower == pytest.approx(1.0)
    assert metric.spread.baseline is not None and metric.spread.baseline < 0.002
    assert comparison.rows[0].params.model_dump(exclude_unset=True) == PARAMS  # no variants
    assert judge(comparison, GateConfig()) == EXIT_OK
    assert comparison.rows[0].verdict == "better"


def test_significant_slowdown_beyond_threshold_is_a_regression() -> None:
    comparison = compare_docs(doc("a", steady(10.0, 6)), doc("b", steady(11.0, 6)))
    assert judge(comparison, GateConfig(max_regression=0.05)) == EXIT_REGRESSION
    assert comparison.verdict == "regression"
    assert "+10.0% > +5%" in comparison.rows[0].reason
    # the same slowdown passes a looser gate: the interval lies below +15 %
    assert judge(comparison, GateConfig(max_regression=0.15)) == EXIT_OK
    assert comparison.rows[0].verdict == "pass"


def test_a_stalled_baseline_rep_is_set_aside_and_the_slowdown_still_flagged() -> None:
    """A slowdown beside one baseline rep stalled to 81 s (docs/ci.md): still flagged."""
    base = [*steady(23.2, 4), 81.0, *steady(23.2, 5)]
    comparison = compare_docs(doc("a", base), doc("b", steady(38.2, 10)))
    assert judge(comparison, GateConfig()) == EXIT_REGRESSION
    row = comparison.rows[0]
    metric = row.metrics["time_to_p99_s"]
    assert [(e.side, e.rep) for e in metric.excluded] == [("A", 5)]
    assert metric.change == pytest.approx(38.2 / 23.2 - 1, abs=0.002)
    assert metric.ci is not None and metric.ci[0] > 0.6  # the outlier no longer stretches it
    assert "set aside: A rep 5 (outlier" in row.reason


def test_flagged_reps_never_count_and_a_side_of_only_flagged_reps_is_never_a_pass() -> None:
    base, cand = doc("a", steady(10.0, 6)), doc("b", steady(10.0, 6))
    cand.scenarios[0].reps[2].anomalies = [Anomaly(kind="saturated", what="the queue used 0.9")]
    comparison = compare_docs(base, cand)
    judge(comparison, GateConfig())
    assert "B rep 3 (flagged: saturated)" in comparison.rows[0].reason
    for r in cand.scenarios[0].reps:
        r.anomalies = [Anomaly(kind="saturated")]
    comparison = compare_docs(base, cand)
    assert judge(comparison, GateConfig()) == EXIT_INCONCLUSIVE
    assert "only 6 A and 0 B reps count" in comparison.rows[0].reason


def test_an_unsteady_side_is_not_judged() -> None:
    cand = [*steady(10.0, 7), 14.0, 15.0, 16.0]  # 3 of 10 reps far out: not noise to set aside
    comparison = compare_docs(doc("a", steady(10.0, 10)), doc("b", cand))
    assert judge(comparison, GateConfig()) == EXIT_INCONCLUSIVE
    assert "B is unsteady: 3 of its 10 reps are outliers" in comparison.rows[0].reason


def test_noise_above_the_threshold_is_said_and_the_row_stays_open() -> None:
    noisy = [0.56, 0.60, 0.64, 0.58, 0.66]
    comparison = compare_docs(doc("a", noisy), doc("b", [v * 1.02 for v in reversed(noisy)]))
    assert judge(comparison, GateConfig()) == EXIT_INCONCLUSIVE
    reason = comparison.rows[0].reason
    assert "above the 5% threshold" in reason and "could detect a slowdown of" in reason


def test_each_row_spends_its_share_of_the_false_alarm_rate_over_its_looks() -> None:
    rule = Rule()
    speed = 0.01 * (1 - CHECKS_SHARE)  # the checks of correctness and behaviour keep the rest
    assert look_levels(rule, 1, rows=4, costed=0).alpha == pytest.approx(speed / 4 / 2)
    assert look_levels(rule, 3, rows=4, costed=0).alpha == pytest.approx(speed / 4 / 12)
    # however many pairs --reps auto adds, a row's looks never spend more than its share
    assert sum(look_levels(rule, k, rows=4, costed=0).alpha for k in range(1, 10_000)) < speed / 4
    # each row's four checks share the rest: every test of the call together stays within 1 %
    checks = sum(look_levels(rule, k, rows=4, costed=0).checks for k in range(1, 10_000))
    assert checks * 4 * CHECKS_PER_ROW < 0.01 * CHECKS_SHARE
    # a row judged on its cost too is one more test of the speed share; the pass test's bound
    # at twice the threshold spends the miss rate as the regression test spends its share
    levels = look_levels(rule, 3, rows=4, costed=2)
    assert levels.alpha == pytest.approx(speed / 6 / 12) and levels.miss == pytest.approx(0.05 / 12)
    assert sum(look_levels(rule, k, rows=1, costed=0).miss for k in range(1, 10_000)) < 0.05
    # five reps a side cannot reach 0.01 / 4 / 2 (1 / 252 is the smallest p): four rows stay open
    rows = {f"r{i}": steady(10.0, 5) for i in range(4)}
    slow = {f"r{i}": steady(12.0, 5) for i in range(4)}
    comparison = compare_docs(suite_doc("a", rows), suite_doc("b", slow))
    assert judge(comparison, GateConfig()) == EXIT_INCONCLUSIVE
    assert "too few for any test" in comparison.rows[0].reason
    # one row alone may spend the whole speed share, half of it at its first look: 5 reps a
    # side (1 / 252 = 0.00397) just reach it
    one = compare_docs(doc("a", steady(10.0, 5)), doc("b", steady(12.0, 5)))
    assert judge(one, GateConfig()) == EXIT_REGRESSION
    assert one.rows[0].alpha == pytest.approx(speed / 2)
    # at a later look of --reps auto the same reps are held to less
    one.rows[0].looks = 2
    assert judge(one, GateConfig()) == EXIT_INCONCLUSIVE


def test_a_pass_rules_out_twice_the_threshold_at_the_looks_share_of_the_miss_rate() -> None:
    """Within the threshold at 5 % is not enough after many looks: a slowdown of twice the
    threshold must be ruled out at the look's share of the miss rate, which 5 reps a side
    (smallest p 1 / 252) can do at the first look (5 % / 2) and not at the 20th (5 % / 420)."""
    rule = Rule()
    evidence = weigh(steady(10.0, 5, 0.01), steady(10.0, 5, 0.01), rule)
    first = decide(evidence, rule, look_levels(rule, 1, rows=1, costed=0))
    assert first.verdict == "pass" and "+10% ruled out (p = 0.004 < 0.025)" in first.reason
    late = decide(evidence, rule, look_levels(rule, 20, rows=1, costed=0))
    assert late.verdict == "unsettled" and "but +10% not yet ruled out" in late.reason
    assert late.p_within == first.p_within and first.p_within is not None
    assert first.p_within < rule.miss  # the threshold's own test holds at both looks


def test_rows_that_disagree_are_a_trade_that_still_fails_the_gate() -> None:
    """Faster in the bursts, slower in the trickle (the late-start scheduling bug): the
    reason names both sides; any row slower is still a regression."""
    rows = {"burst-a": steady(10.0, 8), "burst-b": steady(10.0, 8), "trickle": steady(2.0, 8)}
    mixed = {"burst-a": steady(9.0, 8), "burst-b": steady(8.0, 8), "trickle": steady(4.0, 8)}
    comparison = compare_docs(suite_doc("a", rows), suite_doc("b", mixed))
    assert judge(comparison, GateConfig()) == EXIT_REGRESSION
    assert [row.verdict for row in comparison.rows] == ["better", "better", "regression"]
    assert comparison.verdict == "regression"
    assert comparison.reason == "a trade: faster in burst-a, burst-b; slower in trickle"
    # all faster is no trade: the candidate is better
    comparison = compare_docs(
        suite_doc("a", rows), suite_doc("b", {**mixed, "trickle": rows["trickle"]})
    )
    assert judge(comparison, GateConfig()) == EXIT_OK
    assert "trade" not in comparison.reason


def test_the_detectable_change_shrinks_with_reps_and_needs_enough_of_them() -> None:
    rule = Rule()
    assert minimum_detectable(steady(1.0, 5, 0.04), steady(1.0, 5, 0.04), rule, 0.0025) is None
    few = minimum_detectable(steady(1.0, 8, 0.04), steady(1.0, 8, 0.04), rule, 0.0025)
    many = minimum_detectable(steady(1.0, 30, 0.04), steady(1.0, 30, 0.04), rule, 0.0025)
    assert few is not None and many is not None and few > many > rule.threshold
    # Past about 500 reps a side the exact test's count of orderings is too large for a float
    # (a simulated compare runs thousands of reps): still a figure, and smaller still.
    lots = minimum_detectable(steady(1.0, 1000, 0.04), steady(1.0, 1000, 0.04), rule, 0.0025)
    assert lots is not None and lots < many
    evidence = weigh(steady(1.0, 1000, 0.04), steady(1.02, 1000, 0.04), rule)
    assert evidence.ci is not None and evidence.ci[0] < 0.02 < evidence.ci[1]


def test_an_incomplete_side_is_inconclusive_with_its_reason() -> None:
    cand = doc("b", steady(10.0, 6))
    cand.complete, cand.error = False, "interrupted (Ctrl-C) before every rep ran"
    comparison = compare_docs(doc("a", steady(10.0, 6)), cand)
    assert judge(comparison, GateConfig()) == EXIT_INCONCLUSIVE
    assert comparison.rows[0].verdict == "pass"  # the row itself is fine...
    assert "B (b) is incomplete: interrupted (Ctrl-C)" in comparison.reason  # ...the call is not


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (float("nan"), "scenario 'deep' rep 4 field time_to_p99_s is nan"),
        (None, "scenario 'deep' rep 4 field time_to_p99_s is None, not a number"),
        (float("inf"), "scenario 'deep' rep 4 field time_to_p99_s is inf"),
        # not a number at all: the reader refuses the file, naming the field by its path
        ("fast", "scenarios.0.reps.3.time_to_p99_s: Input should be a valid number"),
        (True, "scenarios.0.reps.3.time_to_p99_s: Input should be a valid number"),
    ],
)
def test_a_corrupt_gated_figure_names_the_file_and_the_field(value: Any, said: str) -> None:
    data = to_json(doc("b", steady(10.0, 6)))
    data["scenarios"][0]["reps"][3]["time_to_p99_s"] = value
    with pytest.raises(ResultsError) as raised:
        cand = parse_result(data, "b.json")
        compare_docs(doc("a", steady(10.0, 6)), cand, paths=("a.json", "b.json"))
    assert str(raised.value).startswith(f"b.json: {said}")
    assert "\n" not in str(raised.value)


def test_a_missing_figure_that_is_not_gated_is_left_out_not_fatal() -> None:
    data = to_json(doc("a", steady(10.0, 6)))
    for r in data["scenarios"][0]["reps"]:
        del r["phases"]["e2e"]["mean"]  # a file from before the mean was recorded
    old = parse_result(data, "a.json")
    comparison = compare_docs(old, doc("b", steady(10.0, 6)))
    assert comparison.rows[0].metrics["e2e_mean_s"].baseline is None
    assert judge(comparison, GateConfig()) == EXIT_OK
    with pytest.raises(ResultsError, match="field e2e_mean_s is None"):
        compare_docs(old, doc("b", steady(10.0, 6)), metric_for=lambda _: "e2e_mean_s")


def test_the_pooled_metric_weighs_each_rep_by_its_jobs() -> None:
    base = doc("a", steady(10.0, 6))
    base.scenarios[0].reps[0].jobs.completed = 5120
    comparison = compare_docs(base, doc("b", steady(10.0, 6)), metric_for=lambda _: "e2e_mean_s")
    figure = comparison.rows[0].metrics["e2e_mean_s"].baseline
    means = [v / 2 for v in steady(10.0, 6)]
    expected = (means[0] * 5120 + sum(means[1:]) * 512) / (5120 + 5 * 512)
    assert figure is not None and figure.pooled == pytest.approx(expected)
    assert comparison.rows[0].metric == "e2e_mean_s"


def test_scenarios_with_different_parameters_name_the_first_difference() -> None:
    with pytest.raises(UsageError, match="burst: 512 vs 256"):
        compare_docs(doc("a", [1.0]), doc("b", [1.0], burst=256))
    other = doc("b", [1.0])
    other.scenarios[0].name = "shallow"
    with pytest.raises(UsageError, match="'deep' is in a but not in b"):
        compare_docs(doc("a", [1.0]), other)


def test_latency_differs_only_where_a_variant_sets_it() -> None:
    slow = {**PARAMS["latency"], "take": 0.9}
    with pytest.raises(UsageError, match=r"latency\.take: 0\.5 vs 0\.9"):
        compare_docs(doc("a", [1.0]), doc("b", [1.0], latency=slow))
    comparison = compare_docs(doc("a", [1.0]), doc("b", [1.0], latency=slow), free_latency={"take"})
    assert comparison.rows[0].params.latency == {}  # no shared value to show
    with pytest.raises(UsageError, match=r"latency\.wake: None vs 0\.1"):
        compare_docs(
            doc("a", [1.0]), doc("b", [1.0], latency={**slow, "wake": 0.1}), free_latency={"take"}
        )


def test_a_fractional_limit_is_printed_as_given() -> None:
    comparison = compare_docs(doc("a", steady(10.0, 6)), doc("b", steady(10.2, 6)))
    judge(comparison, GateConfig(max_regression=0.025))
    assert "threshold +2.5%" in verdict_lines(comparison)[-1]
    assert "misses <= 5% at +5.0%" in verdict_lines(comparison)[-1]


@pytest.mark.parametrize(
    ("text", "value"), [("5%", 0.05), ("5", 0.05), ("0.05", 0.05), ("12.5%", 0.125)]
)
def test_parse_percent(text: str, value: float) -> None:
    assert parse_percent(text) == pytest.approx(value)


def test_bad_gate_settings_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="--max-regression"):
        parse_percent("lots")
    with pytest.raises(UsageError, match="--metric"):
        GateConfig(metric="speed").validate()
    with pytest.raises(UsageError, match="--max-regression"):
        GateConfig(max_regression=0).validate()


def fleet_doc(label: str, p99s: list[float], worker_s: list[float]) -> Result:
    """An autoscaled scenario: its reps carry a fleet block billing `worker_s`."""
    result = doc(label, p99s, fleet={"scaler": "queue-delay", "scaler_value": 4.0})
    for rep_doc, cost in zip(result.scenarios[0].reps, worker_s, strict=True):
        rep_doc.fleet = FleetFigures.model_validate(
            {
                "scaler": "queue-delay", "peak_workers": 4, "cold_starts": 3,
                "worker_s": cost, "jobs_per_worker_s": 512 / cost, "first_scale_up_s": 4.0,
                "scale_up_delay_s": 4.7, "cold_start_s": None, "rest_s": 20.0,
                "hidden_max": 0, "evaluations": [], "size": [[0.0, 1]], "workers": {},
            }
        )  # fmt: skip
    return result


def test_an_autoscaled_row_compares_its_cost_and_a_cost_gate_fails_on_a_dearer_candidate() -> None:
    same = [10.0, 10.1, 9.9, 10.05, 9.95, 10.02]
    cheap = [50.0, 50.5, 49.5, 50.2, 49.8, 50.1]
    dear = [v * 1.4 for v in cheap]  # 40 % more worker-seconds, the same latency
    comparison = compare_docs(fleet_doc("a", same, cheap), fleet_doc("b", same, dear))
    (row,) = comparison.rows
    assert row.metrics["fleet_worker_s"].change == pytest.approx(0.4, abs=0.01)
    assert judge(comparison, GateConfig()) == EXIT_OK  # latency alone: a pass
    assert row.cost_verdict is None
    comparison = compare_docs(fleet_doc("a", same, cheap), fleet_doc("b", same, dear))
    code = judge(comparison, GateConfig(max_cost_regression=0.10))
    (row,) = comparison.rows
    assert code == EXIT_REGRESSION and row.verdict == "regression"
    assert row.cost_verdict == "regression" and "cost (worker-seconds" in row.reason
    assert comparison.gate is not None and comparison.gate.max_cost_regression == 0.10


def test_a_fixed_fleet_row_has_no_cost_to_gate() -> None:
    comparison = compare_docs(doc("a", [10.0] * 5), doc("b", [10.0] * 5))
    assert "fleet_worker_s" not in comparison.rows[0].metrics
    judge(comparison, GateConfig(max_cost_regression=0.10))
    assert comparison.rows[0].cost_verdict is None
    assert comparison.gate is not None and comparison.gate.max_cost_regression is None


def test_a_bad_cost_threshold_is_a_usage_error_naming_its_flag() -> None:
    with pytest.raises(UsageError, match="--max-cost-regression"):
        parse_percent("lots", "--max-cost-regression")
    with pytest.raises(UsageError, match="--max-cost-regression"):
        GateConfig(max_cost_regression=20.0).validate()


@pytest.mark.parametrize(
    ("candidate", "verdict"),
    [(8.05, "better"), (15.55, "pass"), (16.2, "pass"), (16.4, "regression")],
)
def test_sides_without_noise_are_decided_by_the_threshold_alone(
    candidate: float, verdict: str
) -> None:
    # --target sim repeats its figure to the bit: 3 reps a side are as sure as 300
    rule = Rule()
    evidence = weigh([15.55] * 3, [candidate] * 3, rule)
    decision = decide(evidence, rule, look_levels(rule, 1, rows=4, costed=0))
    assert decision.verdict == verdict
    assert "exactly: every rep of each side the same" in decision.reason
