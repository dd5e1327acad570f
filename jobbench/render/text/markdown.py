"""Markdown: the PR comment and $GITHUB_STEP_SUMMARY. The answer first: one line with the
verdict, its reason and the call's wall time; the two sides; a table narrow enough for a
comment's column (the row, what it is gated on, each side, the change with its 95 % interval,
the verdict). The wide table, its legend and each row's reasons follow, folded in <details>."""

from __future__ import annotations

from typing import TextIO

from jobbench.render.words.cells import (
    MARKS,
    SHORT,
    change,
    figure,
    gated,
    header,
    interval,
    legend,
    row_cells,
    title,
    verdict_lines,
)
from jobbench.results.model import Comparison

ICONS = {"pass": "✅", "better": "✅", "regression": "❌", "inconclusive": "⚠️"}
DETAILS = "Every figure, the reps, and how each row was decided"


def render(comparison: Comparison, out: TextIO, width: int = 100, wide: bool = True) -> None:
    """The comment: the verdict, the narrow table, then the wide one folded away."""
    del width, wide
    out.write(f"### {headline(comparison)}\n\n{sides(comparison)}\n\n")
    cells = ["row", "gated on", "A", "B", "change [95 %]", "verdict"]
    out.write("| " + " | ".join(cells) + " |\n|" + "---|" * len(cells) + "\n")
    for row in comparison.rows:
        name, metric = gated(row)
        verdict = row.verdict
        shown = f"{ICONS.get(verdict or '', '')} {MARKS.get(verdict, str(verdict))}".strip()
        line = [
            row.scenario + (" *" if metric.excluded else ""),
            SHORT.get(name, name),
            figure(metric, "baseline", name),
            figure(metric, "candidate", name),
            f"{change(metric)} {interval(metric)}",
            shown,
        ]
        out.write("| " + " | ".join(line) + " |\n")
    out.write(f"\n<details><summary>{DETAILS}</summary>\n\n")
    wide_table(comparison, out)
    out.write("\n</details>\n")


def headline(comparison: Comparison) -> str:
    """`✅ pass: no scenario is slower than the threshold, 5.2 min`."""
    verdict = comparison.verdict
    if verdict is None:
        return f"jobbench: {title(comparison)}"
    reason = comparison.reason
    wall = comparison.wall_s
    took = "" if wall is None else f", {wall:.0f} s" if wall < 90 else f", {wall / 60:.1f} min"
    return f"{ICONS.get(verdict, '')} {verdict}: {reason}{took}".strip()


def sides(comparison: Comparison) -> str:
    """Who A and B are, by the names the call gave them, and the rule."""
    a, b = comparison.baseline, comparison.candidate
    said = f"**A** `{a.name or a.label}` (baseline) · **B** `{b.name or b.label}` (candidate)"
    gate = comparison.gate
    if gate is not None:
        said += f" · threshold +{gate.max_regression:.1%}"
        if gate.false_alarm is not None:
            said += f", false alarms ≤ {gate.false_alarm:.0%} a call"
    return said


def wide_table(comparison: Comparison, out: TextIO) -> None:
    """Every metric, the reps and what was set aside; the legend; each row's reason."""
    cells = header(comparison, True)
    out.write(f"{title(comparison)}\n\n")
    out.write("| " + " | ".join(cells) + " |\n")
    out.write("|" + "---|" * len(cells) + "\n")
    for row in comparison.rows:
        out.write("| " + " | ".join(row_cells(row, comparison, True)) + " |\n")
    out.write("\n" + "\n\n".join(legend(comparison)) + "\n")  # a paragraph per line
    lines = verdict_lines(comparison)
    if lines:
        out.write("\n" + "\n".join(f"- {line}" for line in lines) + "\n")
