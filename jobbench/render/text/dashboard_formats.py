"""Figures in the formats the benchmark dashboards people already run read:

- `bmf`: Bencher Metric Format (`bencher run --adapter json --file FILE`), an object of
  benchmarks, each an object of measures, each `{"value", "lower_value", "upper_value"}`;
- `github-action-benchmark`: its `customSmallerIsBetter` tool's JSON, a list of
  `{"name", "unit", "value", "range", "extra"}`.

A benchmark is a row of the suite (a scenario); its measures are the figures jobbench judges,
each smaller-is-better: the value the median over the reps that count, the bounds their least
and greatest. Of a run, every scenario; of a comparison, the candidate's side (what the pull
request or the branch is); of a trend, its newest commit (what a push to main adds).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from jobbench.results.model import Comparison, Result
from jobbench.results.rep_metrics import METRICS
from jobbench.verdict.behaviour import in_summary

# The figures exported, in order, with their units: every one smaller-is-better.
EXPORTED = {
    "time_to_p99_s": "s",
    "e2e_p99_s": "s",
    "e2e_mean_s": "s",
    "steady_e2e_p99_s": "s",
    "fleet_worker_s": "worker-s",
    "worker_cpu_ms_per_job": "ms",
    "requests_per_job": "requests",
}
FORMATS = ("bmf", "github-action-benchmark")


@dataclass(frozen=True)
class Figure:
    benchmark: str  # the row
    metric: str  # a key of EXPORTED
    value: float
    low: float
    high: float
    reps: int

    @property
    def measure(self) -> str:
        """Bencher's measure slug: `time-to-p99-s`."""
        return self.metric.replace("_", "-")


def of_result(doc: Result) -> list[Figure]:
    """Every scenario's figures over its reps (a partial or disturbed rep left out where
    undisturbed ones exist, as the run's summary does: core/run/loop.py `add_rep`)."""
    figures = []
    for entry in doc.scenarios:
        clean = [rep for rep in entry.reps if in_summary(rep)] or list(entry.reps)
        for metric in EXPORTED:
            values = [v for v in (METRICS[metric].read(rep) for rep in clean) if v is not None]
            if values:
                middle, low, high = statistics.median(values), min(values), max(values)
                figures.append(Figure(entry.name, metric, middle, low, high, len(values)))
    return figures


def of_comparison(comparison: Comparison) -> list[Figure]:
    """The candidate's figures, row by row, over the reps the comparison counted."""
    figures = []
    for row in comparison.rows:
        for metric in EXPORTED:
            side = row.metrics[metric].candidate if metric in row.metrics else None
            if side is not None:
                value = side.pooled if side.pooled is not None else side.median
                figures.append(Figure(row.scenario, metric, value, side.min, side.max, side.n))
    return figures


def of_trend(doc: dict[str, Any]) -> list[Figure]:
    """The newest commit's rows of a trend document (verdict/change_points.py `document`)."""
    commits = [c for c in doc.get("commits", []) if c.get("rows")]
    if not commits:
        return []
    return [
        Figure(name, row["metric"], row["median"], row["min"], row["max"], row["n"])
        for name, row in commits[-1]["rows"].items()
        if row.get("metric") in EXPORTED
    ]


def write(fmt: str, figures: Sequence[Figure], out: TextIO) -> None:
    """`figures` as `fmt` (one of FORMATS), one JSON document and a newline."""
    json.dump(_bmf(figures) if fmt == "bmf" else _github_action_benchmark(figures), out, indent=1)
    out.write("\n")


def _bmf(figures: Sequence[Figure]) -> dict[str, dict[str, dict[str, float]]]:
    doc: dict[str, dict[str, dict[str, float]]] = {}
    for f in figures:
        doc.setdefault(f.benchmark, {})[f.measure] = {
            "value": f.value,
            "lower_value": f.low,
            "upper_value": f.high,
        }
    return doc


def _github_action_benchmark(figures: Sequence[Figure]) -> list[dict[str, Any]]:
    return [
        {
            "name": f"{f.benchmark} {METRICS[f.metric].label}",
            "unit": EXPORTED[f.metric],
            "value": f.value,
            "range": f"{f.low:g} - {f.high:g}",
            "extra": f"median of {f.reps} reps; min {f.low:g}, max {f.high:g}",
        }
        for f in figures
    ]


def render_bmf(comparison: Comparison, out: TextIO, width: int = 100, wide: bool = False) -> None:
    """`compare --format bmf` (the comparison formats' registry, render/__init__.py)."""
    write("bmf", of_comparison(comparison), out)


def render_github_action_benchmark(
    comparison: Comparison, out: TextIO, width: int = 100, wide: bool = False
) -> None:
    """`compare --format github-action-benchmark`."""
    write("github-action-benchmark", of_comparison(comparison), out)
