"""One CSV line per scenario and metric, for spreadsheets."""

from __future__ import annotations

import csv
from typing import Any, TextIO

COLUMNS = (
    "scenario",
    "metric",
    "baseline_median",
    "candidate_median",
    "change",
    "ci_low",
    "ci_high",
    "p_value",
    "verdict",
)


def render(comparison: dict[str, Any], out: TextIO, width: int = 100) -> None:
    del width
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in comparison["rows"]:
        verdict = row.get("verdict") or ""
        for name, metric in row["metrics"].items():
            ci = metric.get("ci") or [None, None]
            writer.writerow(
                [
                    row["scenario"],
                    name,
                    (metric.get("baseline") or {}).get("median"),
                    (metric.get("candidate") or {}).get("median"),
                    metric.get("change"),
                    ci[0],
                    ci[1],
                    metric.get("p_value"),
                    verdict,
                ]
            )
