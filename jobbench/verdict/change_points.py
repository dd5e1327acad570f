"""A trend over commits (docs/history.md): each row's metric per commit, its change points, and
the document `jobbench trend --json` prints and saves.

A commit's value of a row is the median of its reps that count, by the gate's rule
(decision.sort_out: runner-flagged reps and outliers set aside). Where a row's level steps is
found over those medians by the L1 Potts model (verdict/level_steps.py: asv's exact solver,
each jump's penalty set from the row's rep-to-rep noise), then every step whose size is within
the gate's threshold is dropped, the smallest first. What is said of a point comes from
the reps themselves: before and after are the medians of every counted rep between it and its
neighbouring change points, each with a distribution-free 95 % interval, and the change is the
Hodges-Lehmann estimate after / before - 1 with its interval, as the gate quotes a change.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jobbench.measure import stats
from jobbench.results.model import ScenarioResult
from jobbench.results.rep_metrics import METRICS
from jobbench.verdict.comparison import rep_flags, rep_values
from jobbench.verdict.decision import Rule, sort_out
from jobbench.verdict.level_steps import step_cuts

# A range of three commits or fewer has no change point: a level needs a commit on each side to
# be a level, and two steps in three commits are a wobble the threshold cannot tell from one.
MIN_COMMITS = 4


@dataclass(frozen=True)
class Commit:
    """A point of the history: a commit of --repo, its subject and its tag."""

    sha: str
    subject: str
    ref: str | None = None

    @property
    def short(self) -> str:
        return self.sha[:12]

    @property
    def name(self) -> str:
        """How a line names it: its tag, else its short sha."""
        return self.ref or self.short


@dataclass(frozen=True)
class Point:
    """One commit's value of a row: the median of its reps that count, and their range."""

    index: int  # into the trend's commits
    clean: tuple[float, ...]

    @property
    def median(self) -> float:
        return stats.median(self.clean)


@dataclass(frozen=True)
class Series:
    scenario: str
    metric: str
    points: tuple[Point, ...]


@dataclass(frozen=True)
class ChangePoint:
    index: int  # the first commit of the new level
    scenario: str
    metric: str
    before: float
    after: float
    before_ci: tuple[float, float]
    after_ci: tuple[float, float]
    change: float  # Hodges-Lehmann after / before - 1
    change_ci: tuple[float, float]
    # How far outside the row's noise the change is: |log(after / before)| (Hodges-Lehmann)
    # over the robust sd of every counted rep's log distance from its stretch's median.
    noise_multiple: float

    @property
    def direction(self) -> str:
        """Every metric jobbench compares is worse higher: seconds, CPU, an uneven split."""
        return "slower" if self.change > 0 else "faster"


def series_of(
    entries: Sequence[Mapping[str, ScenarioResult]], scenario: str, metric: str, rule: Rule
) -> Series:
    """The row's value at each commit that measured it (`entries[i]`: commit i's rows by name)."""
    points = []
    for index, rows in enumerate(entries):
        entry = rows.get(scenario)
        if entry is None or not entry.reps:
            continue
        clean = counted_reps(entry, metric, rule)
        if clean:
            points.append(Point(index, tuple(clean)))
    return Series(scenario, metric, tuple(points))


def counted_reps(entry: ScenarioResult, metric: str, rule: Rule) -> list[float]:
    """The row's reps that count for `metric`, as the gate sorts them out; when the runner
    flagged every rep (a machine busy throughout), all of them, as the result's own summary
    takes them (core/run/loop.add_rep): a commit measured on a busy machine is a noisier point,
    not a missing one."""
    values = rep_values(entry, metric, entry.name, required=False)
    flags = rep_flags(entry)
    if all(f is not None for v, f in zip(values, flags) if v is not None):
        flags = [None] * len(flags)
    kept = [(v, f) for v, f in zip(values, flags) if v is not None and v > 0]
    return counted([v for v, _ in kept], [f for _, f in kept], metric, rule)


def counted(
    values: Sequence[float], flags: Sequence[str | None], metric: str, rule: Rule
) -> list[float]:
    """The reps that count among a commit's `values` (each positive, `flags[i]` the runner's
    flag of rep i or None): the gate's sort_out, outliers set aside where `metric` has them."""
    if not METRICS[metric].outliers:
        rule = Rule(rule.threshold, outlier_z=math.inf)
    clean, _ = sort_out(values, flags, "A", rule)
    return clean


