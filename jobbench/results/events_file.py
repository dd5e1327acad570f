"""`<label>.events.jsonl`: a run's raw events, one JSON object a line (docs/events.md), with
`scenario` and `rep` keys and times in microseconds from the rep's burst start. The one writer
(the run loop, after every rep) and the one reader (the HTML report)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class EventsWriter:
    """Appends raw events (times in microseconds from the rep's burst start) to a JSONL file."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._handle = path.open("w")

    def write_rep(self, scenario: str, rep: int, events: list[dict[str, Any]]) -> None:
        starts = [e["t"] for e in events if e["ev"] == "submit"]
        zero = min(starts) if starts else (events[0]["t"] if events else 0)
        for event in events:
            row = dict(event)
            for key in ("t", "arrived", "due"):
                if key in row:
                    row[key] = (row[key] - zero) // 1000
            row["scenario"], row["rep"] = scenario, rep
            self._handle.write(json.dumps(row, separators=(",", ":")) + "\n")
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()


def read_rep_events(
    events: Path, wanted: dict[str, int]
) -> tuple[dict[str, list[dict[str, Any]]], int]:
    """The rows of the wanted rep of each scenario (name -> rep number), and how many lines were
    unreadable: a torn last line (Ctrl-C while writing) is skipped, not an error."""
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in wanted}
    skipped = 0
    with events.open() as handle:
        for line in handle:
            try:
                row = json.loads(line)
            except ValueError:
                skipped += line.strip() != ""
                continue
            if isinstance(row, dict) and wanted.get(row.get("scenario", "")) == row.get("rep"):
                rows[row["scenario"]].append(row)
    return {name: r for name, r in rows.items() if r}, skipped
