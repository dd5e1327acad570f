"""`jobbench history`'s table, plain text: one line per saved run, newest first, with what
tells runs apart at a glance (when, whether it finished, how many reps, its time to 99 %)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

from jobbench.render.words.cells import fmt
from jobbench.results.model import Result

HEAD = ("run", "file", "created (UTC)", "state", "reps", "scenarios", "time to 99 % (median)")
RIGHT = {"reps", "scenarios"}


@dataclass(frozen=True)
class SavedRun:
    """A saved run as `jobbench history` found it: read, or why it could not be."""

    ref: str  # the name compare and report read it by: run~1, run.failed
    file: str  # relative to the folder of results
    doc: Result | None
    problem: str = ""  # why there is no doc: unreadable, or not a run


def render_history(runs: Sequence[SavedRun], out: TextIO) -> None:
    rows = [HEAD, *(_cells(run) for run in runs)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEAD))]
    for row in rows:
        cells = [
            cell.rjust(width) if name in RIGHT else cell.ljust(width)
            for name, cell, width in zip(HEAD, row, widths)
        ]
        out.write("  ".join(cells).rstrip() + "\n")


def _cells(run: SavedRun) -> tuple[str, ...]:
    doc = run.doc
    if doc is None:
        return (run.ref, run.file, "", run.problem, "", "", "")
    reps = sum(len(entry.reps) for entry in doc.scenarios)
    created = doc.created.replace("T", " ").removesuffix("+00:00")
    return (
        run.ref,
        run.file,
        created,
        state(doc),
        str(reps),
        str(len(doc.scenarios)),
        headline(doc),
    )


def state(doc: Result) -> str:
    if doc.complete:
        return "complete"
    return "interrupted" if doc.interrupted else "incomplete"


def headline(doc: Result) -> str:
    """Each scenario's median time to 99 % (`-` before any rep of it counted)."""
    parts = []
    for entry in doc.scenarios:
        figure = entry.summary.get("time_to_p99_s")
        parts.append(f"{entry.name} {fmt(figure.median, 's') if figure else '-'}")
    return "; ".join(parts)
