"""compare_docs and the gate's verdicts on hand-made result documents."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from jobbench.compare import compare_docs
from jobbench.errors import EXIT_INCONCLUSIVE, EXIT_OK, EXIT_REGRESSION, UsageError
from jobbench.gate import GateConfig, judge, parse_percent, reps_to_settle
from jobbench.render.cells import row_cells, verdict_lines

PARAMS = {"workers": 1, "slots": 32, "burst": 512, "job_seconds": 0.5, "latency": {"take": 0.5}}


def doc(label: str, p99s: list[float], **param_changes: Any) -> dict[str, Any]:
    params = {**PARAMS, "worker": "model", "policy": label, "take_ahead": 0, **param_changes}
    reps = [{"time_to_p99_s": v, "phases": {"e2e": {"p50": v / 2, "p99": v}}} for v in p99s]
    return {
        "schema": "jobbench.result/1",
        "label": label,
        "scenarios": [
            {
                "name": "deep",
                "params": params,
                "ideal_s": 8.05,
                "reps": reps,
                "summary": {"efficiency": {"median": 8.05 / sorted(p99s)[len(p99s) // 2]}},
            }
        ],
    }


def test_change_is_ratio_of_medians_with_interval_and_p_value() -> None:
    comparison = compare_docs(
        doc("main", [15.5, 15.6, 15.7, 15.65, 15.55]), doc("pr", [8.0, 8.1, 8.05, 8.12, 8.02])
    )
    metric = comparison["rows"][0]["metrics"]["time_to_p99_s"]
    assert metric["baseline"]["median"] == 15.6 and metric["candidate"]["median"] == 8.05
    assert metric["change"] == pytest.approx(8.05 / 15.6 - 1)
    low, high = metric["ci"]
    assert low <= metric["change"] <= high < 0
    assert metric["p_value"] == pytest.approx(2 / 252)  # fully separated, 5 vs 5
    assert comparison["rows"][0]["params"] == PARAMS  # variant params dropped
    assert judge(comparison, GateConfig()) == EXIT_OK
    assert comparison["rows"][0]["verdict"] == "better"


def test_significant_slowdown_beyond_threshold_is_a_regression() -> None:
    comparison = compare_docs(
        doc("a", [10.0, 10.1, 10.0, 10.05, 10.1]), doc("b", [11.0, 11.1, 11.05, 11.0, 11.1])
    )
    assert judge(comparison, GateConfig(max_regression=0.05)) == EXIT_REGRESSION
    assert comparison["verdict"] == "regression"
    # the same slowdown passes a looser gate
    assert judge(comparison, GateConfig(max_regression=0.15)) == EXIT_OK


def test_slowdown_that_is_not_significant_is_inconclusive_and_says_how_many_reps() -> None:
    comparison = compare_docs(
        doc("a", [10.0, 13.0, 10.5, 12.5, 10.2]), doc("b", [10.4, 13.5, 11.9, 12.9, 12.0])
    )
    assert judge(comparison, GateConfig(max_regression=0.05)) == EXIT_INCONCLUSIVE
    reason = comparison["rows"][0]["reason"]
    assert "not significant" in reason and "reps a side would settle it" in reason


def test_fewer_than_three_reps_means_no_test_and_the_threshold_decides() -> None:
    comparison = compare_docs(doc("a", [10.0, 10.2]), doc("b", [11.0, 10.9]))
    metric = comparison["rows"][0]["metrics"]["time_to_p99_s"]
    assert metric["p_value"] is None and metric["ci"] is None
    assert judge(comparison, GateConfig()) == EXIT_REGRESSION
    assert "no significance test" in comparison["rows"][0]["reason"]


def test_scenarios_with_different_parameters_name_the_first_difference() -> None:
    with pytest.raises(UsageError, match="burst: 512 vs 256"):
        compare_docs(doc("a", [1.0]), doc("b", [1.0], burst=256))
    other = copy.deepcopy(doc("b", [1.0]))
    other["scenarios"][0]["name"] = "shallow"
    with pytest.raises(UsageError, match="'deep' is in a but not in b"):
        compare_docs(doc("a", [1.0]), other)


def test_latency_differs_only_where_a_variant_sets_it() -> None:
    slow = {**PARAMS["latency"], "take": 0.9}
    with pytest.raises(UsageError, match=r"latency\.take: 0\.5 vs 0\.9"):
        compare_docs(doc("a", [1.0]), doc("b", [1.0], latency=slow))
    comparison = compare_docs(doc("a", [1.0]), doc("b", [1.0], latency=slow), free_latency={"take"})
    assert comparison["rows"][0]["params"]["latency"] == {}  # no shared value to show
    with pytest.raises(UsageError, match=r"latency\.wake: None vs 0\.1"):
        compare_docs(
            doc("a", [1.0]), doc("b", [1.0], latency={**slow, "wake": 0.1}), free_latency={"take"}
        )


def test_a_fractional_limit_is_printed_as_given() -> None:
    comparison = compare_docs(doc("a", [10.0, 10.1]), doc("b", [10.2, 10.3]))
    judge(comparison, GateConfig(max_regression=0.025))
    assert "(limit +2.5%)" in comparison["rows"][0]["reason"]
    assert "max regression 2.5%" in verdict_lines(comparison)[-1]
    # efficiency reads the same in the comparison table as in the result tables (fmt "%")
    assert row_cells(comparison["rows"][0])[-3:-1] == ["79.7%", "78.2%"]


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


def test_reps_to_settle_grows_as_the_difference_shrinks() -> None:
    base = [10.0, 10.5, 9.5, 10.2, 9.8]
    small = reps_to_settle(base, [v + 0.1 for v in base])
    large = reps_to_settle(base, [v + 1.0 for v in base])
    assert small is not None and large is not None and small > large >= 4
