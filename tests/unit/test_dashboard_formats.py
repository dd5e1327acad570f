"""Results in the dashboards' formats (render/text/dashboard_formats.py): Bencher Metric Format
checked against its published JSON schema (bencher.dev/bmf.json, below as a schema object) and
github-action-benchmark's customSmallerIsBetter list against its documented fields; a run's,
a comparison's candidate and a trend's newest commit."""

from __future__ import annotations

import io
import json
from typing import Any

import jsonschema
import pytest

from jobbench.render import renderer
from jobbench.render.text import dashboard_formats
from jobbench.verdict.comparison import compare_docs
from jobbench.verdict.gate import GateConfig, judge
from tests.unit.test_render_run import DRAIN, complete_run

# Bencher Metric Format's JSON schema as published (draft-07): benchmarks of measures of
# {value, lower_value?, upper_value?}, numbers, value required.
BMF_SCHEMA: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema",
    "type": "object",
    "patternProperties": {
        ".+": {
            "type": "object",
            "patternProperties": {
                ".+": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "number"},
                        "lower_value": {"type": "number"},
                        "upper_value": {"type": "number"},
                    },
                    "required": ["value"],
                }
            },
        }
    },
}
# github-action-benchmark's `customSmallerIsBetter` input: a list of benchmarks, each with a
# name, a unit and a numeric value; range and extra are optional strings.
GAB_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "unit": {"type": "string"},
            "value": {"type": "number"},
            "range": {"type": "string"},
            "extra": {"type": "string"},
        },
        "required": ["name", "unit", "value"],
        "additionalProperties": False,
    },
}


def written(fmt: str, figures: list[dashboard_formats.Figure]) -> Any:
    out = io.StringIO()
    dashboard_formats.write(fmt, figures, out)
    assert out.getvalue().endswith("\n")
    return json.loads(out.getvalue())


def test_a_runs_figures_are_each_rows_medians_with_their_least_and_greatest() -> None:
    doc = complete_run()
    figures = dashboard_formats.of_result(doc)
    bmf = written("bmf", figures)
    jsonschema.validate(bmf, BMF_SCHEMA)
    assert set(bmf) == {entry.name for entry in doc.scenarios}
    row = bmf[DRAIN.name]
    # The stalled fifth rep is the workers' own doing: it counts, as in the run's table.
    p99 = [rep.time_to_p99_s for rep in doc.scenarios[0].reps]
    assert row["time-to-p99-s"] == {
        "value": pytest.approx(sorted(p99)[2]),
        "lower_value": pytest.approx(min(p99)),
        "upper_value": pytest.approx(max(p99)),
    }
    for measure in row.values():
        assert measure["lower_value"] <= measure["value"] <= measure["upper_value"]
    listed = written("github-action-benchmark", figures)
    jsonschema.validate(listed, GAB_SCHEMA)
    assert len(listed) == len(figures)
    first = listed[0]
    assert first["name"] == f"{DRAIN.name} time to 99 % done" and first["unit"] == "s"
    assert first["value"] == pytest.approx(sorted(p99)[2])
    assert first["extra"].startswith("median of 5 reps")


def test_a_comparisons_figures_are_its_candidates_and_reach_compare_format() -> None:
    base, cand = complete_run(), complete_run()
    cand.label = "pr"
    comparison = compare_docs(base, cand)
    judge(comparison, GateConfig())
    out = io.StringIO()
    renderer("bmf")(comparison, out)
    bmf = json.loads(out.getvalue())
    jsonschema.validate(bmf, BMF_SCHEMA)
    row = comparison.rows[0]
    side = row.metrics["time_to_p99_s"].candidate
    assert side is not None
    assert bmf[row.scenario]["time-to-p99-s"]["value"] == pytest.approx(side.median)
    out = io.StringIO()
    renderer("github-action-benchmark")(comparison, out)
    jsonschema.validate(json.loads(out.getvalue()), GAB_SCHEMA)


def test_a_trends_figures_are_its_newest_measured_commits() -> None:
    row = {"metric": "time_to_p99_s", "median": 8.1, "min": 8.0, "max": 8.3, "n": 3}
    doc = {
        "commits": [
            {"commit": "a" * 40, "rows": {"deep": {**row, "median": 9.0, "max": 9.2}}},
            {"commit": "b" * 40, "rows": {"deep": row}},
            {"commit": "c" * 40, "rows": {}},  # skipped: it could not be built
        ],
        "change_points": [],
    }
    bmf = written("bmf", dashboard_formats.of_trend(doc))
    jsonschema.validate(bmf, BMF_SCHEMA)
    assert bmf == {
        "deep": {"time-to-p99-s": {"value": 8.1, "lower_value": 8.0, "upper_value": 8.3}}
    }
    assert dashboard_formats.of_trend({"commits": [], "change_points": []}) == []
