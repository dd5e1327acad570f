"""The HTML report's page for a result, or for both sides of a comparison, written to a file:
the documents, every rep's series from `<result>.events.jsonl`, then render/page/html.py.
`jobbench report`, and `--html` on run and compare, all write it here."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from jobbench.errors import ResultsError, UsageError
from jobbench.measure.series import RepSeries, rep_series
from jobbench.render.page.html import SideReport, render_page
from jobbench.results.events_file import each_rep_events
from jobbench.results.model import Comparison, Result
from jobbench.results.store import read_result, safe_label


def write_report(
    docs: Sequence[Result],
    paths: Sequence[Path],
    html: Path,
    rep: int | None = None,
    comparison: Comparison | None = None,
) -> Path:
    """One page for one result, or for both sides of a comparison (A and B on shared axes)."""
    keys = ["A", "B"] if len(docs) == 2 else [""]
    sides = [_side(key, doc, path, rep) for key, doc, path in zip(keys, docs, paths)]
    html.parent.mkdir(parents=True, exist_ok=True)
    html.write_text(render_page(sides, comparison), encoding="utf-8")
    return html


def report_after_run(doc: Result, path: Path, html: Path | None, quiet: bool) -> None:
    """`--html FILE` on `run`: the page for the result just saved at `path`."""
    if html is None:
        return
    written = write_report([doc], [path], html)
    if not quiet:
        print(f"html report: {written}", file=sys.stderr)


def comparison_sides(comparison: Comparison, path: Path) -> tuple[list[Result], list[Path]]:
    """The two results: where the comparison recorded them (relative to its own folder), else,
    for a comparison without paths, the saved labels beside it."""
    paths = []
    for name, side in (("baseline", comparison.baseline), ("candidate", comparison.candidate)):
        if side.path is not None:
            paths.append(Path(os.path.normpath(path.parent / side.path)))
        elif side.label:
            paths.append(path.parent / f"{safe_label(side.label)}.json")
        else:
            raise ResultsError(f"{path}: comparison without a {name} label; re-run the compare")
    return [read_result(p) for p in paths], paths


def _side(key: str, doc: Result, path: Path, rep: int | None) -> SideReport:
    """The side's document and the series of every rep its events file holds (read one rep at
    a time); `note` says why the plotted rep (`--rep N`, else the last) has no plots."""
    events = path.with_suffix(".events.jsonl")
    plotted = _wanted_reps(doc, rep, path)
    note = _events_problem(doc, events)
    if note is not None:
        return SideReport(key, doc, path, note=note)
    series: dict[str, dict[int, RepSeries]] = {}

    def keep(name: str, number: int, rows: list[dict[str, Any]]) -> None:
        series.setdefault(name, {})[number] = rep_series(rows)

    every = {e.name: range(1, len(e.reps) + 1) for e in doc.scenarios if e.reps}
    skipped = each_rep_events(events, every, keep)
    if skipped:
        note = f"{skipped} unreadable line(s) of {events} skipped"
    missing = [f"{name} rep {r}" for name, r in plotted.items() if r not in series.get(name, {})]
    if missing:
        note = f"{events} has no events for {', '.join(missing)}"
    return SideReport(key, doc, path, series, plotted, note)


def _wanted_reps(doc: Result, rep: int | None, path: Path) -> dict[str, int]:
    """Scenario name -> the rep to plot: `--rep N`, else the last one that finished."""
    wanted = {}
    for entry in doc.scenarios:
        count = len(entry.reps)
        if rep is not None and not 1 <= rep <= count:
            raise UsageError(f"--rep {rep}: scenario {entry.name} of {path} has reps 1..{count}")
        if count:
            wanted[entry.name] = rep or count
    return wanted


def _events_problem(doc: Result, events: Path) -> str | None:
    if not events.is_file():
        return (
            f"plots need the events file {events}; run with events on (the default, "
            "not --no-events) to get it"
        )
    try:
        started = datetime.fromisoformat(doc.created).timestamp()
    except ValueError:
        return None
    if events.stat().st_mtime < started - 2:
        return (
            f"{events} is older than the result (from an earlier run); re-run with events "
            "on to plot"
        )
    return None
