"""`<label>.events.jsonl`: a run's raw events, one JSON object a line (docs/events.md), with
`scenario` and `rep` keys and times in microseconds from the rep's burst start. The one writer
(the run loop, as its reps come) and the one reader (the HTML report)."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from jobbench.procs.signals import interrupts_deferred


class EventsWriter:
    """Appends raw events (times in microseconds from the rep's burst start) to a JSONL file,
    a rep at a time: the file holds whole reps, those the result has."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._handle = path.open("w", encoding="utf-8")

    def write_rep(self, scenario: str, rep: int, events: list[dict[str, Any]]) -> None:
        """All of the rep's lines in one write; a Ctrl-C or SIGTERM meanwhile comes after it,
        so it can never leave part of a rep (the result counts the rep either way)."""
        with interrupts_deferred():
            self._handle.write(rep_lines(scenario, rep, events))
            self._handle.flush()

    def close(self) -> None:
        self._handle.close()


def rep_lines(scenario: str, rep: int, events: list[dict[str, Any]]) -> str:
    """A rep's events as JSONL, times made relative to its burst start."""
    starts = [e.get("intended", e["t"]) for e in events if e["ev"] == "submit"]
    zero = min(starts) if starts else (events[0]["t"] if events else 0)
    lines = []
    for event in events:
        row = dict(event)
        for key in ("t", "arrived", "due", "intended"):
            if key in row:
                row[key] = (row[key] - zero) // 1000
        row["scenario"], row["rep"] = scenario, rep
        lines.append(json.dumps(row, separators=(",", ":")) + "\n")
    return "".join(lines)


def read_rep_events(
    events: Path, wanted: dict[str, int]
) -> tuple[dict[str, list[dict[str, Any]]], int]:
    """The rows of the wanted rep of each scenario (name -> rep number), and how many lines were
    unreadable (each_rep_events)."""
    rows: dict[str, list[dict[str, Any]]] = {}

    def keep(name: str, rep: int, found: list[dict[str, Any]]) -> None:
        rows.setdefault(name, []).extend(found)

    skipped = each_rep_events(events, {name: {rep} for name, rep in wanted.items()}, keep)
    return rows, skipped


def each_rep_events(
    events: Path,
    wanted: Mapping[str, Collection[int]],
    take: Callable[[str, int, list[dict[str, Any]]], None],
) -> int:
    """Hand `take` the rows of each wanted rep (scenario name -> rep numbers) as the file is
    read, one rep at a time (the writer writes a rep's lines together), so a page of many reps
    never holds every rep's rows at once. Returns how many lines were unreadable: a torn last
    line (a file from before reps were written whole, cut by a Ctrl-C) is skipped and counted,
    for the report to say so, not an error."""
    skipped = 0
    key: tuple[str, int] | None = None
    rows: list[dict[str, Any]] = []
    with events.open(encoding="utf-8", errors="replace") as handle:  # a torn byte too
        for line in handle:
            try:
                row = json.loads(line)
            except ValueError:
                skipped += line.strip() != ""
                continue
            found = _rep_of(row)
            if found is None or found[1] not in wanted.get(found[0], ()):
                continue
            if found != key:
                if key is not None:
                    take(*key, rows)
                key, rows = found, []
            rows.append(row)
    if key is not None:
        take(*key, rows)
    return skipped


def _rep_of(row: Any) -> tuple[str, int] | None:
    """A row's (scenario, rep), or None for a line that is not a rep's event."""
    if not isinstance(row, dict):
        return None
    name, rep = row.get("scenario"), row.get("rep")
    return (name, rep) if isinstance(name, str) and isinstance(rep, int) else None
