"""Every variant of a suite on one table (the `fixes` suite, docs/fixes.md): per scenario, the
figures a fix trades against each other, one column per variant. Each is read where the result
already holds it: the summary's median over the reps that count (time to 99 %, the steady p99,
the fleet's worker-seconds, the jobs held in a buffer), and the split across workers as the
median of each rep's Jain index (measure/figures.py computes it per rep; the summary has none).
A variant whose jobs did not all complete says so on a line of its own, and none of its figures
can be a line's best: a fix is never called faster because its jobs failed or were lost."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from jobbench.measure.stats import median
from jobbench.results.model import Result, ScenarioResult
from jobbench.verdict.comparison import is_profile


def _summary(key: str) -> Callable[[ScenarioResult], float | None]:
    def read(entry: ScenarioResult) -> float | None:
        figure = entry.summary.get(key)
        return None if figure is None else figure.median

    return read


def _jain(entry: ScenarioResult) -> float | None:
    """The median over the whole reps of each one's Jain index (None with fewer than two
    workers' jobs: a split needs two)."""
    values = [
        rep.split.jain
        for rep in entry.reps
        if rep.partial is None and rep.split.jain is not None and len(rep.split.jobs_per_worker) > 1
    ]
    return median(values) if values else None


@dataclass(frozen=True)
class Figure:
    title: str
    unit: str  # as render/words/cells.fmt writes it
    read: Callable[[ScenarioResult], float | None]
    burst_only: bool = False  # a drain's figure: a steady load's jobs end as they arrive
    higher_is_better: bool = False  # the split (1 is even); every other figure is a cost


# In the table's order; a scenario shows the figures some variant has (a burst has no steady
# p99, a fixed fleet no worker-seconds billed), and a profile's row no time to 99 %, which is
# its load's length and says nothing of its jobs (verdict/comparison.py judges it alike).
FIGURES = (
    Figure("time to 99 %", "s", _summary("time_to_p99_s"), burst_only=True),
    Figure("steady e2e p99", "s", _summary("steady_e2e_p99_s")),
    Figure("worker-seconds", "s", _summary("fleet_worker_s")),
    Figure("held jobs", "", _summary("held_jobs")),
    Figure("split (Jain)", "ratio", _jain, higher_is_better=True),
)


def _not_done(entry: ScenarioResult) -> float:
    """Jobs submitted and not completed over every rep: failed, lost, timed out, unfinished."""
    return float(sum(rep.jobs.submitted - rep.jobs.completed for rep in entry.reps))


# Shown, before the figures, on a scenario where some variant left jobs not done.
NOT_DONE = Figure("jobs not done", "", _not_done)


@dataclass(frozen=True)
class Line:
    scenario: str
    figure: Figure
    values: tuple[float | None, ...]  # one per variant, in the table's order
    # Per variant, whether all its jobs of the scenario completed (empty: all did); only those
    # that did may hold a line's best.
    all_done: tuple[bool, ...] = ()

    def may_be_best(self, index: int) -> bool:
        return not self.all_done or self.all_done[index]


@dataclass(frozen=True)
class SideBySide:
    labels: tuple[str, ...]  # each variant's result label, the columns
    lines: tuple[Line, ...]
    # (label, why) of each variant whose run did not complete: a variant beside the comparison
    # whose workers stopped its reps (core/run/loop.py), or any result saved incomplete.
    incomplete: tuple[tuple[str, str], ...] = ()


def side_by_side(docs: Sequence[Result]) -> SideBySide:
    """The scenarios of the first result, in its order, each with the figures of every result
    that ran it (a result that did not: its cells are empty)."""
    lines = []
    for entry in docs[0].scenarios:
        entries = [_entry(doc, entry.name) for doc in docs]
        not_done = tuple(None if e is None else _not_done(e) for e in entries)
        all_done = tuple(not n for n in not_done)
        if any(not_done):
            lines.append(Line(entry.name, NOT_DONE, not_done, all_done))
        for figure in FIGURES:
            if figure.burst_only and is_profile(entry):
                continue
            values = tuple(None if e is None else figure.read(e) for e in entries)
            if any(v is not None for v in values):
                lines.append(Line(entry.name, figure, values, all_done))
    incomplete = tuple(
        (doc.label, doc.error or "not every rep ran") for doc in docs if not doc.complete
    )
    return SideBySide(tuple(doc.label for doc in docs), tuple(lines), incomplete)


def _entry(doc: Result, name: str) -> ScenarioResult | None:
    return next((s for s in doc.scenarios if s.name == name), None)
