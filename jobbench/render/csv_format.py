"""One CSV line per scenario and metric, for spreadsheets."""

from __future__ import annotations

import csv
from typing import Any, TextIO

COLUMNS = (
    "scenario",
    "metric",
    "gated",
    "baseline_median",
    "candidate_median",
    "baseline_pooled",
    "candidate_pooled",
    "change",
    "ci_low",
    "ci_high",
    "p_slower",
    "baseline_spread",
    "candidate_spread",
    "baseline_reps",
    "candidate_reps",
    "set_aside",
    "detectable",
    "verdict",
    "stopped",
)


def render(comparison: dict[str, Any], out: TextIO, width: int = 100, wide: bool = True) -> None:
    del width, wide
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in comparison["rows"]:
        for name, metric in row["metrics"].items():
            is_gated = name == row.get("metric")
            ci = metric.get("ci") or [None, None]
            base, cand = metric.get("baseline") or {}, metric.get("candidate") or {}
            spread = metric.get("spread") or {}
            writer.writerow(
                [
                    row["scenario"],
                    name,
                    int(is_gated),
                    base.get("median"),
                    cand.get("median"),
                    base.get("pooled"),
                    cand.get("pooled"),
                    metric.get("change"),
                    ci[0],
                    ci[1],
                    metric.get("p_slower"),
                    spread.get("baseline"),
                    spread.get("candidate"),
                    base.get("n"),
                    cand.get("n"),
                    len(metric.get("excluded") or []),
                    row.get("mdc") if is_gated else None,
                    row.get("verdict") or "" if is_gated else "",
                    row.get("stopped") or "" if is_gated else "",
                ]
            )
