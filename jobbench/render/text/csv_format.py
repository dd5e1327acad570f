"""One CSV line per scenario and metric, for spreadsheets; then a row's held figures (take-ahead's
cost, never gated), a line each with their difference B - A."""

from __future__ import annotations

import csv
from typing import TextIO

from jobbench.results.model import Comparison, HeldFigure, Row
from jobbench.verdict.held_compare import HELD_KEYS

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
    "difference",  # B - A: a held figure's change (its line has no ratio `change`)
)


def render(comparison: Comparison, out: TextIO, width: int = 100, wide: bool = True) -> None:
    del width, wide
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in comparison.rows:
        for name, metric in row.metrics.items():
            is_gated = name == row.metric
            low, high = metric.ci or (None, None)
            base, cand = metric.baseline, metric.candidate
            spread = metric.spread
            writer.writerow(
                [
                    row.scenario,
                    name,
                    int(is_gated),
                    base.median if base else None,
                    cand.median if cand else None,
                    base.pooled if base else None,
                    cand.pooled if cand else None,
                    metric.change,
                    low,
                    high,
                    metric.p_slower,
                    spread.baseline if spread else None,
                    spread.candidate if spread else None,
                    base.n if base else None,
                    cand.n if cand else None,
                    len(metric.excluded),
                    row.mdc if is_gated else None,
                    row.verdict or "" if is_gated else "",
                    row.stopped or "" if is_gated else "",
                    None,
                ]
            )
        for name, figure in _held_figures(row):
            line: dict[str, object] = dict.fromkeys(COLUMNS)  # None: an empty field
            line |= {"scenario": row.scenario, "metric": name, "gated": 0}
            line |= {"baseline_median": figure.baseline, "candidate_median": figure.candidate}
            line["difference"] = figure.difference
            writer.writerow(line.values())


def _held_figures(row: Row) -> list[tuple[str, HeldFigure]]:
    """A row's held figures as CSV lines, named as the results' summaries name them."""
    held = row.held
    return [(key, getattr(held, name)) for name, key in HELD_KEYS.items()] if held else []
