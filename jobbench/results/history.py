"""Numbered saves: the predecessors of a saved result or comparison, kept in
`<out>/history/<label>/NNNN.json` (+ `NNNN.events.jsonl`), numbered up per label as
pytest-benchmark numbers its saves. A run moves the saved file there when its own first rep is
saved (core/run/loop.py), so a run that produced nothing never replaces one; `LABEL~N` names the run
N back (`LABEL~0`: the current one)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from jobbench.errors import UsageError
from jobbench.results.model import RESULT_SCHEMA

HISTORY = "history"
_REF = re.compile(r"(?P<label>.+)~(?P<back>\d+)")


def events_path(path: Path) -> Path:
    """`<label>.events.jsonl` beside `<label>.json`."""
    return path.with_suffix(".events.jsonl")


def failed_path(path: Path) -> Path:
    """Where a run that ended without a rep saves its document when `path` is worth keeping."""
    return path.with_name(f"{path.stem}.failed.json")


def history_folder(path: Path) -> Path:
    return path.parent / HISTORY / path.stem


def saved_runs(path: Path) -> list[Path]:
    """The predecessors of the file at `path`, oldest first."""
    numbered = [(int(p.stem), p) for p in history_folder(path).glob("*.json") if p.stem.isdigit()]
    return [p for _, p in sorted(numbered)]


def worth_keeping(path: Path) -> bool:
    """Whether a new save must not destroy the file at `path`: anything there but a result
    without a rep (a run that failed first: nothing to lose). A file this jobbench cannot read
    may still be its owner's only copy: kept."""
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return True
    if not isinstance(doc, dict) or doc.get("schema") != RESULT_SCHEMA:
        return True  # a comparison (always the end of a whole run), or not ours to judge
    scenarios = doc.get("scenarios")
    if not isinstance(scenarios, list):
        return True
    return any(not isinstance(s, dict) or s.get("reps") != [] for s in scenarios)


def archive(path: Path) -> Path | None:
    """Move the file at `path` (and its events file) to the next number of its history; the
    archived path, or None when there was nothing worth keeping (then it is simply replaced)."""
    if not worth_keeping(path):
        return None
    folder = history_folder(path)
    folder.mkdir(parents=True, exist_ok=True)
    taken = [int(m.group()) for p in folder.iterdir() if (m := re.match(r"\d+", p.name))]
    target = folder / f"{max(taken, default=0) + 1:04d}.json"
    os.replace(path, target)  # the document first: its events without it would be no run
    events = events_path(path)
    if events.exists():
        os.replace(events, events_path(target))
    return target


def parse_ref(name: str) -> tuple[str, int] | None:
    """`run~2` -> ("run", 2); None when `name` is not a `LABEL~N` reference."""
    match = _REF.fullmatch(name)
    return (match["label"], int(match["back"])) if match else None


def run_back(current: Path, back: int, name: str) -> Path:
    """The saved run `back` runs before `current` (`<out>/<label>.json`): 0 is `current`
    itself, 1 the newest of its history. Out of range: a UsageError saying what exists."""
    if back == 0:
        return current
    runs = saved_runs(current)
    if back <= len(runs):
        return runs[-back]
    label = current.stem
    have = int(current.is_file()) + len(runs)
    if not have:
        raise UsageError(
            f"{name}: no saved run of {label} in {current.parent}; "
            f"run `jobbench run --label {label}` first"
        )
    newest = "0" if current.is_file() else "1"
    refs = f"{label}~{newest}" + (f" to {label}~{len(runs)}" if len(runs) > int(newest) else "")
    runs_word = "run" if have == 1 else "runs"
    raise UsageError(
        f"{name}: {label} has {have} saved {runs_word} ({refs}); see `jobbench history {label}`"
    )


def saved_refs(current: Path) -> list[tuple[str, Path]]:
    """Every saved run of `current`'s label as (the name that reads it, its file), newest
    first: `LABEL~0` (if saved), `LABEL~1`..., then the failed run's `LABEL.failed`."""
    label = current.stem
    refs = [(f"{label}~0", current)] if current.is_file() else []
    runs = saved_runs(current)
    refs += [(f"{label}~{back}", path) for back, path in enumerate(reversed(runs), start=1)]
    failed = failed_path(current)
    if failed.is_file():
        refs.append((failed.stem, failed))
    return refs


def saved_labels(out: Path) -> list[str]:
    """The labels with a saved file in `out` or a history there, sorted."""
    files = {p.stem for p in out.glob("*.json") if not p.name.endswith(".failed.json")}
    failed = {p.name.removesuffix(".failed.json") for p in out.glob("*.failed.json")}
    folders = {p.name for p in (out / HISTORY).glob("*") if p.is_dir()}
    return sorted(files | failed | folders)
