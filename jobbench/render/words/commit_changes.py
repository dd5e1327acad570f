"""What the trend's table and page, and the bisection's lines, say alike: a metric's value in its
unit, a change with its interval, a commit's short line."""

from __future__ import annotations

import math

from jobbench.render.words.cells import fmt
from jobbench.results.trend import ChangePoint, Commit


def unit(metric: str) -> str:
    """Seconds for the times, ms for the workers' CPU, a ratio for the split."""
    if metric.endswith("_s"):
        return "s"
    return "ms" if metric.endswith("_ms_per_job") else "ratio"


def value(metric: str, number: float) -> str:
    return fmt(number, unit(metric))


def spread(metric: str, median: float, interval: tuple[float, float]) -> str:
    """`0.512 s [0.498, 0.520]`: a median and its 95 % interval."""
    low, high = interval
    digits = 3 if unit(metric) in ("s", "ratio") else 1
    return f"{value(metric, median)} [{low:.{digits}f}, {high:.{digits}f}]"


def change(number: float | None, interval: tuple[float, float] | None = None) -> str:
    """`+25.3% [+21.0%, +30.1%]`."""
    if number is None:
        return "-"
    if interval is None:
        return f"{number:+.1%}"
    return f"{number:+.1%} [{interval[0]:+.1%}, {interval[1]:+.1%}]"


def strength(point: ChangePoint) -> str:
    """`38 x noise`: how many times the row's rep-to-rep noise the change is."""
    times = point.noise_multiple
    return f"{times:.0f} x noise" if math.isfinite(times) else "no noise"


def subject(commit: Commit, width: int = 48) -> str:
    text = commit.subject
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def point_line(point: ChangePoint, commit: Commit) -> str:
    """One change point in a sentence: for the page's hover text and a CI log."""
    return (
        f"{commit.name} {subject(commit)!r}: {point.scenario} {point.metric} "
        f"{value(point.metric, point.before)} -> {value(point.metric, point.after)}, "
        f"{change(point.change, point.change_ci)} ({point.direction}, {strength(point)})"
    )
