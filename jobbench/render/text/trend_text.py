"""`jobbench trend`'s table and `jobbench bisect`'s last lines, plain text: a CI log reads them
as they are, and a terminal shows them the same."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from jobbench.render.words import commit_changes as words
from jobbench.results.trend import ChangePoint, Commit

HEAD = ("commit", "subject", "row", "metric", "before", "after", "change", "", "strength")


def render_points(
    commits: Sequence[Commit], points: Sequence[ChangePoint], summary: str, out: TextIO
) -> None:
    """The change points, oldest first, under a line that says what the trend covered."""
    out.write(summary + "\n")
    if not points:
        out.write("no change point: every row kept its level over these commits\n")
        return
    rows = [HEAD, *(_cells(commits[point.index], point) for point in points)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEAD))]
    out.write("\n")
    for row in rows:
        out.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() + "\n")
    out.write(
        "\nbefore / after: the median of every rep that counts between the neighbouring change "
        "points, [95 % interval]; change: after / before - 1 (Hodges-Lehmann) [95 % interval]; "
        "strength: the change in multiples of the row's rep-to-rep noise\n"
    )


def _cells(commit: Commit, point: ChangePoint) -> tuple[str, ...]:
    return (
        commit.name,
        words.subject(commit, 40),
        point.scenario,
        point.metric,
        words.spread(point.metric, point.before, point.before_ci),
        words.spread(point.metric, point.after, point.after_ci),
        words.change(point.change, point.change_ci),
        point.direction,
        words.strength(point),
    )
