"""Take-ahead's cost of one row, side by side: the jobs each side held in a buffer while a
slot was free elsewhere, and their extra wait p99 (measure/held.py), as the summary's medians
over the reps. Shown beside the gated metric in every format of a comparison, never gated: what
a steady load pays for take-ahead is a cost to read, not a threshold to pass."""

from __future__ import annotations

from jobbench.results.model import HeldComparison, HeldFigure, ScenarioResult

# Each held figure of a row: its field in the comparison, and the results' summary key (the
# per-rep figure's median) it is read from, which the CSV names its lines by.
HELD_KEYS = {"jobs": "held_jobs", "extra_wait_p99_s": "held_extra_wait_p99_s"}


def held_comparison(base: ScenarioResult, cand: ScenarioResult) -> HeldComparison | None:
    """A row's held figures, or None when neither side measured held jobs (results written before
    commit dba92ff): such a row writes no `held` key."""
    figures = {name: _figure(base, cand, key) for name, key in HELD_KEYS.items()}
    held = HeldComparison.model_validate(figures)
    measured = held.jobs.baseline is not None or held.jobs.candidate is not None
    return held if measured else None


def _figure(base: ScenarioResult, cand: ScenarioResult, key: str) -> HeldFigure:
    a, b = _median(base, key), _median(cand, key)
    difference = None if a is None or b is None else round(b - a, 6)
    return HeldFigure(baseline=a, candidate=b, difference=difference)


def _median(entry: ScenarioResult, key: str) -> float | None:
    figure = entry.summary.get(key)
    return None if figure is None else figure.median
