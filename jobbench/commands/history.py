"""`jobbench history [LABEL]`: every saved run of a label (or of each label in --out), newest
first, with the `LABEL~N` names compare, gate and report read them by."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from jobbench.commands.requests.report import HistoryRequest
from jobbench.errors import EXIT_OK, ResultsError, UsageError
from jobbench.render.text.history_text import SavedRun, render_history
from jobbench.results.history import parse_ref, saved_labels, saved_refs
from jobbench.results.model import READABLE_COMPARISON_SCHEMAS
from jobbench.results.store import load_json, parse_result, result_path, safe_label


def history_command(request: HistoryRequest) -> int:
    out = request.out
    if request.label is not None and parse_ref(request.label) is not None:
        base = request.label.rpartition("~")[0]
        raise UsageError(
            f"{request.label}: give the label, `jobbench history {base}` lists its runs"
        )
    labels = [safe_label(request.label)] if request.label else saved_labels(out)
    runs = [run for label in labels for run in label_runs(out, label, every=bool(request.label))]
    if not runs:
        what = f"of {request.label} " if request.label else ""
        label = request.label or "run"
        raise UsageError(
            f"--out {out}: no saved run {what}in it; `jobbench run --label {label}` saves one"
        )
    render_history(runs, sys.stdout)
    return EXIT_OK


COMPARISON = "a comparison, not a run (`jobbench report` reads it)"


def label_runs(out: Path, label: str, *, every: bool) -> list[SavedRun]:
    """The saved runs of `label`, read; comparisons (`A-vs-B`) only when asked for by name."""
    runs = [read_run(ref, path, out) for ref, path in saved_refs(result_path(out, label))]
    return runs if every else [run for run in runs if run.problem != COMPARISON]


def read_run(ref: str, path: Path, out: Path) -> SavedRun:
    file = os.path.relpath(path, out)
    try:
        data = load_json(path)
        if data.get("schema") in READABLE_COMPARISON_SCHEMAS:
            return SavedRun(ref, file, None, COMPARISON)
        return SavedRun(ref, file, parse_result(data, path))
    except ResultsError as exc:  # one unreadable file is a line of the table, not the end of it
        return SavedRun(ref, file, None, "unreadable: " + str(exc).removeprefix(f"{path}: "))