def change_points(series: Series, threshold: float) -> list[ChangePoint]:
    """The series' change points, oldest first; none with fewer than four commits measured."""
    points = series.points
    if len(points) < MIN_COMMITS:
        return []
    cuts = step_cuts([p.clean for p in points])
    return settled(series, cuts, threshold)


def settled(series: Series, cuts: Sequence[int], threshold: float) -> list[ChangePoint]:
    """The change points among the proposed `cuts` (places in `series.points` where a new level
    begins) whose Hodges-Lehmann change of the reps is beyond the threshold.

    A cut within the threshold is dropped, the smallest change first, and its neighbours are
    measured again without it: a dropped cut bounds no segment, so each change point's before
    and after are every rep between it and the change points kept beside it."""
    kept = sorted({cut for cut in cuts if 0 < cut < len(series.points)})
    while True:
        measured = [_measure(series, kept, at) for at in range(len(kept))]
        within = [i for i, (change, _, _) in enumerate(measured) if abs(change) <= threshold]
        if not within:
            break
        del kept[min(within, key=lambda i: abs(measured[i][0]))]
    noise = _noise(series, kept)
    return [_change_point(series, kept, at, shift, noise) for at, shift in enumerate(measured)]


Shift = tuple[float, float, float]  # Hodges-Lehmann after / before - 1, its 95 % interval


def _sides(series: Series, kept: Sequence[int], at: int) -> tuple[list[float], list[float]]:
    """The reps between cut `at` and the kept cuts beside it: before, then after."""
    bounds = [0, *kept, len(series.points)]
    before = [v for p in series.points[bounds[at] : bounds[at + 1]] for v in p.clean]
    after = [v for p in series.points[bounds[at + 1] : bounds[at + 2]] for v in p.clean]
    return before, after


def _measure(series: Series, kept: Sequence[int], at: int) -> Shift:
    estimate, low, high = stats.log_shift(*_sides(series, kept, at))
    return math.expm1(estimate), math.expm1(low), math.expm1(high)


def _noise(series: Series, kept: Sequence[int]) -> float:
    """The row's rep-to-rep noise on a log scale: the robust sd of every counted rep's log
    distance from the median of its stretch (between the change points kept)."""
    bounds = [0, *kept, len(series.points)]
    distances = []
    for start, end in itertools.pairwise(bounds):
        reps = [v for p in series.points[start:end] for v in p.clean]
        middle = math.log(stats.median(reps))
        distances += [math.log(v) - middle for v in reps]
    return stats.robust_sd(distances)


def _change_point(
    series: Series, kept: Sequence[int], at: int, shift: Shift, noise: float
) -> ChangePoint:
    before, after = _sides(series, kept, at)
    change, low, high = shift
    return ChangePoint(
        index=series.points[kept[at]].index,
        scenario=series.scenario,
        metric=series.metric,
        before=stats.median(before),
        after=stats.median(after),
        before_ci=stats.median_interval(before),
        after_ci=stats.median_interval(after),
        change=change,
        change_ci=(low, high),
        noise_multiple=abs(math.log1p(change)) / noise if noise > 0 else math.inf,
    )


@dataclass(frozen=True)
class CommitState:
    """What the trend knows of a commit besides its rows: the label its newest result is saved
    under (None: nothing measured), or why it was skipped."""

    label: str | None = None
    skipped: str | None = None


def document(
    commits: Sequence[Commit],
    states: Sequence[CommitState],
    series: Sequence[Series],
    points: Sequence[ChangePoint],
) -> dict[str, Any]:
    """`{"commits": [...], "change_points": [...]}`: `commits` oldest first, the range's start
    the first, each with its rows' values (median, min, max, reps counted); each change point
    names its commit by sha and tag (`ref`, or null)."""
    rows: list[dict[str, Any]] = [{} for _ in commits]
    for row in series:
        for point in row.points:
            rows[point.index][row.scenario] = {
                "metric": row.metric,
                "median": point.median,
                "min": min(point.clean),
                "max": max(point.clean),
                "n": len(point.clean),
            }
    return {
        "commits": [
            {
                "commit": commit.sha,
                "ref": commit.ref,
                "subject": commit.subject,
                "label": state.label,
                "skipped": state.skipped,
                "rows": rows[index],
            }
            for index, (commit, state) in enumerate(zip(commits, states))
        ],
        "change_points": [
            {
                "commit": commits[point.index].sha,
                "ref": commits[point.index].ref,
                "scenario": point.scenario,
                "metric": point.metric,
                "before": point.before,
                "after": point.after,
                "change": point.change,
                "direction": point.direction,
            }
            for point in points
        ],
    }
