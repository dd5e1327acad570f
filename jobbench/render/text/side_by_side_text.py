"""The side-by-side table of a suite's variants (verdict/side_by_side.py, docs/fixes.md), as
Markdown or as plain aligned text for the terminal: a line per scenario and figure, a column per
variant, the best value of a line marked `*` where its values differ (the lowest, but for the
split, where 1 is an even one: the highest)."""

from __future__ import annotations

from typing import TextIO

from jobbench.render.words.cells import fmt
from jobbench.verdict.side_by_side import Line, SideBySide

LEGEND = (
    "Each cell: the median over the reps. time to 99 %: until 99 % of a burst is done; steady "
    "e2e p99: a steady load's end-to-end p99 after the warm-up; worker-seconds: billed by an "
    "autoscaled fleet; held jobs: left a buffer after waiting while a slot was free elsewhere; "
    "split (Jain): 1 = every worker served as many jobs, 1/n = one did all (-: fewer than two "
    "workers served); jobs not done: failed, lost or unfinished over every rep, shown where "
    "some variant left any. *: the best of a line whose values differ, never a variant that "
    "left jobs not done."
)


def _cells(line: Line) -> list[str]:
    known = [v for v in line.values if v is not None]
    differ = len(set(known)) > 1
    # A variant that left jobs not done is never the best: failing jobs is not being fast.
    eligible = [v for i, v in enumerate(line.values) if v is not None and line.may_be_best(i)]
    pick = max if line.figure.higher_is_better else min
    best = pick(eligible) if differ and eligible else None
    return [
        fmt(v, line.figure.unit)
        + (" *" if v is not None and v == best and line.may_be_best(i) else "")
        for i, v in enumerate(line.values)
    ]


def render_side_by_side(table: SideBySide, out: TextIO, markdown: bool) -> None:
    header = ["scenario", "figure", *table.labels]
    rows = [[line.scenario, line.figure.title, *_cells(line)] for line in table.lines]
    if markdown:
        out.write("| " + " | ".join(header) + " |\n")
        out.write("|" + "---|" * len(header) + "\n")
        out.writelines("| " + " | ".join(row) + " |\n" for row in rows)
    else:
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
        for row in [header, *rows]:
            cells = [
                c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))
            ]
            out.write("  ".join(cells).rstrip() + "\n")
    out.write(f"\n{LEGEND}\n")
    for label, why in table.incomplete:
        out.write(f"\n{label} did not complete: {why}\n")
